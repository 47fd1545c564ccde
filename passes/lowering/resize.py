"""Lowerings of RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.

RESIZE_NEAREST_NEIGHBOR computes its source coordinates in float32 in the
body of a generic over the output; RESIZE_BILINEAR reads them from tables
made at compile time with the same float32 arithmetic
(:func:`source_coords`).  RESIZE_NEAREST_NEIGHBOR and an NCHW
RESIZE_BILINEAR read the input with ``memref.load`` (a gather); an NHWC
RESIZE_BILINEAR reads each source pixel's channels as vectors
(:func:`_bilinear_rows`).
RESIZE_NEAREST_NEIGHBOR copies the element tflite's ``GetNearestNeighbor``
picks.  RESIZE_BILINEAR interpolates in float32; for quantised tensors it
interpolates the stored integers and rounds to nearest, halves up: the
numbers NNAPI's conformance tests expect (Android's reference template
truncates, within their one-unit tolerance; docs/tflite.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32, i8, i32

from nnc.enums import OperandType
from nnc.enums import OperationType as Op
from nnc.passes.kernels.f32 import parallel_cases
from nnc.passes.kernels.vector import IndexOrInt, IVec, Vec, each, kernel, offsets, widths
from nnc.passes.kernels.vmath import MAGIC, MAGIC_BITS
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
    if not nchw:
        _bilinear_rows(ctx, x, out, rows, source_coords(out_w, in_w, w_scale, half_pixel), quantised, same)
        return
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


def _bilinear_rows(ctx: LoweringContext, x: Value, out: Value, rows: list[Value],
                   cols: tuple[np.ndarray, np.ndarray, np.ndarray], quantised: bool, same: bool) -> None:  # fmt: skip
    """NHWC RESIZE_BILINEAR as a kernel per output row (the rows of every
    image one parallel loop): per output pixel, its two source columns'
    offsets and its column fraction from tables made at compile time, and
    its channels as vectors: each of the four source pixels' channels is
    one contiguous load (widened to float32 lanes), interpolated lane by
    lane with :func:`resize_bilinear`'s float32 operations in the same
    order (the same results), rounded and stored.  A gather per element
    kept LLVM from vectorising the generic over the output.  ``same``: both
    axes resize alike, so one channel's column tables are the row tables."""
    batches, in_h, in_w, chans = ctx.shape(x)
    _, out_h, out_w, _ = ctx.shape(out)
    x0, x1, fx = cols
    col_tabs = rows if same and chans == 1 else [
        ctx.constant((x0 * chans).astype(np.int32), i32), ctx.constant((x1 * chans).astype(np.int32), i32), ctx.constant(fx, f32)]  # fmt: skip
    t = ctx.info(0).type
    xf, of = ctx.flat(x), ctx.flat(out)
    ws = widths(chans, ctx.tiles.lanes)
    elem = "f32" if not quantised else ("u8" if q.is_unsigned(t) else "s8")
    name = f"nnc_resize_bilinear_c{chans}_w{out_w}_{elem}"

    def body(e: Emitter, p: list[Value]) -> None:
        each(e, 0, out_w, 1, lambda e2, ox: _bilinear_pixel(e2, ox, p, ws, chans, quantised, t))

    def row(e: Emitter, r: IndexOrInt) -> None:
        v = Vec(e)
        n, oy = (0, r) if batches == 1 else (e.div(e.index(r), e.index(out_h)), e.rem(e.index(r), e.index(out_h)))
        y0, y1 = (e.index_cast(e.load(tab, [e.index(oy)])) for tab in rows[:2])
        dy = e.load(rows[2], [e.index(oy)])
        image = v.ix(0, (n, in_h))
        bases = [v.ix(0, (v.ix(image, y), in_w * chans)) for y in (y0, y1)]
        kernel(ctx, e, name, [xf, of, *col_tabs, *bases, v.ix(0, (r, out_w * chans)), dy], body)

    parallel_cases(ctx.shared_e(), [(batches * out_h, row)])


def _bilinear_pixel(e: Emitter, ox: IndexOrInt, p: list[Value], ws: list[int], chans: int, quantised: bool,
                    t: OperandType) -> None:  # fmt: skip
    """Output pixel ``ox`` of :func:`_bilinear_rows`' row kernel (``p``: its
    parameters), ``ws`` channels at a time."""
    xs, os, cx0, cx1, cdx, base0, base1, obase, dy = p
    v, iv = Vec(e), IVec(e)
    a0, a1 = (e.index_cast(e.load(tab, [ox])) for tab in (cx0, cx1))
    dx = e.load(cdx, [ox])
    one = e.f32(1.0)
    weights = [e.sub(one, dy), e.sub(one, dx), dy, dx]

    def mul(a: Value, b: Value) -> Value:
        return e.op(arith.MulfOp(a, b))

    def add(a: Value, b: Value) -> Value:
        return e.op(arith.AddfOp(a, b))

    def source(off: IndexOrInt, w: int) -> Value:
        """``w`` channels of a source pixel at ``off``, as float32 lanes."""
        if not quantised:
            return v.load(xs, off, w)
        raw = iv.load(xs, off, i8, w)
        wide = iv.zext(raw, i32) if q.is_unsigned(t) else iv.sext(raw, i32)
        return iv.to_float(wide)

    for w, c0 in zip(ws, offsets(ws)):
        ry, rx, dy_, dx_ = (v.splat(s, w) for s in weights)
        # Same association as the C++: ((v00*(1-dy))*(1-dx) + (v10*dy)*(1-dx)) + ...
        acc = mul(mul(source(v.ix(base0, a0, c0), w), ry), rx)
        acc = add(acc, mul(mul(source(v.ix(base1, a0, c0), w), dy_), rx))
        acc = add(acc, mul(mul(source(v.ix(base0, a1, c0), w), ry), dx_))
        acc = add(acc, mul(mul(source(v.ix(base1, a1, c0), w), dy_), dx_))
        dst = v.ix(obase, (ox, chans), c0)
        if not quantised:
            v.store(acc, os, dst)
            continue
        # rounded to nearest, halves up (a whole number of at most 9 bits:
        # its int32 is the low bits of it plus 1.5 x 2^23, with no
        # saturating conversion), clamped to the type's range
        whole = e.floor(add(acc, v.const(0.5, w)))
        r = iv.sub(iv.bitcast(add(whole, v.const(MAGIC, w)), i32, w), iv.const(MAGIC_BITS, i32, w))
        lo, hi = q.QRANGE[t]
        iv.store(iv.trunc(iv.max(iv.min(r, iv.const(hi, i32, w)), iv.const(lo, i32, w)), i8), os, dst)
