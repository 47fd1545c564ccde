"""llvm-dialect operations already in the input (integer vector casts,
integer-to-float vector conversions and target intrinsics of the
quantised kernels): the same operation on the converted operands.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.ir import Operation

from nnc.passes.to_llvm.builders import (
    convert_type,
    llvm_call_intrinsic,
    llvm_cast,
)
from nnc.passes.to_llvm.converter import FuncConverter, Handler


def _h_llvm_cast(c: FuncConverter, op: Operation) -> None:
    """``llvm.sext`` / ``llvm.zext`` / ``llvm.trunc`` / ``llvm.sitofp``
    already in the input (vector casts of the quantised kernels, which
    xDSL's arith takes on scalars only): the same op on the converted
    operand."""
    c.vmap[op.results[0]] = c.emit(llvm_cast(type(op), c.v(op.operands[0]), op.results[0].type)).results[0]


def _h_llvm_intrinsic(c: FuncConverter, op: llvm.CallIntrinsicOp) -> None:
    """A target intrinsic already in the input (AArch64 ``sdot`` of the int8
    kernels' sdot form): the same call on the converted operands."""
    call = c.emit(llvm_call_intrinsic(op.intrin, [c.v(a) for a in op.args], [convert_type(r.type) for r in op.results]))
    for old, new in zip(op.results, call.results, strict=True):
        c.vmap[old] = new


HANDLERS: dict[type[Operation], Handler] = {
    llvm.SExtOp: _h_llvm_cast,
    llvm.ZExtOp: _h_llvm_cast,
    llvm.TruncOp: _h_llvm_cast,
    llvm.BitcastOp: _h_llvm_cast,
    llvm.SIToFPOp: _h_llvm_cast,
    llvm.CallIntrinsicOp: _h_llvm_intrinsic,
}
