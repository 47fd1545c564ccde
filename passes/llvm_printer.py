"""The llvm dialect printed straight as LLVM IR text.

xDSL's backend (:mod:`xdsl.backend.llvm.convert`) builds an llvmlite.ir
object for every instruction and then prints them: for MobileNetV2 (8,000
instructions) that is 0.6 s, a tenth of the cold compile.  This printer
writes each operation's line directly, for the operations nnc's lowering
emits, with the meaning xDSL's backend gives them (same instructions, flags,
intrinsic names and attributes; values and blocks get short names of their
own).  Constants (``llvm.mlir.constant``, ``zero``, ``undef``,
``addressof``) are written where they are used, as LLVM IR has no constant
instructions; block arguments become ``phi`` nodes fed by the branches.

Anything else raises :class:`Unprintable`, and
:func:`nnc.passes.pipeline.to_llvm_ir` then uses xDSL's backend for the
module: an operation new to the lowering is still translated, only
slower.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneType,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue


class Unprintable(Exception):
    """An operation, type or attribute this printer does not write."""


_FLOAT_NAMES: dict[type[Attribute], str] = {Float16Type: "half", Float32Type: "float", Float64Type: "double"}
_INTRINSIC_SUFFIX: dict[type[Attribute], str] = {Float16Type: "f16", Float32Type: "f32", Float64Type: "f64"}

_BINARY = {
    llvm.AddOp: "add", llvm.FAddOp: "fadd", llvm.SubOp: "sub", llvm.FSubOp: "fsub", llvm.MulOp: "mul",
    llvm.FMulOp: "fmul", llvm.UDivOp: "udiv", llvm.SDivOp: "sdiv", llvm.FDivOp: "fdiv", llvm.URemOp: "urem",
    llvm.SRemOp: "srem", llvm.FRemOp: "frem", llvm.ShlOp: "shl", llvm.LShrOp: "lshr", llvm.AShrOp: "ashr",
    llvm.AndOp: "and", llvm.OrOp: "or", llvm.XOrOp: "xor",
}  # fmt: skip
_CAST = {
    llvm.TruncOp: "trunc", llvm.ZExtOp: "zext", llvm.SExtOp: "sext", llvm.PtrToIntOp: "ptrtoint",
    llvm.IntToPtrOp: "inttoptr", llvm.BitcastOp: "bitcast", llvm.FPExtOp: "fpext", llvm.FPTruncOp: "fptrunc",
    llvm.SIToFPOp: "sitofp",
}  # fmt: skip
_UNARY_INTRINSIC: dict[type[Operation], str] = {
    llvm.FAbsOp: "llvm.fabs", llvm.FExpOp: "llvm.exp", llvm.FCeilOp: "llvm.ceil", llvm.FSinOp: "llvm.sin",
    llvm.FFloorOp: "llvm.floor", llvm.FExp2Op: "llvm.exp2", llvm.FSqrtOp: "llvm.sqrt", llvm.FLogOp: "llvm.log",
    llvm.FCosOp: "llvm.cos", llvm.FLog2Op: "llvm.log2",
}  # fmt: skip
_BINARY_INTRINSIC: dict[type[Operation], str] = {
    llvm.FPowOp: "llvm.pow", llvm.VectorFMaxOp: "llvm.maxnum", llvm.VectorFMinOp: "llvm.minnum",
    llvm.FCopySignOp: "llvm.copysign",
}  # fmt: skip
_ARG_FLAGS = {
    "llvm.inreg": "inreg", "llvm.nest": "nest", "llvm.noalias": "noalias", "llvm.nocapture": "captures(none)",
    "llvm.nofree": "nofree", "llvm.nonnull": "nonnull", "llvm.noundef": "noundef", "llvm.returned": "returned",
    "llvm.signext": "signext", "llvm.zeroext": "zeroext",
}  # fmt: skip
_ARG_INTS = {
    "llvm.align": "align", "llvm.dereferenceable": "dereferenceable",
    "llvm.dereferenceable_or_null": "dereferenceable_or_null",
}  # fmt: skip


def _hex_double(value: float) -> str:
    """A floating-point literal as LLVM IR (and llvmlite) spell it: the
    value's IEEE double bits in hex, exact for every float and half."""
    return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016x}"


def _round(kind: type, value: float) -> float:
    """``value`` rounded to the precision of ``kind`` (LLVM rejects a float
    or half literal its type cannot hold exactly)."""
    if kind is Float32Type:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    if kind is Float16Type:
        return struct.unpack("<e", struct.pack("<e", value))[0]
    return value


