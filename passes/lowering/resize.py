"""Lowerings of RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.

RESIZE_NEAREST_NEIGHBOR computes its source coordinates in float32 in the
body of a generic over the output; RESIZE_BILINEAR reads them from tables
made at compile time with the same float32 arithmetic
(:func:`source_coords`).  Both read the input with ``memref.load`` (a
gather).
RESIZE_NEAREST_NEIGHBOR copies the element tflite's ``GetNearestNeighbor``
picks.  RESIZE_BILINEAR interpolates in float32; for quantised tensors it
interpolates the stored integers and rounds to nearest, halves up: the
numbers NNAPI's conformance tests expect (Android's reference template
truncates, within their one-unit tolerance; docs/tflite.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import f32, i32

from nnc.enums import OperationType as Op
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    identity_map,
    lowering,
)
from nnc.passes.lowering.indexing import join_nhwc, nchw_flag, split_nhwc


def _nearest(e: Emitter, i: Value, in_size: int, out_size: int, align: bool, half: bool) -> Value:
    """tflite's ``GetNearestNeighbor`` in float32: ``min(round_or_floor((i +
    offset) * scale), in_size - 1)`` (then ``max(0, .)`` with half-pixel
    centres), where ``scale = (in - 1) / (out - 1)`` with align_corners and
    ``in / out`` otherwise."""
    f = np.float32
    if align and out_size > 1:
        scale = f(in_size - 1) / f(out_size - 1)
    else:
        scale = f(in_size) / f(out_size)
    v = e.to_float(i, f32)
    if half:
        v = e.add(v, e.f32(0.5))
    v = e.mul(v, e.f32(float(scale)))
    v = e.op(math.RoundOp(v)) if align else e.floor(v)
    r = e.min(e.to_int(v, i32), e.i32(in_size - 1))
    if half:
        r = e.max(r, e.i32(0))
    return e.index_cast(r)


@lowering(Op.RESIZE_NEAREST_NEIGHBOR)
def resize_nearest_neighbor(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    ishape, oshape = ctx.shape(x), ctx.shape(out)
    if not all(ishape):
        return
    n = len(ctx.call.inputs)
    nchw = nchw_flag(ctx, 3) if n > 3 else False
    align = bool(ctx.scalar(4, False)) if n > 4 else False
    half = bool(ctx.scalar(5, False)) if n > 5 else False
    _, in_h, in_w, _ = split_nhwc(ishape, nchw)
    _, out_h, out_w, _ = split_nhwc(oshape, nchw)

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, c = split_nhwc(idx, nchw)
        iy = _nearest(e, oy, in_h, out_h, align, half)
        ix = _nearest(e, ox, in_w, out_w, align, half)
        return [e.load(x, join_nhwc(b, iy, ix, c, nchw))]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)


def _resize_scale(in_size: int, out_size: int, align_corners: bool) -> float:
    """tflite's scale, in float32: (in-1)/(out-1) with aligned corners, else in/out."""
    if align_corners and out_size > 1:
        return float(np.float32(in_size - 1) / np.float32(out_size - 1))
    return float(np.float32(in_size) / np.float32(out_size))


def source_coords(out_size: int, in_size: int, scale: float, half_pixel: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Android's (tflite's) ComputeInterpolationValues for every output
    index, in float32 as the reference computes it: the clamped floor and
    ceil of the source coordinate and the fraction ``coord - floor`` (each
    operation one IEEE single rounding, as the code would do it per
    element)."""
    f = np.float32
    v = np.arange(out_size, dtype=f)
    if half_pixel:
        v = (v + f(0.5)) * f(scale) - f(0.5)
    else:
        v = v * f(scale)
    lo = np.minimum(np.maximum(np.floor(v).astype(np.int32), 0), in_size - 1)
    hi = np.maximum(np.minimum(np.ceil(v).astype(np.int32), in_size - 1), 0)
    return lo, hi, (v - lo.astype(f)).astype(f)


@lowering(Op.RESIZE_BILINEAR)
def resize_bilinear(ctx: LoweringContext) -> None:
    """Bilinear interpolation exactly as tflite's reference ResizeBilinear, which
    Android's ResizeImageOps runs (the output size comes from shape inference,
    whichever of the size and scale signatures the model used).

    Quantised tensors use the same formula on the stored integers: the value
    is interpolated in float32 and rounded to nearest, halves up (the output
    keeps the input's quantisation)."""
    nchw = nchw_flag(ctx, 3)
    align_corners = bool(ctx.scalar(4, False))
    half_pixel = bool(ctx.scalar(5, False))
    x, out = ctx.input(0), ctx.output()
    _, in_h, in_w, _ = split_nhwc(ctx.shape(x), nchw)
    oshape = ctx.shape(out)
    _, out_h, out_w, _ = split_nhwc(oshape, nchw)
    h_scale = _resize_scale(in_h, out_h, align_corners)
    w_scale = _resize_scale(in_w, out_w, align_corners)
    t = ctx.info(0).type
    quantised = t in QUANT8

    # The source rows and columns of every output row and column (their
    # indices and fractions) as constant tables, made at compile time with
    # the reference's float32 arithmetic: the loop body reads them instead
    # of recomputing them for every element.
    rows = [ctx.constant(a, i32 if a.dtype == np.int32 else f32) for a in source_coords(out_h, in_h, h_scale, half_pixel)]
    same = (out_w, in_w, w_scale) == (out_h, in_h, h_scale)
    cols = rows if same else [ctx.constant(a, i32 if a.dtype == np.int32 else f32) for a in source_coords(out_w, in_w, w_scale, half_pixel)]

    def coords(e: Emitter, tables: list[Value], i: Value) -> tuple[Value, Value, Value]:
        lo, hi, frac = (e.load(tab, [i]) for tab in tables)
        return e.index_cast(lo), e.index_cast(hi), frac

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, oy, ox, c = split_nhwc(idx, nchw)
        y0, y1, dy = coords(e, rows, oy)
        x0, x1, dx = coords(e, cols, ox)
        one = e.f32(1.0)
        ry, rx = e.sub(one, dy), e.sub(one, dx)

        def at(yy: Value, xx: Value) -> Value:
            v = e.load(x, join_nhwc(b, yy, xx, c, nchw))
            return e.to_float(q.load_q(e, v, t), f32) if quantised else v

        # Same association as the C++: ((v00*(1-dy))*(1-dx) + (v10*dy)*(1-dx)) + ...
        acc = e.mul(e.mul(at(y0, x0), ry), rx)
        acc = e.add(acc, e.mul(e.mul(at(y1, x0), dy), rx))
        acc = e.add(acc, e.mul(e.mul(at(y0, x1), ry), dx))
        acc = e.add(acc, e.mul(e.mul(at(y1, x1), dy), dx))
        if quantised:
            # rounded to nearest, halves up (the weights are convex up to
            # float rounding: no clamp needed before narrowing)
            return [q.store_q(e, e.to_int(e.op(math.FloorOp(e.add(acc, e.f32(0.5)))), i32), t)]
        return [acc]

    ctx.generic(oshape, [], [(out, identity_map(4))], body)
