"""``nnc-lower-affine``: ``affine.apply`` to index arithmetic, in one walk.

``nnc-convert-linalg-to-loops`` leaves an ``affine.apply`` for each non-identity
indexing map of a ``linalg.generic``; nnc's IR has no other affine op.  Each
becomes the ``arith`` ops xDSL's ``lower-affine`` builds for it (its
``affine_expr_ops``: a constant, ``muli``, ``addi``, ``remsi``,
``floordivsi`` or ``ceildivsi`` per node of the expression, in the same
order), and, as xDSL's pass does through its greedy pattern applier,
trivially dead operations are erased.  The IR is the same as xDSL's pass
gives; the pattern rewriter is not used: it walked every operation of the
module twice (the worklist, then a walk finding nothing left) to rewrite the
few dozen applies of a model.

Other affine ops (``affine.for``, ``affine.load``, ...), which nnc never
emits, are refused rather than left in the IR for the LLVM lowering to fail
on.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.lower_affine import affine_expr_ops
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import erase_dead_ops, replace_op, walk_ops


def _lower_apply(op: affine.ApplyOp) -> None:
    affine_map = op.map.data
    if len(affine_map.results) != 1:
        raise PassFailedException(f"nnc-lower-affine: affine.apply of a map with {len(affine_map.results)} results")
    operands = op.mapOperands
    dims, symbols = operands[: affine_map.num_dims], operands[affine_map.num_dims :]
    new_ops, value = affine_expr_ops(affine_map.results[0], dims, symbols)
    replace_op(op, new_ops, [value])


@dataclass(frozen=True)
class LowerAffineApplyPass(ModulePass):
    """``affine.apply`` -> ``arith`` (xDSL's expansion), dead ops erased."""

    name = "nnc-lower-affine"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        erase_dead_ops(op)
        applies: list[affine.ApplyOp] = []
        for inner in walk_ops(op):
            if isinstance(inner, affine.ApplyOp):
                applies.append(inner)
            elif inner.name.startswith("affine."):
                raise PassFailedException(f"nnc-lower-affine: {inner.name} is not supported (only affine.apply)")
        for apply in applies:
            _lower_apply(apply)
