"""Lowerings of PAD, PAD_V2 and MIRROR_PAD.

PAD and PAD_V2 fill the output with the pad value (0.0, or the zero point, the
quantised 0.0, for quantised tensors) and copy the input into a static
``memref.subview`` of it.  MIRROR_PAD is a gather: a generic over the output
reflects each coordinate into the input in its body.  None of them looks at
element values, so one lowering serves every type (bytes are copied).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType

from nnc.dialects.rules.operands import paddings_of
from nnc.dialects.rules.pad import pad_paddings
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    lowering,
)
from nnc.passes.lowering.indexing import gather_copy, window, zero_value


@lowering(Op.PAD)
def pad(ctx: LoweringContext) -> None:
    """Fill the output with 0 (the zero point if quantised), then copy the
    input into the subview at offsets ``before``."""
    x, out = ctx.input(0), ctx.output()
    ishape = ctx.shape(x)
    rank = len(ishape)
    pairs = pad_paddings(ctx.call, rank)
    if not any(b or a for b, a in pairs):
        ctx.copy(x, out)
        return
    ctx.fill(out, zero_value(ctx))
    if not all(ishape):
        return
    assert isinstance(out.type, MemRefType)
    view = memref.SubviewOp.from_static_parameters(
        out, out.type, [b for b, _ in pairs], list(ishape), [1] * rank
    )
    ctx.builder.insert(view)
    ctx.copy(x, view.result)


def _stored(value: int, t: T) -> int:
    """A quantised pad value as its i8 storage (QUANT8_ASYMM 128..255 wrap)."""
    return value - 256 if t == T.TENSOR_QUANT8_ASYMM and value > 127 else value


@lowering(Op.PAD_V2)
def pad_v2(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    ishape = ctx.shape(x)
    pairs = paddings_of(ctx.call, 1, len(ishape), "paddings")
    t = ctx.info(0).type
    value = ctx.scalar(2)
    ctx.fill(out, _stored(value, t) if t in QUANT8 else value)
    if all(ishape):
        ctx.copy(x, window(ctx, out, [b for b, _ in pairs], ishape))


@lowering(Op.MIRROR_PAD)
def mirror_pad(ctx: LoweringContext) -> None:
    """Input coordinate of output index o along a dimension of size d padded by
    ``before``: ``j = o - before``, reflected at both ends: REFLECT (mode 0)
    ``-j`` / ``2d - 2 - j``, SYMMETRIC (mode 1) ``-j - 1`` / ``2d - 1 - j``."""
    ishape = ctx.shape(ctx.input(0))
    pairs = paddings_of(ctx.call, 1, len(ishape), "paddings")
    edge = 1 if ctx.scalar(2) == 0 else 0

    def coords(e: Emitter, idx: Sequence[Value]) -> list[Value]:
        out = []
        for o, d, (before, _) in zip(idx, ishape, pairs):
            j = e.sub(o, e.index(before)) if before else o
            low = e.sub(e.index(-1 + edge), j)
            high = e.sub(e.index(2 * d - 1 - edge), j)
            j = e.select(e.cmp("lt", j, e.index(0)), low, j)
            out.append(e.select(e.cmp("ge", j, e.index(d)), high, j))
        return out

    gather_copy(ctx, coords)
