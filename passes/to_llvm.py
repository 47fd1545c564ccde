"""``convert-nnc-to-llvm``: func/cf/arith/math/memref/vector/index to the llvm dialect.

xDSL ships the pieces for the llvm dialect and its translation to LLVM IR, but
not the conversions from the standard dialects into it.  This pass writes them
for the subset nnc produces: statically shaped memrefs with identity or static
strided layouts, so a memref is just a pointer (``!llvm.ptr``) and every access
becomes one ``getelementptr`` over a linearised index.  ``index`` becomes
``i64``.

The pass rebuilds each ``func.func`` as an ``llvm.func`` instead of rewriting
op by op with patterns: every op changes, block arguments change type, and a
single walk in dominance order (reverse post-order over the CFG) is both simpler
and much faster in Python than a fixed-point rewrite.

Scalar math that LLVM has intrinsics for becomes intrinsics (so that the loop
vectoriser sees them); the rest become calls to the C library (``tanhf``...).

One-dimensional ``vector`` types stay as they are (LLVM vectors), so that
hand-blocked kernels (:mod:`nnc.passes.kernels`) reach LLVM as vector
code: ``vector.load``/``vector.store`` become a ``getelementptr`` to the first
element and an unaligned (element-aligned) vector load/store,
``vector.broadcast`` of a scalar an insertelement + zero-mask shufflevector,
``vector.fma`` ``llvm.fma``, ``vector.shuffle`` a shufflevector and
``vector.extract`` of a constant lane a one-lane shufflevector and a bitcast;
arith on vectors maps like arith on scalars (intrinsics mangled ``v16f32``),
and fast-math flags of float arith (``contract``) carry over.  Functions
marked ``nnc.noalias`` (kernels outlined by nnc-outline-kernels) get
``noalias`` pointer arguments and ``no_inline``; functions marked
``nnc.cold`` (:mod:`nnc.passes.mark_cold`) LLVM's ``optsize`` (``passthrough``).

Parallel loops (the second step of :mod:`nnc.passes.outline_parallel`): a
function marked ``nnc.parallel_body`` gets the thread pool's body signature
``void (i64 begin, i64 end, ptr ctx)`` and loads its other parameters from
``ctx``, slot j (8 bytes) holding parameter j + 2; a call marked
``nnc.parallel_dispatch`` (``@body(0, n, captures...)``) becomes the stores
of the captures into such an array (allocated once, in the caller's entry
block) and ``nnc_parallel_for(@body, ctx, n)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func, llvm, math, memref, vector
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import i32_array, integer_attr, new_op, segment_sizes
from nnc.passes.mark_cold import COLD_ATTR
from nnc.passes.outline_kernels import NOALIAS_ATTR
from nnc.passes.outline_parallel import BODY_ATTR, DISPATCH_ATTR, PARALLEL_FOR

PTR = llvm.LLVMPointerType()
#: the LLVM function attributes of a function marked ``nnc.cold``
COLD_PASSTHROUGH = ArrayAttr([StringAttr("optsize")])


def convert_type(t: Attribute) -> Attribute:
    """index -> i64, memref -> !llvm.ptr, everything else unchanged."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, MemRefType):
        return PTR
    if isinstance(t, IntegerType) and t.signedness.data != builtin.Signedness.SIGNLESS:
        return IntegerType(t.width.data)
    return t


def memref_strides(t: MemRefType) -> tuple[int, list[int]]:
    """Static offset and strides (in elements) of a memref type."""
    shape = list(t.get_shape())
    layout = t.layout
    if isinstance(layout, StridedLayoutAttr):
        strides = [s.data for s in layout.strides.data]  # type: ignore[union-attr]
        off = layout.offset
        return (off.data if hasattr(off, "data") else 0), strides
    if not isinstance(layout, NoneAttr) and layout is not None:
        if isinstance(layout, AffineMapAttr) and layout.data != AffineMap.identity(len(shape)):
            raise PassFailedException(f"convert-nnc-to-llvm: unsupported memref layout {layout}")
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return 0, strides


def _rpo(blocks: list[Block]) -> list[Block]:
    """Reverse post-order of a region's CFG, so defs come before uses."""
    seen: set[Block] = set()
    order: list[Block] = []

    def visit(b: Block) -> None:
        stack = [(b, iter(_successors(b)))]
        seen.add(b)
        while stack:
            blk, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                order.append(blk)
                stack.pop()
            elif nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(_successors(nxt))))

    visit(blocks[0])
    order.reverse()
    return order + [b for b in blocks if b not in seen]


def _successors(b: Block) -> list[Block]:
    last = b.last_op
    return list(last.successors) if last is not None else []


# -- llvm op builders ------------------------------------------------------------------
# Each builds exactly the op (operands, results, properties) that the llvm op
# class's own constructor builds, through nnc.passes.build.new_op: the generic
# IRDL constructor and fresh default attributes were most of this pass's time.

#: properties of the llvm ops built here, shared (attributes are immutable)
_NO_PROPS: dict[str, Attribute] = {}
_NO_OVERFLOW = {"overflowFlags": integer_attr(0, 32)}
_NO_FASTMATH = llvm.FastMathAttr(None)
_ORDERING = integer_attr(0, i64)
_UNIT = UnitAttr()
_CCC = llvm.CallingConventionAttr("ccc")
_NO_BUNDLES = i32_array(())


