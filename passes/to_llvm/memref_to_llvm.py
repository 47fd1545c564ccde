"""memref to the llvm dialect: loads and stores through one ``getelementptr``
over the linearised index; views, subviews and shape casts keep the pointer
(static layouts carry the offset); globals become ``llvm.mlir.global``s of a
flat array.
"""

from __future__ import annotations

from xdsl.dialects import builtin, llvm, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Operation

from nnc.passes.build import new_op
from nnc.passes.to_llvm.builders import (
    PTR,
    convert_type,
    llvm_gep,
    llvm_load,
    llvm_store,
    symbol_ref,
)
from nnc.passes.to_llvm.converter import FuncConverter, Handler


def _h_load(c: FuncConverter, op: memref.LoadOp) -> None:
    ptr, elem = c.element_ptr(op.memref, list(op.indices))
    c.vmap[op.res] = c.emit(llvm_load(ptr, elem)).results[0]


def _h_store(c: FuncConverter, op: memref.StoreOp) -> None:
    ptr, _ = c.element_ptr(op.memref, list(op.indices))
    c.emit(llvm_store(c.v(op.value), ptr))


def _h_view(c: FuncConverter, op: memref.ViewOp) -> None:
    # memref.view %buf[%byte_shift][] : memref<Nxi8> to memref<...>
    gep = llvm_gep(c.v(op.source), [c.v(op.byte_shift)], builtin.i8)
    c.vmap[op.results[0]] = c.emit(gep).results[0]


def _h_alias(c: FuncConverter, op: Operation) -> None:
    """Ops that only change a memref's type: the pointer is the same."""
    c.vmap[op.results[0]] = c.v(op.operands[0])


def _h_subview(c: FuncConverter, op: memref.SubviewOp) -> None:
    # Static subview: the result type's layout carries the offset.
    c.vmap[op.results[0]] = c.v(op.source)


def _h_alloca(c: FuncConverter, op: memref.AllocaOp) -> None:
    """A stack buffer of static size, placed in the entry block of the
    function (an alloca in a loop would grow the stack at every iteration;
    the buffer is reused by each, and each call of the function, a thread's
    chunk of a parallel loop among them, has its own)."""
    t = op.memref.type
    assert isinstance(t, MemRefType) and t.has_static_shape()
    n = 1
    for d in t.get_shape():
        n *= d
    align = op.alignment.value.data if op.alignment is not None else 16
    alloca = llvm.AllocaOp(c.const_i64(n), convert_type(t.element_type), alignment=align)
    c.entry_ops.append(alloca)
    c.vmap[op.memref] = alloca.results[0]


def _h_get_global(c: FuncConverter, op: memref.GetGlobalOp) -> None:
    c.vmap[op.memref] = c.emit(new_op(llvm.AddressOfOp, (), (PTR,), {"global_name": symbol_ref(op.name_.root_reference.data)})).results[0]


def convert_global(op: memref.GlobalOp) -> llvm.GlobalOp:
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


HANDLERS: dict[type[Operation], Handler] = {
    memref.LoadOp: _h_load,
    memref.StoreOp: _h_store,
    memref.ViewOp: _h_view,
    memref.CollapseShapeOp: _h_alias,
    memref.ExpandShapeOp: _h_alias,
    memref.CastOp: _h_alias,
    memref.SubviewOp: _h_subview,
    memref.GetGlobalOp: _h_get_global,
    memref.AllocaOp: _h_alloca,
}
