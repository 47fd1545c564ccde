"""Lowerings of SLICE, SPLIT and STRIDED_SLICE.

SLICE and SPLIT copy static ``memref.subview`` windows of the input;
STRIDED_SLICE gathers ``begin + stride * i`` per dimension (a constant for a
shrunk axis) in the body of a generic over the output.
"""

from __future__ import annotations

from collections.abc import Sequence

from nnc.dialects.rules.slice import slice_bounds, strided_slice_axes
from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import (
    Emitter,
    LoweringContext,
    Value,
    identity_map,
    lowering,
)
from nnc.passes.lowering.indexing import window


@lowering(Op.STRIDED_SLICE)
def strided_slice(ctx: LoweringContext) -> None:
    """out[..., i_k, ...] = in[..., begin_d + stride_d * i_k, ...], a gather
    over the output; a shrunk input dimension d is read at the constant
    begin_d.  (Not an input affine map: a loop must take its bound from the
    first operand indexing it, and the input's dimensions are larger.)"""
    x, out = ctx.input(0), ctx.output()
    ishape, oshape = ctx.shape(x), ctx.shape(out)
    axes = strided_slice_axes(ctx.call, ishape)
    rank = len(oshape)

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        coords: list = []
        k = 0
        for a in axes:
            if a.shrink:
                coords.append(a.begin)
                continue
            c = idx[k]
            if a.stride != 1:
                c = e.mul(c, e.index(a.stride))
            if a.begin:
                c = e.add(c, e.index(a.begin))
            coords.append(c)
            k += 1
        return [e.load(x, coords)]

    ctx.generic(oshape, [], [(out, identity_map(rank))], body)


@lowering(Op.SLICE)
def slice_(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    bounds = slice_bounds(ctx.call, ctx.shape(x))
    ctx.copy(window(ctx, x, [b for b, _ in bounds], [s for _, s in bounds]), out)


@lowering(Op.SPLIT)
def split(ctx: LoweringContext) -> None:
    x = ctx.input(0)
    shape = ctx.shape(x)
    axis = ctx.scalar(1) % len(shape)
    for i, out in enumerate(ctx.outputs):
        oshape = ctx.shape(out)
        if all(oshape):
            offsets = [i * oshape[axis] if k == axis else 0 for k in range(len(shape))]
            ctx.copy(window(ctx, x, offsets, oshape), out)