@functools.lru_cache(maxsize=64)
def _fastmath_props(flags: frozenset[llvm.FastMathFlag]) -> dict[str, Attribute]:
    """The properties of float arithmetic with these fast-math flags."""
    return {"fastmathFlags": llvm.FastMathAttr(flags) if flags else _NO_FASTMATH}


@functools.lru_cache(maxsize=1024)
def _symbol(name: str) -> SymbolRefAttr:
    return SymbolRefAttr(name)


def _binop(cls: type[Operation], a: SSAValue, b: SSAValue, props: Mapping[str, Attribute] = _NO_PROPS) -> Operation:
    """A two-operand llvm op whose result has the operands' type."""
    return new_op(cls, (a, b), (a.type,), props)


def _add(a: SSAValue, b: SSAValue) -> Operation:
    return _binop(llvm.AddOp, a, b, _NO_OVERFLOW)


def _mul(a: SSAValue, b: SSAValue) -> Operation:
    return _binop(llvm.MulOp, a, b, _NO_OVERFLOW)


def _cast_op(cls: type[Operation], v: SSAValue, to: Attribute) -> Operation:
    """A one-operand conversion (sext, trunc, sitofp, bitcast, ...)."""
    return new_op(cls, (v,), (to,), _CAST_PROPS.get(cls, _NO_PROPS))


#: the properties the conversion ops' constructors give (the others: none)
_CAST_PROPS: dict[type[Operation], dict[str, Attribute]] = {
    llvm.TruncOp: {"overflowFlags": llvm.OverflowAttr(None)},
}


# The llvm-dialect builders below make the same operations as xDSL's
# constructors with a third of their cost (:func:`nnc.passes.build.new_op`);
# nnc-add-entry-point builds ``nnc_run`` with them too.


def llvm_constant(value: Attribute, t: Attribute) -> Operation:
    return new_op(llvm.ConstantOp, (), (t,), {"value": value})


def llvm_gep(ptr: SSAValue, indices: list[int | SSAValue], elem: Attribute) -> Operation:
    """``getelementptr inbounds elem, ptr, indices`` (constant and SSA indices,
    as ``GEPOp.from_mixed_indices``)."""
    raw = tuple(llvm.GEP_USE_SSA_VAL if isinstance(i, SSAValue) else i for i in indices)
    props = {"rawConstantIndices": i32_array(raw), "elem_type": elem, "noWrapFlags": _NO_OVERFLOW["overflowFlags"], "inbounds": _UNIT}
    return new_op(llvm.GEPOp, (ptr, *[i for i in indices if isinstance(i, SSAValue)]), (PTR,), props)


def llvm_load(ptr: SSAValue, t: Attribute, alignment: int | None = None) -> Operation:
    props: dict[str, Attribute] = {"ordering": _ORDERING}
    if alignment is not None:
        props["alignment"] = integer_attr(alignment, i64)
    return new_op(llvm.LoadOp, (ptr,), (t,), props)


def llvm_store(value: SSAValue, ptr: SSAValue, alignment: int | None = None) -> Operation:
    props: dict[str, Attribute] = {"ordering": _ORDERING}
    if alignment is not None:
        props["alignment"] = integer_attr(alignment, i64)
    return new_op(llvm.StoreOp, (value, ptr), (), props)


def llvm_call(callee: str, args: Sequence[SSAValue], ret: Attribute | None = None) -> Operation:
    props = {
        "callee": _symbol(callee),
        "fastmathFlags": _NO_FASTMATH,
        "CConv": _CCC,
        "op_bundle_sizes": _NO_BUNDLES,
        "operandSegmentSizes": segment_sizes(len(args), 0),
    }
    return new_op(llvm.CallOp, args, () if ret is None else (ret,), props)


def _call_intrinsic(name: str | StringAttr, args: Sequence[SSAValue], results: Sequence[Attribute]) -> Operation:
    props = {
        "intrin": StringAttr(name) if isinstance(name, str) else name,
        "op_bundle_sizes": _NO_BUNDLES,
        "operandSegmentSizes": segment_sizes(len(args), 0),
    }
    return new_op(llvm.CallIntrinsicOp, args, results, props)


def _icmp(pred: str, a: SSAValue, b: SSAValue) -> Operation:
    t = a.type
    result = VectorType(i1, t.shape) if isinstance(t, VectorType) else i1
    return new_op(llvm.ICmpOp, (a, b), (result,), {"predicate": _ICMP_PREDICATES[pred]})


def _fma(a: SSAValue, b: SSAValue, acc: SSAValue) -> Operation:
    return new_op(llvm.FMAOp, (a, b, acc), (a.type,), _fastmath_props(frozenset()))


def _select(cond: SSAValue, a: SSAValue, b: SSAValue) -> Operation:
    return new_op(llvm.SelectOp, (cond, a, b), (a.type,))


def _shuffle_op(v1: SSAValue, v2: SSAValue, mask: tuple[int, ...], t: Attribute) -> Operation:
    return new_op(llvm.ShuffleVectorOp, (v1, v2), (t,), {"mask": i32_array(mask)})