class _Printer:
    def __init__(self) -> None:
        self.types: dict[int, tuple[Attribute, str]] = {}
        self.intrinsics: dict[str, str] = {}  # name -> declaration
        self.functions: set[str] = set()

    # -- types and constants -------------------------------------------------------------------

    def type(self, t: Attribute) -> str:
        # Keyed by identity (the attribute kept alive beside it): hashing a
        # type attribute walks its parameters, and modules share instances.
        hit = self.types.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        s = self._type(t)
        self.types[id(t)] = (t, s)
        return s

    def _type(self, t: Attribute) -> str:
        if isinstance(t, IntegerType):
            return f"i{t.width.data}"
        if type(t) in _FLOAT_NAMES:
            return _FLOAT_NAMES[type(t)]
        if isinstance(t, llvm.LLVMPointerType):
            space = t.addr_space.data if isinstance(t.addr_space, IntAttr) else 0
            return "ptr" if space == 0 else f"ptr addrspace({space})"
        if isinstance(t, VectorType):
            if t.get_num_scalable_dims() or t.get_num_dims() != 1:
                raise Unprintable(f"vector type {t}")
            return f"<{t.get_shape()[0]} x {self.type(t.element_type)}>"
        if isinstance(t, llvm.LLVMArrayType):
            return f"[{t.size.data} x {self.type(t.type)}]"
        if isinstance(t, llvm.LLVMStructType):
            return "{" + ", ".join(self.type(e) for e in t.types.data) + "}"
        if isinstance(t, (llvm.LLVMVoidType, NoneType)):
            return "void"
        raise Unprintable(f"type {t}")

    def scalar(self, t: Attribute, value: int | float) -> str:
        """A scalar literal of type ``t`` (without its type)."""
        if isinstance(t, IntegerType):
            if t.width.data == 1:
                return "true" if value else "false"
            return str(int(value))
        kind = type(t)
        if kind in _FLOAT_NAMES:
            return _hex_double(_round(kind, float(value)))
        raise Unprintable(f"constant of type {t}")

    def constant(self, t: Attribute, value: Attribute) -> str:
        """The literal of ``llvm.mlir.constant`` / a global's initialiser."""
        if isinstance(value, (IntegerAttr, FloatAttr)):
            if isinstance(t, (VectorType, llvm.LLVMArrayType)):
                raise Unprintable("splat constant")
            return self.scalar(t, value.value.data)
        if isinstance(value, DenseIntOrFPElementsAttr):
            if isinstance(t, VectorType):
                elem, (open_, close) = t.element_type, "<>"
            elif isinstance(t, llvm.LLVMArrayType):
                elem, (open_, close) = t.type, "[]"
            else:
                raise Unprintable(f"dense constant of type {t}")
            et = self.type(elem)
            return open_ + ", ".join(f"{et} {self.scalar(elem, v)}" for v in value.get_values()) + close
        raise Unprintable(f"constant {value}")

    def intrinsic(self, name: str, result: str, args: list[str]) -> str:
        """``@"name"``, declared once (an intrinsic used with one signature)."""
        if name not in self.intrinsics:
            self.intrinsics[name] = f'declare {result} @"{name}"({", ".join(args)})'
        return f'@"{name}"'

    def suffix(self, t: Attribute) -> str:
        """The type in an overloaded intrinsic's name (f32, v8f32)."""
        if isinstance(t, VectorType):
            return f"v{t.get_shape()[0]}{self.suffix(t.element_type)}"
        if isinstance(t, IntegerType):
            return f"i{t.width.data}"
        if type(t) in _INTRINSIC_SUFFIX:
            return _INTRINSIC_SUFFIX[type(t)]
        raise Unprintable(f"intrinsic type {t}")

    # -- module ------------------------------------------------------------------------------

    def module(self, module: ModuleOp, noinline: Callable[[llvm.FuncOp], bool]) -> str:
        triple = module.attributes.get("llvm.target_triple")
        if triple is not None and not isinstance(triple, StringAttr):
            raise Unprintable("llvm.target_triple")
        globs: list[str] = []
        funcs: list[str] = []
        for op in module.ops:
            if isinstance(op, llvm.FuncOp):
                self.functions.add(op.sym_name.data)
        for op in module.ops:
            if isinstance(op, llvm.GlobalOp):
                globs.append(self.glob(op))
            elif isinstance(op, llvm.FuncOp):
                funcs.append(self.function(op, noinline(op)))
            else:
                raise Unprintable(op.name)
        head = ['; ModuleID = ""']
        if triple is not None:
            head.append(f'target triple = "{triple.data}"')
        return "\n".join([*head, "", *globs, "", *funcs, *self.intrinsics.values(), ""])

    def glob(self, op: llvm.GlobalOp) -> str:
        if op.addr_space.value.data != 0 or op.section is not None or op.thread_local_ is not None:
            raise Unprintable("global with an address space, section or thread-local")
        linkage = op.linkage.linkage.data
        t = self.type(op.global_type)
        kind = "constant" if op.constant is not None else "global"
        if op.value is None:
            init = "" if linkage in ("external", "extern_weak") else " undef"
        elif isinstance(op.value, StringAttr):
            raise Unprintable("string global")
        else:
            init = " " + self.constant(op.global_type, op.value)
            if linkage == "external":  # an external definition has no linkage keyword
                linkage = ""
        link = f"{linkage} " if linkage else ""
        return f'@"{op.sym_name.data}" = {link}{kind} {t}{init}'

    def function(self, op: llvm.FuncOp, noinline: bool) -> str:
        ft = op.function_type
        ret = self.type(ft.output)
        names: dict[SSAValue, str] = {}
        params = []
        attrs = op.arg_attrs.data if op.arg_attrs is not None else None
        entry = op.body.blocks.first
        for k, t in enumerate(ft.inputs.data):
            words = [self.type(t)]
            if attrs is not None:
                for key, value in attrs[k].data.items():
                    if key in _ARG_FLAGS:
                        words.append(_ARG_FLAGS[key])
                    elif key in _ARG_INTS and isinstance(value, IntegerAttr):
                        words.append(f"{_ARG_INTS[key]}({value.value.data})")
                    elif key.startswith("llvm.") and key not in _ARG_INTS:
                        raise Unprintable(f"argument attribute {key}")
            name = f'%"a{k}"'
            if entry is not None:
                names[entry.args[k]] = name
            params.append(" ".join(words) + " " + name)
        if ft.is_variadic:
            params.append("...")
        fn_attrs = [*(["noinline"] if noinline else []), *function_attributes(op)]
        signature = f'{ret} @"{op.sym_name.data}"({", ".join(params)})' + "".join(f" {w}" for w in fn_attrs)
        if entry is None:
            return f"declare {signature}\n"
        return _Body(self, names).print(op, f"define {signature}")


