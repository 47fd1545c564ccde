"""func and builtin casts to the llvm dialect: returns, calls (a call marked
``nnc.parallel_dispatch`` becomes a dispatch to the thread pool) and
``unrealized_conversion_cast`` (the same pointer).
"""

from __future__ import annotations

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    UnrealizedConversionCastOp,
)
from xdsl.ir import Operation

from nnc.passes.build import new_op
from nnc.passes.outline_parallel import DISPATCH_ATTR
from nnc.passes.to_llvm.builders import (
    convert_type,
    llvm_call,
)
from nnc.passes.to_llvm.converter import FuncConverter, Handler


def _h_return(c: FuncConverter, op: func.ReturnOp) -> None:
    c.emit(new_op(llvm.ReturnOp, (c.v(op.arguments[0]),) if op.arguments else ()))


def _h_call(c: FuncConverter, op: func.CallOp) -> None:
    if DISPATCH_ATTR in op.attributes:
        c.dispatch(op)
        return
    rets = [convert_type(t) for t in op.result_types]
    call = c.emit(llvm_call(op.callee.root_reference.data, [c.v(a) for a in op.arguments], rets[0] if rets else None))
    for r, nr in zip(op.results, call.results):
        c.vmap[r] = nr


def _h_cast(c: FuncConverter, op: UnrealizedConversionCastOp) -> None:
    for src, res in zip(op.inputs, op.outputs):
        c.vmap[res] = c.v(src)


HANDLERS: dict[type[Operation], Handler] = {
    func.ReturnOp: _h_return,
    func.CallOp: _h_call,
    UnrealizedConversionCastOp: _h_cast,
}