_INT_BIN: dict[type[Operation], tuple[type[Operation], Mapping[str, Attribute]]] = {
    arith.AddiOp: (llvm.AddOp, _NO_OVERFLOW),
    arith.SubiOp: (llvm.SubOp, _NO_OVERFLOW),
    arith.MuliOp: (llvm.MulOp, _NO_OVERFLOW),
    arith.DivSIOp: (llvm.SDivOp, _NO_PROPS),
    arith.DivUIOp: (llvm.UDivOp, _NO_PROPS),
    arith.RemSIOp: (llvm.SRemOp, _NO_PROPS),
    arith.RemUIOp: (llvm.URemOp, _NO_PROPS),
    arith.AndIOp: (llvm.AndOp, _NO_PROPS),
    arith.OrIOp: (llvm.OrOp, _NO_PROPS),
    arith.XOrIOp: (llvm.XOrOp, _NO_PROPS),
    arith.ShLIOp: (llvm.ShlOp, _NO_OVERFLOW),
    arith.ShRSIOp: (llvm.AShrOp, _NO_PROPS),
    arith.ShRUIOp: (llvm.LShrOp, _NO_PROPS),
}

#: float arithmetic: its fast-math flags (``contract``: a multiply and an
#: add LLVM may fuse) carry over
_FLOAT_BIN: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}

#: math ops that are LLVM intrinsics (name without the type suffix)
_FLOAT_INTRINSIC: dict[type[Operation], str] = {
    math.ExpOp: "llvm.exp",
    math.LogOp: "llvm.log",
    math.SqrtOp: "llvm.sqrt",
    math.FloorOp: "llvm.floor",
    math.CeilOp: "llvm.ceil",
    math.AbsFOp: "llvm.fabs",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.Exp2Op: "llvm.exp2",
    math.Log2Op: "llvm.log2",
    math.PowFOp: "llvm.pow",
    math.CopySignOp: "llvm.copysign",
    math.RoundEvenOp: "llvm.roundeven",
    math.TruncOp: "llvm.trunc",
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
}

_FSUFFIX: dict[Attribute, str] = {builtin.f16: "f16", builtin.f32: "f32", builtin.f64: "f64"}


