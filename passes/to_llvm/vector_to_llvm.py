"""One-dimensional vector operations to the llvm dialect: vectors stay LLVM
vectors; loads and stores are element-aligned; a broadcast is an
insertelement and a zero-mask shufflevector; an extract of a constant lane a
one-lane shufflevector and a bitcast.
"""

from __future__ import annotations

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import (
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import integer_attr, new_op, vector_type
from nnc.passes.to_llvm.builders import (
    llvm_cast,
    llvm_constant,
    llvm_fma,
    llvm_load,
    llvm_shuffle,
    llvm_store,
)
from nnc.passes.to_llvm.converter import FuncConverter, Handler


def _elem_bytes(t: Attribute) -> int:
    width = t.bitwidth if hasattr(t, "bitwidth") else 32
    return max(1, width // 8)


def _shuffle(c: FuncConverter, v1: SSAValue, v2: SSAValue, mask: list[int]) -> SSAValue:
    assert isinstance(v1.type, VectorType)
    vt = vector_type(v1.type.element_type, len(mask))
    return c.emit(llvm_shuffle(v1, v2, tuple(mask), vt)).results[0]


def _h_vector_load(c: FuncConverter, op: vector.LoadOp) -> None:
    ptr, elem = c.element_ptr(op.base, list(op.indices))
    c.vmap[op.result] = c.emit(llvm_load(ptr, op.result.type, _elem_bytes(elem))).results[0]


def _h_vector_store(c: FuncConverter, op: vector.StoreOp) -> None:
    ptr, elem = c.element_ptr(op.base, list(op.indices))
    c.emit(llvm_store(c.v(op.vector), ptr, _elem_bytes(elem)))


def _h_vector_broadcast(c: FuncConverter, op: vector.BroadcastOp) -> None:
    vt = op.vector.type
    if isinstance(op.source.type, VectorType):
        raise PassFailedException("convert-nnc-to-llvm: vector.broadcast of a vector is not supported")
    undef = c.emit(new_op(llvm.UndefOp, (), (vt,))).results[0]
    zero = c.emit(llvm_constant(integer_attr(0, i32), i32)).results[0]
    one = c.emit(new_op(llvm.InsertElementOp, (undef, c.v(op.source), zero), (vt,))).results[0]
    c.vmap[op.vector] = _shuffle(c, one, one, [0] * vt.get_shape()[0])


def _h_vector_fma(c: FuncConverter, op: vector.FMAOp) -> None:
    c.vmap[op.res] = c.emit(llvm_fma(c.v(op.lhs), c.v(op.rhs), c.v(op.acc))).results[0]


def _h_vector_shuffle(c: FuncConverter, op: vector.ShuffleOp) -> None:
    c.vmap[op.result] = _shuffle(c, c.v(op.v1), c.v(op.v2), list(op.mask.get_values()))


def _h_vector_extract(c: FuncConverter, op: vector.ExtractOp) -> None:
    """Lane ``k`` (a constant) of a 1-D vector: a one-lane shuffle, bitcast to
    the scalar (xDSL's llvm dialect has no extractelement)."""
    if op.dynamic_position or len(op.static_position.get_values()) != 1:
        raise PassFailedException("convert-nnc-to-llvm: only vector.extract of one constant lane")
    (k,) = op.static_position.get_values()
    src = c.v(op.vector)
    lane = _shuffle(c, src, src, [k])
    c.vmap[op.result] = c.emit(llvm_cast(llvm.BitcastOp, lane, op.result.type)).results[0]


HANDLERS: dict[type[Operation], Handler] = {
    vector.LoadOp: _h_vector_load,
    vector.StoreOp: _h_vector_store,
    vector.BroadcastOp: _h_vector_broadcast,
    vector.FMAOp: _h_vector_fma,
    vector.ShuffleOp: _h_vector_shuffle,
    vector.ExtractOp: _h_vector_extract,
}
