"""``nnc-simplify-trivial-loops``: loops of one iteration become their body.

``nnc-convert-linalg-to-loops`` emits one ``scf.for`` per dimension of a
``linalg.generic``'s domain, size-1 dimensions included, and most tensors of
a model have some (the batch of 1, a 1 x 1 spatial extent, a channel of 1).
Each such loop costs three blocks and a compare after ``convert-scf-to-cf``,
and every later stage pays for them: the xDSL passes (``convert-scf-to-cf``
finds a block's index by walking the region, so a function's cost grows with
the square of its blocks), the LLVM IR translation and LLVM's loop passes
(loop rotation is superlinear in the loops of a function).  LLVM would delete
those loops itself, but only after paying for them.

This pass applies xDSL's ``SimplifyTrivialLoops`` pattern (the scf.for
canonicalisation of MLIR), without the pattern rewriter (whose worklist
visited every operation of the module twice to rewrite a few hundred loops):
a loop whose constant bounds give one iteration
is replaced by its body with the induction variable set to the lower bound,
and a loop of no iteration by its initial values.  The computation, and so
every result bit, is the same: the same operations run in the same order.
It runs right after ``nnc-convert-linalg-to-loops``, when every loop exists and
none has been lowered to branches yet.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from nnc.passes.build import replace_op, walk_ops


def _simplify(op: scf.ForOp, dropped: set[Operation]) -> None:
    """xDSL's ``SimplifyTrivialLoops`` on ``op`` (the operations of a dropped
    loop go to ``dropped``)."""
    lb, ub = const_evaluate_operand(op.lb), const_evaluate_operand(op.ub)
    if lb is None or ub is None:
        return
    if ub - lb <= 0:  # no iteration: the results are the initial values
        dropped.update(walk_ops(op))
        replace_op(op, (), op.iter_args)
        return
    step = const_evaluate_operand(op.step)
    if step is None or step < ub - lb:
        return
    # one iteration: the body with the induction variable at the lower bound
    block = op.body.block
    terminator = block.last_op
    assert terminator is not None
    Rewriter.inline_block(block, InsertPoint.before(op), (op.lb, *op.iter_args))
    replace_op(op, (), terminator.operands)
    parent = terminator.parent
    assert parent is not None
    parent.erase_op(terminator)


@dataclass(frozen=True)
class SimplifyTrivialLoopsPass(ModulePass):
    """Inline ``scf.for`` loops of one iteration; drop those of none."""

    name = "nnc-simplify-trivial-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Outer loops first, as xDSL's walker visits them (an inlined outer
        # loop's constant induction variable can make an inner loop trivial).
        # A loop's bounds are defined before it and outside it, so no later
        # rewrite changes them: one walk reaches the walker's fixed point.
        dropped: set[Operation] = set()
        for loop in [o for o in walk_ops(op) if isinstance(o, scf.ForOp)]:
            if loop not in dropped:
                _simplify(loop, dropped)