def _type_suffix(t: Attribute) -> str:
    """Intrinsic name mangling of a float or 1-D float vector type: f32, v16f32."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{_FSUFFIX[t.element_type]}"
    return _FSUFFIX[t]

#: math ops lowered to C library calls: op -> (f32 name, f16/f64 via f32)
_LIBM: dict[type[Operation], str] = {
    math.TanhOp: "tanhf",
    math.ErfOp: "erff",
    math.AtanOp: "atanf",
    math.Atan2Op: "atan2f",
    math.Log1pOp: "log1pf",
    math.ExpM1Op: "expm1f",
    math.Log10Op: "log10f",
    math.TanOp: "tanf",
    math.RoundOp: "roundf",
}

_ICMP_CODES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_FCMP_CODES = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
]  # fmt: skip
#: llvm.icmp's predicate property per predicate name
_ICMP_PREDICATES = {p: integer_attr(list(llvm.ICmpPredicateFlag).index(llvm.ICmpPredicateFlag(p)), 64) for p in _ICMP_CODES}


@dataclass
class _FuncConverter:
    """Converts one func.func into an llvm.func."""

    module: ModuleOp
    externs: dict[str, llvm.FuncOp]

    def __post_init__(self) -> None:
        self.vmap: dict[SSAValue, SSAValue] = {}
        self.out: list[Operation] = []
        #: stack slots of parallel dispatches, placed at the top of the entry
        #: block (an alloca in a loop would grow the stack at every iteration)
        self.entry_ops: list[Operation] = []
        #: each distinct constant of the function, defined once in its entry
        #: block (arith.constant is emitted at each use: a per-use copy
        #: multiplies the operations every later stage carries)
        self.constants: dict[tuple[Attribute, Attribute], SSAValue] = {}

    # -- helpers ---------------------------------------------------------------
    def emit(self, op: Operation) -> Operation:
        self.out.append(op)
        return op

    def v(self, value: SSAValue) -> SSAValue:
        return self.vmap[value]

    def constant(self, value: Attribute, t: Attribute) -> SSAValue:
        """The llvm constant ``value`` of type ``t``, shared by the whole
        function (defined at the top of its entry block, which dominates
        every use)."""
        key = (value, t)
        known = self.constants.get(key)
        if known is None:
            op = llvm_constant(value, t)
            self.entry_ops.append(op)
            known = self.constants[key] = op.results[0]
        return known

    def const_i64(self, n: int) -> SSAValue:
        return self.constant(integer_attr(n, i64), i64)

    def extern(self, name: str, ret: Attribute, args: list[Attribute]) -> str:
        if name not in self.externs:
            fn = llvm.FuncOp(name, llvm.LLVMFunctionType(args, ret), linkage=llvm.LinkageAttr("external"))
            self.externs[name] = fn
        return name

    def element_ptr(self, mem: SSAValue, indices: list[SSAValue]) -> tuple[SSAValue, Attribute]:
        """The address of ``mem[indices]``.  Constant indices (a size-1 loop
        that nnc-simplify-trivial-loops inlined leaves index 0) are folded
        into the static offset: the same address with fewer operations for
        every later stage to carry."""
        t = mem.type
        assert isinstance(t, MemRefType)
        offset, strides = memref_strides(t)
        elem = convert_type(t.element_type)
        lin: SSAValue | None = None
        for idx, stride in zip(indices, strides, strict=True):
            known = _constant_index(idx)
            if known is not None:
                offset += known * stride
                continue
            term = self.v(idx)
            if stride != 1:
                term = self.emit(_mul(term, self.const_i64(stride))).results[0]
            lin = term if lin is None else self.emit(_add(lin, term)).results[0]
        if offset:
            static = self.const_i64(offset)
            lin = static if lin is None else self.emit(_add(static, lin)).results[0]
        if lin is None:
            return self.v(mem), elem
        gep = self.emit(llvm_gep(self.v(mem), [lin], elem))
        return gep.results[0], elem

    # -- the walk ----------------------------------------------------------------
    def convert(self, fn: func.FuncOp) -> llvm.FuncOp:
        ftype = fn.function_type
        outputs = [convert_type(t) for t in ftype.outputs.data]
        if len(outputs) > 1:
            raise PassFailedException(
                f"convert-nnc-to-llvm: @{fn.sym_name.data} has {len(outputs)} results; "
                "functions return at most one value"
            )
        ret = outputs[0] if outputs else llvm.LLVMVoidType()
        parallel_body = BODY_ATTR in fn.attributes
        if parallel_body:
            lty = llvm.LLVMFunctionType([i64, i64, PTR], ret)
        else:
            lty = llvm.LLVMFunctionType([convert_type(t) for t in ftype.inputs.data], ret)
        public = fn.sym_visibility is None or fn.sym_visibility.data == "public"
        linkage = llvm.LinkageAttr("external" if public else "internal")
        if fn.is_declaration:
            return llvm.FuncOp(fn.sym_name.data, lty, linkage=linkage)
        old_blocks = list(fn.body.blocks)
        new_blocks = {b: Block(arg_types=[convert_type(a.type) for a in b.args]) for b in old_blocks}
        entry = old_blocks[0]
        if parallel_body:
            new_blocks[entry] = Block(arg_types=[i64, i64, PTR])
        for b, nb in new_blocks.items():
            for a, na in zip(b.args, nb.args):
                self.vmap[a] = na
        self.block_map = new_blocks
        for b in _rpo(old_blocks):
            self.out = []
            if parallel_body and b is entry:  # parameters from ctx first
                self._unpack_context(entry)
            for op in b.ops:
                self.convert_op(op)
            new_blocks[b].add_ops(self.out)
        # Constants only folded into element offsets (constant indices) are left out.
        entry_ops = [o for o in self.entry_ops if not isinstance(o, llvm.ConstantOp) or o.results[0].uses]
        if entry_ops:
            first = new_blocks[entry].first_op
            assert first is not None
            new_blocks[entry].insert_ops_before(entry_ops, first)
        body = Region([new_blocks[b] for b in old_blocks])
        new = llvm.FuncOp(fn.sym_name.data, lty, linkage=linkage, body=body)
        kernel = NOALIAS_ATTR in fn.attributes
        if fn.sym_name.data == "main" or kernel:
            # The runtime guarantees that no two buffers passed to the model
            # overlap (nnc.Execution checks outputs against every other
            # buffer), so LLVM may vectorise without runtime alias checks.
            # Outlined kernels read some buffers and write another, never
            # one they read.
            new.arg_attrs = ArrayAttr(
                [DictionaryAttr({"llvm.noalias": UnitAttr()} if t == PTR else {}) for t in lty.inputs.data]
            )
        if kernel:
            # Shared kernels stay functions: inlined at every call site they
            # would multiply the code LLVM compiles (to_llvm_ir passes this on).
            new.no_inline = UnitAttr()
        if COLD_ATTR in fn.attributes:
            new.passthrough = COLD_PASSTHROUGH
        return new

    def convert_op(self, op: Operation) -> None:
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        int_bin = _INT_BIN.get(type(op))
        if int_bin is not None:
            cls, props = int_bin
            new = self.emit(_binop(cls, self.v(op.operands[0]), self.v(op.operands[1]), props))
            self.vmap[op.results[0]] = new.results[0]
            return
        float_bin = _FLOAT_BIN.get(type(op))
        if float_bin is not None:
            flags = op.fastmath.data  # type: ignore[attr-defined]
            new = self.emit(_binop(float_bin, self.v(op.operands[0]), self.v(op.operands[1]), _fastmath_props(flags)))
            self.vmap[op.results[0]] = new.results[0]
            return
        if type(op) in _FLOAT_INTRINSIC:
            self.vmap[op.results[0]] = self.intrinsic(_FLOAT_INTRINSIC[type(op)], op)
            return
        if type(op) in _LIBM:
            self._libm(op, _LIBM[type(op)])
            return
        raise PassFailedException(f"convert-nnc-to-llvm: cannot lower {op.name}")

    # -- parallel loops (nnc.passes.outline_parallel) -------------------------------------
    def slot(self, ctx: SSAValue, j: int) -> SSAValue:
        """The address of 8-byte slot ``j`` of a parallel body's context."""
        return self.emit(llvm_gep(ctx, [j], i64)).results[0]

    def _unpack_context(self, entry: Block) -> None:
        """A parallel body's parameters after (begin, end), loaded from ctx."""
        ctx = self.block_map[entry].args[2]
        for j, a in enumerate(entry.args[2:]):
            t = convert_type(a.type)
            self.vmap[a] = self.emit(llvm_load(self.slot(ctx, j), t)).results[0]

    def dispatch(self, op: func.CallOp) -> None:
        """``@body(0, n, captures...)`` -> captures stored into a stack array,
        ``nnc_parallel_for(@body, ctx, n)``."""
        begin = op.arguments[0].owner
        if not (isinstance(begin, arith.ConstantOp) and isinstance(begin.value, IntegerAttr) and begin.value.value.data == 0):
            raise PassFailedException("convert-nnc-to-llvm: a parallel dispatch must start at iteration 0")
        captured = list(op.arguments[2:])
        size = llvm.ConstantOp(IntegerAttr(max(1, len(captured)), i64), i64)
        # Slots of pointer type: 8 bytes on the 64-bit targets nnc supports,
        # and an untyped pointer for xDSL's translation, so that stores of any
        # type into them type-check.
        alloca = llvm.AllocaOp(size, PTR, alignment=8)
        self.entry_ops += [size, alloca]
        ctx = alloca.results[0]
        for j, v in enumerate(captured):
            self.emit(llvm_store(self.v(v), self.slot(ctx, j)))
        body = self.emit(new_op(llvm.AddressOfOp, (), (PTR,), {"global_name": _symbol(op.callee.root_reference.data)})).results[0]
        self.extern(PARALLEL_FOR, llvm.LLVMVoidType(), [PTR, PTR, i64])
        self.emit(llvm_call(PARALLEL_FOR, (body, ctx, self.v(op.arguments[1]))))

    def intrinsic(self, name: str, op: Operation) -> SSAValue:
        """Call the type-mangled float intrinsic ``name`` on ``op``'s operands."""
        t = convert_type(op.results[0].type)
        full = f"{name}.{_type_suffix(t)}"
        call = self.emit(_call_intrinsic(full, [self.v(o) for o in op.operands], [t]))
        return call.results[0]

    # -- individual conversions -----------------------------------------------------
    def _libm(self, op: Operation, name: str) -> None:
        t = convert_type(op.results[0].type)
        args = [self.v(o) for o in op.operands]
        f32 = builtin.f32
        if t != f32:  # compute half/double through float
            args = [self._fcast(a, f32) for a in args]
        self.extern(name, f32, [f32] * len(args))
        call = self.emit(llvm_call(name, args, f32))
        res = call.results[0]
        self.vmap[op.results[0]] = res if t == f32 else self._fcast(res, t)

    def _fcast(self, v: SSAValue, to: Attribute) -> SSAValue:
        fw: dict[Attribute, int] = {builtin.f16: 16, builtin.f32: 32, builtin.f64: 64}
        if fw[v.type] < fw[to]:
            return self.emit(_cast_op(llvm.FPExtOp, v, to)).results[0]
        if fw[v.type] > fw[to]:
            return self.emit(_cast_op(llvm.FPTruncOp, v, to)).results[0]
        return v


