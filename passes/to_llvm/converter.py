"""The function converter of ``convert-nnc-to-llvm``: rebuilds one
``func.func`` as an ``llvm.func`` in a single walk in dominance order, handing
each operation to the handler its class has in the pass's table.

It owns what handlers share: the value map, the function's constants (defined
once, at the top of the entry block), external declarations, element
addresses of memrefs, float casts, C-library calls, and the parallel-loop
protocol (a parallel body's parameters from its context; a dispatch's
captures into a stack array and ``nnc_parallel_for``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith, builtin, func, llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import integer_attr, new_op
from nnc.passes.mark_cold import COLD_ATTR
from nnc.passes.outline_kernels import NOALIAS_ATTR
from nnc.passes.outline_loops import LOOP_ATTR, NEST_ATTR
from nnc.passes.outline_parallel import BODY_ATTR, PARALLEL_FOR
from nnc.passes.to_llvm.builders import (
    PTR,
    convert_type,
    llvm_add,
    llvm_call,
    llvm_call_intrinsic,
    llvm_cast,
    llvm_constant,
    llvm_gep,
    llvm_load,
    llvm_mul,
    llvm_store,
    memref_strides,
    symbol_ref,
    type_suffix,
)

#: the LLVM function attributes of a function marked ``nnc.cold``
COLD_PASSTHROUGH = ArrayAttr([StringAttr("optsize")])


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


@dataclass
class FuncConverter:
    """Converts one func.func into an llvm.func."""

    module: ModuleOp
    externs: dict[str, llvm.FuncOp]
    #: the conversion of each operation class (the pass's table)
    handlers: Mapping[type[Operation], Handler]

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
                term = self.emit(llvm_mul(term, self.const_i64(stride))).results[0]
            lin = term if lin is None else self.emit(llvm_add(lin, term)).results[0]
        if offset:
            static = self.const_i64(offset)
            lin = static if lin is None else self.emit(llvm_add(static, lin)).results[0]
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
        if (kernel and NEST_ATTR not in fn.attributes) or LOOP_ATTR in fn.attributes:
            # Shared kernels stay functions: inlined at every call site they
            # would multiply the code LLVM compiles (to_llvm_ir passes this on);
            # so do outlined loop nests, which may be compiled apart from main.
            new.no_inline = UnitAttr()
        if COLD_ATTR in fn.attributes:
            new.passthrough = COLD_PASSTHROUGH
        return new

    def convert_op(self, op: Operation) -> None:
        handler = self.handlers.get(type(op))
        if handler is None:
            raise PassFailedException(f"convert-nnc-to-llvm: cannot lower {op.name}")
        handler(self, op)

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
        body = self.emit(new_op(llvm.AddressOfOp, (), (PTR,), {"global_name": symbol_ref(op.callee.root_reference.data)})).results[0]
        self.extern(PARALLEL_FOR, llvm.LLVMVoidType(), [PTR, PTR, i64])
        self.emit(llvm_call(PARALLEL_FOR, (body, ctx, self.v(op.arguments[1]))))

    def intrinsic(self, name: str, op: Operation) -> SSAValue:
        """Call the type-mangled float intrinsic ``name`` on ``op``'s operands."""
        t = convert_type(op.results[0].type)
        full = f"{name}.{type_suffix(t)}"
        call = self.emit(llvm_call_intrinsic(full, [self.v(o) for o in op.operands], [t]))
        return call.results[0]

    # -- individual conversions -----------------------------------------------------
    def libm(self, op: Operation, name: str) -> None:
        t = convert_type(op.results[0].type)
        args = [self.v(o) for o in op.operands]
        f32 = builtin.f32
        if t != f32:  # compute half/double through float
            args = [self.fcast(a, f32) for a in args]
        self.extern(name, f32, [f32] * len(args))
        call = self.emit(llvm_call(name, args, f32))
        res = call.results[0]
        self.vmap[op.results[0]] = res if t == f32 else self.fcast(res, t)

    def fcast(self, v: SSAValue, to: Attribute) -> SSAValue:
        """``v`` (a float or a vector of floats) extended or truncated to ``to``."""
        have, want = _float_width(v.type), _float_width(to)
        if have < want:
            return self.emit(llvm_cast(llvm.FPExtOp, v, to)).results[0]
        if have > want:
            return self.emit(llvm_cast(llvm.FPTruncOp, v, to)).results[0]
        return v


#: bits of the float types, for :meth:`FuncConverter.fcast`
_FLOAT_WIDTHS: dict[Attribute, int] = {builtin.f16: 16, builtin.f32: 32, builtin.f64: 64}


def _float_width(t: Attribute) -> int:
    """The bits of the float type ``t`` or of its vector's elements."""
    return _FLOAT_WIDTHS[t.element_type if isinstance(t, builtin.VectorType) else t]


def _constant_index(value: SSAValue) -> int | None:
    """The value of an ``arith.constant`` index or integer, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


#: converts one operation (of its key's class) into llvm operations
Handler = Callable[[FuncConverter, Any], None]


def float_intrinsic(name: str) -> Handler:
    """A handler calling the type-mangled float intrinsic ``name``."""

    def handle(c: FuncConverter, op: Operation) -> None:
        c.vmap[op.results[0]] = c.intrinsic(name, op)

    return handle


def libm_call(name: str) -> Handler:
    """A handler calling the C library's float function ``name``."""

    def handle(c: FuncConverter, op: Operation) -> None:
        c.libm(op, name)

    return handle
