"""cf to the llvm dialect: branches to the converted blocks.
"""

from __future__ import annotations

from xdsl.dialects import cf, llvm
from xdsl.ir import Operation

from nnc.passes.build import new_op, segment_sizes
from nnc.passes.to_llvm.converter import FuncConverter, Handler


def _h_br(c: FuncConverter, op: cf.BranchOp) -> None:
    c.emit(new_op(llvm.BrOp, [c.v(a) for a in op.arguments], successors=(c.block_map[op.successor],)))


def _h_cond_br(c: FuncConverter, op: cf.ConditionalBranchOp) -> None:
    then_args = [c.v(a) for a in op.then_arguments]
    else_args = [c.v(a) for a in op.else_arguments]
    props = {"operandSegmentSizes": segment_sizes(1, len(then_args), len(else_args))}
    successors = (c.block_map[op.then_block], c.block_map[op.else_block])
    c.emit(new_op(llvm.CondBrOp, (c.v(op.cond), *then_args, *else_args), (), props, successors=successors))


HANDLERS: dict[type[Operation], Handler] = {
    cf.BranchOp: _h_br,
    cf.ConditionalBranchOp: _h_cond_br,
}
