"""Lowerings of CONCATENATION, PACK and TILE.

CONCATENATION and PACK copy each input into its static ``memref.subview``
window of the output.  A quantised CONCATENATION input whose scale and zero
point differ from the output's is requantised like tflite's
ConcatenationWithScaling (float32, ``std::round``).  TILE is a gather: the
input coordinate is the output's modulo the input's size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import math, memref
from xdsl.dialects.builtin import MemRefType, f32, i32
from xdsl.utils.exceptions import PassFailedException

from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    lowering,
    memref_elem,
)
from nnc.passes.lowering.indexing import gather_copy, index_rem, window


def _concat_scaling(t: T, x, out) -> tuple[float, float, int] | None:
    """tflite's ConcatenationWithScaling parameters for one quantised input:
    ``(scale, bias, output zero point)`` in float32 with the zero points of
    the uint8 domain, or None when the input is copied verbatim (same scale
    and zero point as the output).  Android runs int8 through the uint8
    kernel with every zero point shifted by 128."""
    shift = 0 if t == T.TENSOR_QUANT8_ASYMM else 128
    in_zp, out_zp = x.zero_point + shift, out.zero_point + shift
    in_scale, out_scale = np.float32(x.scale), np.float32(out.scale)
    if in_zp == out_zp and in_scale == out_scale:
        return None
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        scale = in_scale * (np.float32(1.0) / out_scale)  # input_scale * (1.f / output_scale)
        bias = np.float32(-in_zp) * scale  # -input_zeropoint * scale
    return float(scale), float(bias), out_zp


def _rescale_copy(
    ctx: LoweringContext, x: Value, dst: Value, t: T, scaling: tuple[float, float, int]
) -> None:
    """``dst = clamp(round(u * scale + bias) + zp_out, 0, 255)`` on the uint8
    value ``u`` of each element (float32 arithmetic, std::round)."""
    scale, bias, out_zp = scaling
    shift = 0 if t == T.TENSOR_QUANT8_ASYMM else 128

    def body(e: Emitter, a: Sequence[Value]) -> Value:
        u = q.load_q(e, a[0], t)
        if shift:
            u = e.add(u, e.i32(shift))
        v = e.add(e.mul(e.to_float(u, f32), e.f32(scale)), e.f32(bias))
        v = e.op(math.RoundOp(v))
        # Keep the conversion defined (the result saturates to 0 or 255 anyway).
        v = e.min(e.max(v, e.f32(-1.0e9)), e.f32(1.0e9))
        r = e.add(e.to_int(v, i32), e.i32(out_zp))
        r = e.clamp(r, 0, 255)
        if shift:
            r = e.sub(r, e.i32(shift))
        return q.store_q(e, r, t, saturate=False)

    ctx.elementwise(dst, [x], body)


@lowering(Op.CONCATENATION)
def concatenation(ctx: LoweringContext) -> None:
    """One copy per input into its slice of the output along ``axis`` (a static
    ``memref.subview`` of the output, so every generic keeps identity maps).

    A quantised input whose scale or zero point differs from the output's is
    requantised like Android (tflite's ConcatenationWithScaling): float32
    ``round(q * s_in / s_out - zp_in * s_in / s_out) + zp_out``, clamped;
    one with the output's is copied byte for byte.  An input without a
    buffer is already in its window: ``nnc-concat-in-place`` had its
    producer write it there."""
    n = len(ctx.call.inputs) - 1
    out = ctx.output()
    oshape = ctx.shape(out)
    rank = len(oshape)
    axis = ctx.scalar(n)
    if not -rank <= axis < rank:
        raise PassFailedException(f"CONCATENATION: axis {axis} out of range for rank {rank}")
    axis %= rank
    t = ctx.info(0).type
    dyn = ctx.out_info(0).dynamic
    final = out
    if dyn is not None and dyn.axis == axis:  # a data-dependent size along the axis: compacted below
        out = ctx.alloc(oshape, memref_elem(out))
    offset = 0
    for i in range(n):
        if not ctx.has_input(i):  # its producer wrote it into its window (nnc-concat-in-place)
            dims = ctx.info(i).dims
            assert dims is not None  # static: the pass marks static inputs only
            offset += dims[axis]
            continue
        x = ctx.input(i)
        shape = ctx.shape(x)
        if all(shape):
            offsets = [offset if d == axis else 0 for d in range(rank)]
            assert isinstance(out.type, MemRefType)
            view = memref.SubviewOp.from_static_parameters(out, out.type, offsets, shape, [1] * rank)
            ctx.builder.insert(view)
            scaling = _concat_scaling(t, ctx.info(i), ctx.out_info(0)) if t in QUANT8 else None
            if scaling is None:
                ctx.copy(x, view.result)
            else:
                _rescale_copy(ctx, x, view.result, t, scaling)
        offset += shape[axis]
    if out is not final:
        _compact_rows(ctx, out, final, axis, n)


def _compact_rows(ctx: LoweringContext, staged: Value, out: Value, axis: int, n: int) -> None:
    """CONCATENATION along a data-dependent axis (every dimension before it
    is 1): ``staged`` holds each input's bound of rows at its static offset;
    ``out`` gets each input's actual rows right after the previous one's,
    zeros after the last, and its count is their total."""
    shape = ctx.shape(out)
    inner = int(np.prod(shape[axis + 1 :], dtype=np.int64))
    rows_out = ctx.reshaped(out, [shape[axis], inner])
    rows_in = ctx.reshaped(staged, [shape[axis], inner])
    ctx.fill(rows_out, 0)
    e = ctx.e
    pos: Value = e.index(0)
    start = 0
    for i in range(n):
        bound = ctx.shape(ctx.input(i))[axis]
        count = ctx.count(i)
        rows = count if count is not None else e.index(bound)

        def row(e: Emitter, r: Value, _: Sequence[Value], start: int = start, pos: Value = pos) -> list[Value]:
            def element(e: Emitter, c: Value, _: Sequence[Value]) -> list[Value]:
                e.store(e.load(rows_in, [e.add(r, e.index(start)), c]), rows_out, [e.add(pos, r), c])
                return []

            e.for_(0, inner, element)
            return []

        e.for_(0, rows, row)
        pos = e.add(pos, rows)
        start += bound
    ctx.set_count(0, pos)


@lowering(Op.PACK)
def pack(ctx: LoweringContext) -> None:
    """Input i (after the axis) is the output's slice i along ``axis``."""
    out = ctx.output()
    oshape = ctx.shape(out)
    axis = ctx.scalar(0) % len(oshape)
    sizes = [1 if k == axis else d for k, d in enumerate(oshape)]
    for i in range(1, len(ctx.inputs)):
        offsets = [i - 1 if k == axis else 0 for k in range(len(oshape))]
        ctx.copy(ctx.reshaped(ctx.input(i), sizes), window(ctx, out, offsets, sizes))


@lowering(Op.TILE)
def tile(ctx: LoweringContext) -> None:
    """``out[i] = in[i % in.shape]`` per dimension."""
    oshape, ishape = ctx.shape(ctx.output()), ctx.shape(ctx.input(0))
    gather_copy(ctx, lambda e, idx: [i if d == o else index_rem(e, i, d) for i, d, o in zip(idx, ishape, oshape)])