def _constant_index(value: SSAValue) -> int | None:
    """The value of an ``arith.constant`` index or integer, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _h_constant(c: _FuncConverter, op: arith.ConstantOp) -> None:
    t = convert_type(op.result.type)
    value: Attribute = op.value
    if isinstance(value, IntegerAttr):
        value = integer_attr(value.value.data, t)
    elif isinstance(value, FloatAttr) and value.type != t:
        assert isinstance(t, AnyFloat)
        value = FloatAttr(value.value.data, t)
    c.vmap[op.result] = c.constant(value, t)


def _h_cmpi(c: _FuncConverter, op: arith.CmpiOp) -> None:
    pred = _ICMP_CODES[op.predicate.value.data]
    c.vmap[op.result] = c.emit(_icmp(pred, c.v(op.lhs), c.v(op.rhs))).results[0]


def _h_cmpf(c: _FuncConverter, op: arith.CmpfOp) -> None:
    pred = _FCMP_CODES[op.predicate.value.data]
    props = {"predicate": integer_attr(llvm.FCmpPredicateFlag(pred).to_int(), i64)}
    c.vmap[op.result] = c.emit(new_op(llvm.FCmpOp, (c.v(op.lhs), c.v(op.rhs)), (i1,), props)).results[0]


def _h_select(c: _FuncConverter, op: arith.SelectOp) -> None:
    c.vmap[op.result] = c.emit(_select(c.v(op.cond), c.v(op.lhs), c.v(op.rhs))).results[0]


def _int_width(t: Attribute) -> int:
    t = convert_type(t)
    assert isinstance(t, IntegerType)
    return t.width.data


def _h_int_resize(c: _FuncConverter, op: Operation, signed: bool) -> None:
    src, dst = op.operands[0], op.results[0]
    to = convert_type(dst.type)
    ws, wd = _int_width(src.type), _int_width(to)
    v = c.v(src)
    if wd > ws:
        v = c.emit(_cast_op(llvm.SExtOp if signed else llvm.ZExtOp, v, to)).results[0]
    elif wd < ws:
        v = c.emit(_cast_op(llvm.TruncOp, v, to)).results[0]
    c.vmap[dst] = v


def _h_index_cast(c: _FuncConverter, op: arith.IndexCastOp) -> None:
    _h_int_resize(c, op, signed=True)


def _h_sitofp(c: _FuncConverter, op: arith.SIToFPOp) -> None:
    c.vmap[op.result] = c.emit(_cast_op(llvm.SIToFPOp, c.v(op.input), convert_type(op.result.type))).results[0]


def _h_uitofp(c: _FuncConverter, op: arith.UIToFPOp) -> None:
    # llvm has no uitofp op in xDSL: widen with zext, then sitofp is exact.
    v = c.emit(_cast_op(llvm.ZExtOp, c.v(op.input), builtin.IntegerType(_int_width(op.input.type) * 2))).results[0]
    c.vmap[op.result] = c.emit(_cast_op(llvm.SIToFPOp, v, convert_type(op.result.type))).results[0]


def _fp_to_int(c: _FuncConverter, op: Operation, signed: bool) -> None:
    # The saturating intrinsics are well defined on every input (NaN -> 0),
    # unlike plain fptosi, which is poison out of range.
    src = c.v(op.operands[0])
    to = convert_type(op.results[0].type)
    fname = _FSUFFIX[src.type]
    name = f"llvm.fpto{'s' if signed else 'u'}i.sat.i{_int_width(to)}.{fname}"
    c.vmap[op.results[0]] = c.emit(_call_intrinsic(name, [src], [to])).results[0]


def _h_ext_trunc_f(c: _FuncConverter, op: Operation) -> None:
    c.vmap[op.results[0]] = c._fcast(c.v(op.operands[0]), convert_type(op.results[0].type))


def _h_bitcast(c: _FuncConverter, op: arith.BitcastOp) -> None:
    c.vmap[op.result] = c.emit(_cast_op(llvm.BitcastOp, c.v(op.operands[0]), convert_type(op.result.type))).results[0]


def _h_minmax(c: _FuncConverter, op: Operation) -> None:
    """Integer min/max: compare and select."""
    a, b = c.v(op.operands[0]), c.v(op.operands[1])
    preds: dict[type[Operation], str] = {arith.MaxSIOp: "sgt", arith.MinSIOp: "slt", arith.MaxUIOp: "ugt", arith.MinUIOp: "ult"}
    pred = preds[type(op)]
    cond = c.emit(_icmp(pred, a, b)).results[0]
    c.vmap[op.results[0]] = c.emit(_select(cond, a, b)).results[0]


def _h_floordiv(c: _FuncConverter, op: Operation) -> None:
    """floordivsi (from lower-affine): sdiv rounded toward -inf."""
    a, b = c.v(op.operands[0]), c.v(op.operands[1])
    t = a.type
    q = c.emit(_binop(llvm.SDivOp, a, b)).results[0]
    r = c.emit(_binop(llvm.SRemOp, a, b)).results[0]
    zero = c.emit(llvm_constant(integer_attr(0, t), t)).results[0]
    has_rem = c.emit(_icmp("ne", r, zero)).results[0]
    # signs differ <=> (r xor b) < 0
    x = c.emit(_binop(llvm.XOrOp, r, b)).results[0]
    neg = c.emit(_icmp("slt", x, zero)).results[0]
    adjust = c.emit(_binop(llvm.AndOp, has_rem, neg)).results[0]
    one = c.emit(llvm_constant(integer_attr(1, t), t)).results[0]
    q1 = c.emit(_binop(llvm.SubOp, q, one, _NO_OVERFLOW)).results[0]
    c.vmap[op.results[0]] = c.emit(_select(adjust, q1, q)).results[0]


def _h_negf(c: _FuncConverter, op: arith.NegfOp) -> None:
    a = c.v(op.operand)
    c.vmap[op.result] = c.emit(new_op(llvm.FNegOp, (a,), (a.type,), _fastmath_props(frozenset()))).results[0]


def _h_rsqrt(c: _FuncConverter, op: math.RsqrtOp) -> None:
    t = convert_type(op.result.type)
    assert isinstance(t, AnyFloat)
    s = c.emit(llvm.FSqrtOp(c.v(op.operand))).results[0]
    one = c.emit(llvm.ConstantOp(FloatAttr(1.0, t), t)).results[0]
    c.vmap[op.result] = c.emit(llvm.FDivOp(one, s)).results[0]


def _h_fma(c: _FuncConverter, op: math.FmaOp) -> None:
    c.vmap[op.result] = c.emit(_fma(c.v(op.a), c.v(op.b), c.v(op.c))).results[0]


def _h_load(c: _FuncConverter, op: memref.LoadOp) -> None:
    ptr, elem = c.element_ptr(op.memref, list(op.indices))
    c.vmap[op.res] = c.emit(llvm_load(ptr, elem)).results[0]


def _h_store(c: _FuncConverter, op: memref.StoreOp) -> None:
    ptr, _ = c.element_ptr(op.memref, list(op.indices))
    c.emit(llvm_store(c.v(op.value), ptr))


def _h_view(c: _FuncConverter, op: memref.ViewOp) -> None:
    # memref.view %buf[%byte_shift][] : memref<Nxi8> to memref<...>
    gep = llvm_gep(c.v(op.source), [c.v(op.byte_shift)], builtin.i8)
    c.vmap[op.results[0]] = c.emit(gep).results[0]


def _h_alias(c: _FuncConverter, op: Operation) -> None:
    """Ops that only change a memref's type: the pointer is the same."""
    c.vmap[op.results[0]] = c.v(op.operands[0])


