"""Lowerings of RESHAPE, SQUEEZE, EXPAND_DIMS and RANK.

The first three keep the row-major element order, so they copy between 1-D
views of the same bytes; RANK stores the input's rank.
"""

from __future__ import annotations

from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import LoweringContext, lowering


@lowering(Op.RESHAPE, Op.SQUEEZE, Op.EXPAND_DIMS)
def flat_copy(ctx: LoweringContext) -> None:
    """Same elements in the same order: a copy between 1-D views of the
    (contiguous) input and output."""
    ctx.copy(ctx.flat(ctx.input(0)), ctx.flat(ctx.output()))


@lowering(Op.RANK)
def rank(ctx: LoweringContext) -> None:
    """The input's rank into the INT32 scalar output (a rank-0 buffer).  Its
    readers inside the model read a constant (``nnapi-shape-inference``
    folds it), so this only writes a model output."""
    e = ctx.e
    e.store(e.i32(len(ctx.shape(ctx.input(0)))), ctx.output(), [])