class _Body:
    """One function body: names of values and blocks, phi operands."""

    def __init__(self, printer: _Printer, names: dict[SSAValue, str]):
        self.p = printer
        self.names = names
        self.blocks: dict[Block, str] = {}

    def ref(self, v: SSAValue) -> str:
        name = self.names.get(v)
        if name is None:
            raise Unprintable(f"value defined by {v.owner}")
        return name

    def typed(self, v: SSAValue) -> str:
        return f"{self.p.type(v.type)} {self.ref(v)}"

    def result(self, op: Operation) -> str:
        return self.names[op.results[0]]

    def print(self, op: llvm.FuncOp, header: str) -> str:
        blocks = list(op.body.blocks)
        for k, b in enumerate(blocks):
            self.blocks[b] = f'"b{k}"'
        incoming: dict[Block, list[list[str]]] = {b: [[] for _ in b.args] for b in blocks[1:]}
        # Every value is named before any is used: a block may use what a
        # block printed after it defines (block order need not follow dominance).
        counter = 0
        for b in blocks:
            for arg in b.args if b is not blocks[0] else ():
                self.names[arg] = f'%"p{counter}"'
                counter += 1
            for o in b.ops:
                if not self.inline(o):
                    for r in o.results:
                        self.names[r] = f'%"v{counter}"'
                        counter += 1
        lines = [header, "{"]
        body: dict[Block, list[str]] = {}
        for b in blocks:
            out: list[str] = []
            for o in b.ops:
                self.instruction(o, b, out, incoming)
            body[b] = out
        for b in blocks:
            lines.append(f"{self.blocks[b]}:")
            for arg, sources in zip(b.args, incoming.get(b, ())):
                if not sources:
                    raise Unprintable("block argument without a predecessor")
                lines.append(f"  {self.names[arg]} = phi {self.p.type(arg.type)} {', '.join(sources)}")
            lines.extend(body[b])
        lines.append("}")
        return "\n".join(lines) + "\n"

    def inline(self, o: Operation) -> bool:
        """Name a constant-like operation's result by its literal (False
        for any other operation)."""
        if type(o) is llvm.ConstantOp:
            self.names[o.result] = self.p.constant(o.result.type, o.value)
        elif type(o) is llvm.ZeroOp:
            self.p.type(o.res.type)
            self.names[o.res] = "zeroinitializer"
        elif type(o) is llvm.UndefOp:
            self.p.type(o.res.type)
            self.names[o.res] = "undef"
        elif type(o) is llvm.AddressOfOp:
            self.names[o.result] = f'@"{o.global_name.root_reference.data}"'
        else:
            return False
        return True

    def edge(self, dest: Block, args, src: Block, incoming: dict[Block, list[list[str]]]) -> str:
        for sources, v in zip(incoming[dest], args):
            sources.append(f"[{self.ref(v)}, %{self.blocks[src]}]")
        return f"label %{self.blocks[dest]}"

    def instruction(self, o: Operation, block: Block, out: list[str], incoming) -> None:
        kind = type(o)
        p = self.p
        if kind in (llvm.ConstantOp, llvm.ZeroOp, llvm.UndefOp, llvm.AddressOfOp):
            return
        if kind in _BINARY:
            flags = _binary_flags(o)
            a, b = o.operands
            out.append(f"  {self.result(o)} = {_BINARY[kind]}{flags} {self.typed(a)}, {self.ref(b)}")
        elif type(o) is llvm.GEPOp:
            ssa = iter(o.ssa_indices)
            idx = [self.typed(next(ssa)) if i == llvm.GEP_USE_SSA_VAL else f"i32 {i}" for i in o.rawConstantIndices.iter_values()]
            inb = " inbounds" if o.inbounds is not None else ""
            out.append(f"  {self.result(o)} = getelementptr{inb} {p.type(o.elem_type)}, {self.typed(o.ptr)}, {', '.join(idx)}")
        elif type(o) is llvm.LoadOp:
            align = f", align {o.alignment.value.data}" if o.alignment else ""
            out.append(f"  {self.result(o)} = load {p.type(o.results[0].type)}, {self.typed(o.ptr)}{align}")
        elif type(o) is llvm.StoreOp:
            if o.volatile_ is not None or o.nontemporal is not None or (o.ordering is not None and o.ordering.value.data):
                raise Unprintable("volatile, non-temporal or atomic store")
            align = f", align {o.alignment.value.data}" if o.alignment else ""
            out.append(f"  store {self.typed(o.value)}, {self.typed(o.ptr)}{align}")
        elif type(o) is llvm.ICmpOp:
            pred = llvm.ICmpPredicateFlag.from_int(o.predicate.value.data).value
            out.append(f"  {self.result(o)} = icmp {pred} {self.typed(o.lhs)}, {self.ref(o.rhs)}")
        elif type(o) is llvm.FCmpOp:
            pred = llvm.FCmpPredicateFlag.from_int(o.predicate.value.data).value
            out.append(f"  {self.result(o)} = fcmp {pred} {self.typed(o.lhs)}, {self.ref(o.rhs)}")
        elif kind in _CAST:
            flags = ""
            if isinstance(o, llvm.IntegerConversionOpOverflow) and o.overflowFlags:
                flags = "".join(f" {f.value}" for f in o.overflowFlags.data)
            elif isinstance(o, llvm.IntegerConversionOpNNeg) and o.non_neg:
                flags = " nneg"
            out.append(f"  {self.result(o)} = {_CAST[kind]}{flags} {self.typed(o.operands[0])} to {p.type(o.results[0].type)}")
        elif type(o) is llvm.SelectOp:
            out.append(f"  {self.result(o)} = select {self.typed(o.cond)}, {self.typed(o.lhs)}, {self.typed(o.rhs)}")
        elif type(o) is llvm.BrOp:
            out.append(f"  br {self.edge(o.successor, o.arguments, block, incoming)}")
        elif type(o) is llvm.CondBrOp:
            then = self.edge(o.then_block, o.then_arguments, block, incoming)
            other = self.edge(o.else_block, o.else_arguments, block, incoming)
            out.append(f"  br {self.typed(o.cond)}, {then}, {other}")
        elif type(o) is llvm.ReturnOp:
            out.append(f"  ret {self.typed(o.operands[0])}" if o.operands else "  ret void")
        elif type(o) is llvm.CallOp:
            self.call(o, out)
        elif type(o) is llvm.CallIntrinsicOp:
            if o.op_bundle_operands or any(o.fastmathFlags.data):
                raise Unprintable("intrinsic call with operand bundles or fast-math flags")
            ret = p.type(o.ress.type) if o.ress is not None else "void"
            name = o.intrin.data
            callee = f'@"{name}"' if name in p.functions else p.intrinsic(name, ret, [p.type(a.type) for a in o.args])
            call = f"call {ret} {callee}({', '.join(self.typed(a) for a in o.args)})"
            out.append(f"  {self.result(o)} = {call}" if o.ress is not None else f"  {call}")
        elif kind in _UNARY_INTRINSIC or kind in _BINARY_INTRINSIC or type(o) is llvm.FMAOp:
            if type(o) is llvm.FMAOp and any(o.fastmathFlags.data):
                raise Unprintable("llvm.intr.fma with fast-math flags")
            t = o.results[0].type
            ts = p.type(t)
            base = _UNARY_INTRINSIC.get(kind) or _BINARY_INTRINSIC.get(kind) or "llvm.fma"
            callee = p.intrinsic(f"{base}.{p.suffix(t)}", ts, [ts] * len(o.operands))
            out.append(f"  {self.result(o)} = call {ts} {callee}({', '.join(self.typed(a) for a in o.operands)})")
        elif type(o) is llvm.FNegOp:
            flags = "".join(f" {f.value}" for f in o.fastmathFlags.data)
            out.append(f"  {self.result(o)} = fneg{flags} {self.typed(o.arg)}")
        elif type(o) is llvm.AllocaOp:
            align = f", align {o.alignment.value.data}" if o.alignment else ""
            out.append(f"  {self.result(o)} = alloca {p.type(o.elem_type)}, {self.typed(o.size)}{align}")
        elif type(o) is llvm.InsertElementOp:
            out.append(f"  {self.result(o)} = insertelement {self.typed(o.vector)}, {self.typed(o.value)}, {self.typed(o.index)}")
        elif type(o) is llvm.ShuffleVectorOp:
            mask = o.mask.get_values()
            m = "<" + ", ".join(f"i32 {v}" for v in mask) + ">"
            out.append(f"  {self.result(o)} = shufflevector {self.typed(o.v1)}, {self.typed(o.v2)}, <{len(mask)} x i32> {m}")
        elif type(o) is llvm.UnreachableOp:
            out.append("  unreachable")
        else:
            raise Unprintable(o.name)

    def call(self, o: llvm.CallOp, out: list[str]) -> None:
        if o.op_bundle_operands or o.op_bundle_sizes.get_values() or o.callee is None:
            raise Unprintable("indirect call or operand bundles")
        ret = self.p.type(o.returned.type) if o.returned is not None else "void"
        fast = ""
        if o.returned is not None:
            t = o.returned.type
            elem = t.element_type if isinstance(t, VectorType) else t
            if type(elem) in _FLOAT_NAMES:
                fast = "".join(f" {f.value}" for f in o.fastmathFlags.data)
        tail = "tail " if o.TailCallKind.data != "none" else ""
        cconv = o.CConv.cconv_name
        args = ", ".join(self.typed(a) for a in o.args)
        call = f'{tail}call{fast} {cconv} {ret} @"{o.callee.string_value()}"({args})'
        out.append(f"  {self.result(o)} = {call}" if o.returned is not None else f"  {call}")