def _h_subview(c: _FuncConverter, op: memref.SubviewOp) -> None:
    # Static subview: the result type's layout carries the offset.
    c.vmap[op.results[0]] = c.v(op.source)


def _h_get_global(c: _FuncConverter, op: memref.GetGlobalOp) -> None:
    c.vmap[op.memref] = c.emit(new_op(llvm.AddressOfOp, (), (PTR,), {"global_name": _symbol(op.name_.root_reference.data)})).results[0]


def _h_return(c: _FuncConverter, op: func.ReturnOp) -> None:
    c.emit(new_op(llvm.ReturnOp, (c.v(op.arguments[0]),) if op.arguments else ()))


def _h_call(c: _FuncConverter, op: func.CallOp) -> None:
    if DISPATCH_ATTR in op.attributes:
        c.dispatch(op)
        return
    rets = [convert_type(t) for t in op.result_types]
    call = c.emit(llvm_call(op.callee.root_reference.data, [c.v(a) for a in op.arguments], rets[0] if rets else None))
    for r, nr in zip(op.results, call.results):
        c.vmap[r] = nr


def _h_br(c: _FuncConverter, op: cf.BranchOp) -> None:
    c.emit(new_op(llvm.BrOp, [c.v(a) for a in op.arguments], successors=(c.block_map[op.successor],)))


def _h_cond_br(c: _FuncConverter, op: cf.ConditionalBranchOp) -> None:
    then_args = [c.v(a) for a in op.then_arguments]
    else_args = [c.v(a) for a in op.else_arguments]
    props = {"operandSegmentSizes": segment_sizes(1, len(then_args), len(else_args))}
    successors = (c.block_map[op.then_block], c.block_map[op.else_block])
    c.emit(new_op(llvm.CondBrOp, (c.v(op.cond), *then_args, *else_args), (), props, successors=successors))


def _h_cast(c: _FuncConverter, op: UnrealizedConversionCastOp) -> None:
    for src, res in zip(op.inputs, op.outputs):
        c.vmap[res] = c.v(src)


# -- vector ---------------------------------------------------------------------------


def _elem_bytes(t: Attribute) -> int:
    width = t.bitwidth if hasattr(t, "bitwidth") else 32
    return max(1, width // 8)


def _shuffle(c: _FuncConverter, v1: SSAValue, v2: SSAValue, mask: list[int]) -> SSAValue:
    assert isinstance(v1.type, VectorType)
    vt = VectorType(v1.type.element_type, [len(mask)])
    return c.emit(_shuffle_op(v1, v2, tuple(mask), vt)).results[0]


def _h_vector_load(c: _FuncConverter, op: vector.LoadOp) -> None:
    ptr, elem = c.element_ptr(op.base, list(op.indices))
    c.vmap[op.result] = c.emit(llvm_load(ptr, op.result.type, _elem_bytes(elem))).results[0]


def _h_vector_store(c: _FuncConverter, op: vector.StoreOp) -> None:
    ptr, elem = c.element_ptr(op.base, list(op.indices))
    c.emit(llvm_store(c.v(op.vector), ptr, _elem_bytes(elem)))


def _h_vector_broadcast(c: _FuncConverter, op: vector.BroadcastOp) -> None:
    vt = op.vector.type
    if isinstance(op.source.type, VectorType):
        raise PassFailedException("convert-nnc-to-llvm: vector.broadcast of a vector is not supported")
    undef = c.emit(new_op(llvm.UndefOp, (), (vt,))).results[0]
    zero = c.emit(llvm_constant(integer_attr(0, i32), i32)).results[0]
    one = c.emit(new_op(llvm.InsertElementOp, (undef, c.v(op.source), zero), (vt,))).results[0]
    c.vmap[op.vector] = _shuffle(c, one, one, [0] * vt.get_shape()[0])


def _h_vector_fma(c: _FuncConverter, op: vector.FMAOp) -> None:
    c.vmap[op.res] = c.emit(_fma(c.v(op.lhs), c.v(op.rhs), c.v(op.acc))).results[0]


def _h_vector_shuffle(c: _FuncConverter, op: vector.ShuffleOp) -> None:
    c.vmap[op.result] = _shuffle(c, c.v(op.v1), c.v(op.v2), list(op.mask.get_values()))


def _h_vector_extract(c: _FuncConverter, op: vector.ExtractOp) -> None:
    """Lane ``k`` (a constant) of a 1-D vector: a one-lane shuffle, bitcast to
    the scalar (xDSL's llvm dialect has no extractelement)."""
    if op.dynamic_position or len(op.static_position.get_values()) != 1:
        raise PassFailedException("convert-nnc-to-llvm: only vector.extract of one constant lane")
    (k,) = op.static_position.get_values()
    src = c.v(op.vector)
    lane = _shuffle(c, src, src, [k])
    c.vmap[op.result] = c.emit(_cast_op(llvm.BitcastOp, lane, op.result.type)).results[0]


def _h_llvm_cast(c: _FuncConverter, op: Operation) -> None:
    """``llvm.sext`` / ``llvm.zext`` / ``llvm.trunc`` already in the input
    (integer vector casts of the quantised kernels, which arith cannot
    express on vectors): the same op on the converted operand."""
    c.vmap[op.results[0]] = c.emit(_cast_op(type(op), c.v(op.operands[0]), op.results[0].type)).results[0]


def _h_llvm_intrinsic(c: _FuncConverter, op: llvm.CallIntrinsicOp) -> None:
    """A target intrinsic already in the input (AArch64 ``sdot`` of the int8
    kernels' sdot form): the same call on the converted operands."""
    call = c.emit(_call_intrinsic(op.intrin, [c.v(a) for a in op.args], [convert_type(r.type) for r in op.results]))
    for old, new in zip(op.results, call.results, strict=True):
        c.vmap[old] = new


#: each handler takes operations of its key's class
_HANDLERS: dict[type[Operation], Callable[[_FuncConverter, Any], None]] = {
    arith.ConstantOp: _h_constant,
    arith.CmpiOp: _h_cmpi,
    arith.CmpfOp: _h_cmpf,
    arith.SelectOp: _h_select,
    arith.IndexCastOp: _h_index_cast,
    arith.ExtSIOp: lambda c, op: _h_int_resize(c, op, True),
    arith.ExtUIOp: lambda c, op: _h_int_resize(c, op, False),
    arith.TruncIOp: lambda c, op: _h_int_resize(c, op, True),
    arith.SIToFPOp: _h_sitofp,
    arith.UIToFPOp: _h_uitofp,
    arith.FPToSIOp: lambda c, op: _fp_to_int(c, op, True),
    arith.FPToUIOp: lambda c, op: _fp_to_int(c, op, False),
    arith.ExtFOp: _h_ext_trunc_f,
    arith.BitcastOp: _h_bitcast,
    arith.TruncFOp: _h_ext_trunc_f,
    arith.MaxSIOp: _h_minmax,
    arith.MinSIOp: _h_minmax,
    arith.MaxUIOp: _h_minmax,
    arith.MinUIOp: _h_minmax,
    arith.NegfOp: _h_negf,
    arith.FloorDivSIOp: _h_floordiv,
    math.RsqrtOp: _h_rsqrt,
    math.FmaOp: _h_fma,
    memref.LoadOp: _h_load,
    memref.StoreOp: _h_store,
    memref.ViewOp: _h_view,
    memref.CollapseShapeOp: _h_alias,
    memref.ExpandShapeOp: _h_alias,
    memref.CastOp: _h_alias,
    memref.SubviewOp: _h_subview,
    memref.GetGlobalOp: _h_get_global,
    func.ReturnOp: _h_return,
    func.CallOp: _h_call,
    cf.BranchOp: _h_br,
    cf.ConditionalBranchOp: _h_cond_br,
    UnrealizedConversionCastOp: _h_cast,
    vector.LoadOp: _h_vector_load,
    vector.StoreOp: _h_vector_store,
    vector.BroadcastOp: _h_vector_broadcast,
    vector.FMAOp: _h_vector_fma,
    vector.ShuffleOp: _h_vector_shuffle,
    vector.ExtractOp: _h_vector_extract,
    llvm.SExtOp: _h_llvm_cast,
    llvm.ZExtOp: _h_llvm_cast,
    llvm.TruncOp: _h_llvm_cast,
    llvm.BitcastOp: _h_llvm_cast,
    llvm.CallIntrinsicOp: _h_llvm_intrinsic,
}


def _convert_global(op: memref.GlobalOp) -> llvm.GlobalOp:
    t = op.type
    assert isinstance(t, MemRefType)
    n = 1
    for d in t.get_shape():
        n *= d
    elem = convert_type(t.element_type)
    init = op.initial_value
    value = None
    if isinstance(init, DenseIntOrFPElementsAttr):
        assert isinstance(elem, IntegerType | IndexType | AnyFloat)
        flat = builtin.TensorType(elem, [n])
        value = DenseIntOrFPElementsAttr(flat, init.data)
    return llvm.GlobalOp(
        llvm.LLVMArrayType(IntAttr(n), elem),
        op.sym_name,
        "internal",
        constant=op.constant is not None,
        value=value,
        alignment=64,
    )


class ConvertNNCToLLVMPass(ModulePass):
    """Lower func/cf/arith/math/memref to the llvm dialect (see module doc)."""

    name = "convert-nnc-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        externs: dict[str, llvm.FuncOp] = {}
        new_ops: list[Operation] = []
        for top in list(op.ops):
            if isinstance(top, func.FuncOp):
                new_ops.append(_FuncConverter(op, externs).convert(top))
            elif isinstance(top, memref.GlobalOp):
                new_ops.append(_convert_global(top))
            elif isinstance(top, llvm.FuncOp | llvm.GlobalOp):
                top.detach()
                new_ops.append(top)
            else:
                raise PassFailedException(f"convert-nnc-to-llvm: unexpected top-level op {top.name}")
        for top in list(op.ops):
            top.detach()
            top.erase(safe_erase=False)
        declared = {o.sym_name.data for o in new_ops if isinstance(o, llvm.FuncOp)}
        op.body.block.add_ops([f for n, f in externs.items() if n not in declared])
        op.body.block.add_ops(new_ops)


_ = i1