def function_attributes(op: llvm.FuncOp) -> list[str]:
    """The LLVM function attributes named in ``op``'s ``passthrough``
    (``["optsize"]``, as nnc-mark-cold's mark becomes), as LLVM IR writes
    them after the signature.  Unprintable for anything else (MLIR's
    ``["key", "value"]`` pairs: nnc emits none)."""
    if op.passthrough is None:
        return []
    words = []
    for item in op.passthrough.data:
        if not isinstance(item, StringAttr) or not item.data.replace("_", "").isalnum():
            raise Unprintable(f"function attribute {item}")
        words.append(item.data)
    return words


def _binary_flags(o: Operation) -> str:
    if isinstance(o, llvm.ArithmeticBinOpOverflow) and o.overflowFlags:
        return "".join(f" {f.value}" for f in llvm.OverflowAttr.from_int(o.overflowFlags.value.data).data)
    if isinstance(o, llvm.AbstractFloatArithOp) and o.fastmathFlags:
        return "".join(f" {f.value}" for f in o.fastmathFlags.data)
    if isinstance(o, llvm.ArithmeticBinOpExact) and o.is_exact:
        return " exact"
    if isinstance(o, llvm.ArithmeticBinOpDisjoint) and o.is_disjoint:
        return " disjoint"
    return ""


def print_module(module: ModuleOp, noinline: Callable[[llvm.FuncOp], bool]) -> str:
    """``module`` (llvm.func and llvm.mlir.global at the top level) as LLVM
    IR text; ``noinline(func)``: whether the function gets ``noinline``
    (the attributes of its ``passthrough`` follow).
    Unprintable for anything outside what nnc emits."""
    return _Printer().module(module, noinline)
