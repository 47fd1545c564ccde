"""ROI_ALIGN, ROI_POOLING and HEATMAP_MAX_KEYPOINT, computed as Android's
reference kernels (``common/cpu_operations/RoiAlign.cpp``, ``RoiPooling.cpp``,
``HeatmapMaxKeypoint.cpp``) compute them, in the same float32 expressions and
order, so results match to the last bit where the C++ does not contract
multiply-adds.  Float16 operations are computed in float32 (the generic
float16 path); Android's float16 ROI_ALIGN / ROI_POOLING compute the box
arithmetic in half, which the CTS's float16 tolerance covers.

**Boxes** (:func:`roi_boxes`, shared by ROI_ALIGN and ROI_POOLING): one
sequential pass over the rois loads each box (TENSOR_QUANT16_ASYMM
coordinates are ``v * 0.125``), scales it to the feature map
(``coordinate * (1 / ratio)``, ROI_POOLING rounds half away from zero) and
checks it as the reference does: batch index in ``[0, batches)``,
coordinates ``>= 0`` and within the map, ``x1 <= x2``, ``y1 <= y2`` (NaN
fails).  An invalid roi sets the operation's status (``nnc_run`` returns
``k + 1``) and is replaced by the empty box ``(0, 0, 0, 0)`` of batch 0, so
every later loop stays bounded and in bounds.  A zero-filled padding row
(data-dependent sizes run the kernels over a bound of rows) is such a valid
empty box: ``max(width, 1)`` keeps every division well defined.

The output rows (roi, y) run in parallel (:func:`each_bin`); what a row
shares (its box's grid, batch, quantised multiplier) is computed once.

**ROI_ALIGN**: bin ``(i, j)`` of roi ``r`` averages ``h_ratio x w_ratio`` bilinear samples (adaptive ratio 0:
``ceil(bin size)``, a run-time count) at ``start + bin / 2 + bin * k``; a
sample past the last row or column uses that row or column with weight 0.
Float types sum ``w0*v00 + w1*v01 + w2*v10 + w3*v11`` per sample and divide
by the sample count (per channel, in registers); quantised ones weight
``v - zero_point`` by ``round(w / (1.0f / 255))`` in int32 (rounded once
per sample, the channels innermost over an int32 buffer) and requantise the
sum by
``input_scale / 255 / output_scale / count``, a multiplier that depends on
the run-time count: it is computed in float32 as the reference does and
turned into ``QuantizeMultiplierSmallerThanOne``'s (multiplier, shift) from
its bits (exact: a float32 has 24 significant bits; a multiplier >= 1 fails
the operation as it fails Android's).

**ROI_POOLING**: the maximum over ``[floor(start), ceil(end))`` of each bin,
clipped to the map; an empty bin gives the input's zero point (0.0 for
floats), as the reference's initial value.  Quantised values compare as
stored integers.

**HEATMAP_MAX_KEYPOINT**: per (box, keypoint), in parallel: the first
maximum of the heatmap, the 3x3 grid around it (mirrored at the borders),
a second-order Taylor correction of the position (``solveForDelta``; not
applied when the Hessian is near-singular: ``|det| < atol + rtol * a00 *
a11``, 1e-5 each, 1e-3 for float16 as Android's float16 path uses) and the
position mapped into the box.  Quantised operands are dequantised to
float32 and the results quantised back (round half away from zero,
saturated), as the reference does.  A box with ``x1 > x2`` or ``y1 > y2``
sets the status.

Both layouts go through one code path: :class:`Layout` maps (batch,
channel, y, x) to a buffer index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32, i1, i32

from nnc.dialects.rules.detection.roi import BOX_SCALE, roi_params
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.kernels.vector import parallel_each
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import QUANT8, Emitter, IndexLike, LoweringContext, Value, lowering
from nnc.passes.lowering.float16 import FLOAT16_ORIGIN

#: ``constexpr float wScale = 1.0f / 255.0f`` of the quantised ROI_ALIGN
_W_SCALE = float(np.float32(1.0) / np.float32(255.0))
#: ``-FLT_MAX``, the heatmap's initial maximum
_LOWEST = -float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class Layout:
    """Index order of a rank-4 feature map or output (NHWC or NCHW)."""

    nchw: bool

    def index(self, n: Value, c: Value, y: Value, x: Value) -> list[Value]:
        return [n, c, y, x] if self.nchw else [n, y, x, c]

    def hw(self, shape: Sequence[int]) -> tuple[int, int]:
        return (shape[2], shape[3]) if self.nchw else (shape[1], shape[2])


def _ratio_scale(ratio: float) -> float:
    """``1.0f / ratio`` in float32, as the reference's ``heightScale``."""
    return float(np.float32(1.0) / np.float32(ratio))


def load_box(e: Emitter, buf: Value, t: T, row: Value | int) -> list[Value]:
    """The four coordinates of box ``row`` as float32 (quantised: ``v * 0.125``)."""
    out = []
    for k in range(4):
        v = e.load(buf, [row, k])
        if t == T.TENSOR_QUANT16_ASYMM:
            v = e.mul(e.op(arith.UIToFPOp(q.load_q(e, v, t), f32)), e.f32(BOX_SCALE))
        out.append(v)
    return out


def _all(e: Emitter, conds: Sequence[Value]) -> Value:
    acc = conds[0]
    for c in conds[1:]:
        acc = e.and_(acc, c)
    return acc


def _not(e: Emitter, c: Value) -> Value:
    return e.op(arith.XOrIOp(c, e.const(1, i1)))


def roi_boxes(ctx: LoweringContext, layout: Layout, scales: tuple[float, float],
              snap: Callable[[Emitter, Value], Value]) -> tuple[Value, Value]:  # fmt: skip
    """The checked rois of a ROI_ALIGN / ROI_POOLING call on the feature map
    (input 0): ``boxes[r] = snap(coordinate * scale)`` as (x1, y1, x2, y2)
    float32 and ``batch[r]`` (i32), an invalid roi recorded in the status and
    replaced by the empty box of batch 0.  ``scales`` are (height, width)."""
    rois, batch_index = ctx.input(1), ctx.input(2)
    shape = ctx.shape(ctx.input(0))
    batches = shape[0]
    in_h, in_w = layout.hw(shape)
    num = ctx.shape(rois)[0]
    t = ctx.info(1).type
    boxes = ctx.alloc([num, 4], f32)
    batch = ctx.alloc([num], i32)
    h_scale, w_scale = scales

    def body(e: Emitter, r: Value, carried: Sequence[Value]) -> list[Value]:
        x1, y1, x2, y2 = load_box(e, rois, t, r)
        b = e.load(batch_index, [r])
        zero = e.f32(0.0)
        scaled = [e.mul(x1, e.f32(w_scale)), e.mul(y1, e.f32(h_scale)),
                  e.mul(x2, e.f32(w_scale)), e.mul(y2, e.f32(h_scale))]  # fmt: skip
        limits = [in_w, in_h, in_w, in_h]
        valid = _all(e, [
            e.cmp("ge", b, e.i32(0)), e.cmp("lt", b, e.i32(batches)),
            *(e.cmp("ge", v, zero) for v in (x1, y1, x2, y2)),
            *(e.cmp("le", s, e.f32(float(lim))) for s, lim in zip(scaled, limits)),
            e.cmp("le", x1, x2), e.cmp("le", y1, y2),
        ])  # fmt: skip
        ctx.error_if(e, _not(e, valid))
        for k, s in enumerate(scaled):
            e.store(e.select(valid, snap(e, s), zero), boxes, [r, k])
        e.store(e.select(valid, b, e.i32(0)), batch, [r])
        return []

    ctx.e.for_(0, num, body)
    return boxes, batch


def _to_index(e: Emitter, v: Value) -> Value:
    """A non-negative float32 holding an integer (a floor or ceil) as ``index``."""
    return e.index_cast(e.to_int(v, i32))


def _index_to_float(e: Emitter, i: Value) -> Value:
    return e.to_float(i, f32)


@lowering(Op.ROI_ALIGN)
def roi_align(ctx: LoweringContext) -> None:
    p = roi_params(ctx.call)
    layout = Layout(p.nchw)
    x, out = ctx.input(0), ctx.output()
    in_h, in_w = layout.hw(ctx.shape(x))
    scales = (_ratio_scale(p.height_ratio), _ratio_scale(p.width_ratio))
    boxes, batch = roi_boxes(ctx, layout, scales, lambda e, v: v)
    quantised = ctx.info(0).type in QUANT8
    t = ctx.info(0).type
    oinfo = ctx.out_info(0)
    iinfo = ctx.info(0)
    # inputShape.scale * wScale / outputShape.scale, in float32; the run-time
    # part divides by the sample count
    base = float(np.float32(np.float32(iinfo.scale) * np.float32(_W_SCALE)) / np.float32(oinfo.scale)) if quantised else 0.0

    def sampling(e: Emitter, fixed: int, step: Value) -> Value:
        """The sampling ratio: fixed, or ``ceil(step)`` (>= 1: ``step > 0``)."""
        return e.index(fixed) if fixed > 0 else _to_index(e, e.op(math.CeilOp(step)))

    def grid(e: Emitter, r: Value) -> tuple[Value, Value, Value, Value, Value, Value]:
        """Roi ``r``'s (x1, y1, bin width, bin height, sampling ratios w, h)."""
        x1, y1, x2, y2 = (e.load(boxes, [r, k]) for k in range(4))
        one = e.f32(1.0)
        w_step = e.div(e.max(e.sub(x2, x1), one), e.f32(float(p.out_w)))
        h_step = e.div(e.max(e.sub(y2, y1), one), e.f32(float(p.out_h)))
        return x1, y1, w_step, h_step, sampling(e, p.sampling_w, w_step), sampling(e, p.sampling_h, h_step)

    def real_multiplier(e: Emitter, count: Value) -> Value:
        return e.div(e.f32(base), _index_to_float(e, count))

    if quantised and base >= 1.0:
        # Some sample count may make the multiplier >= 1, which fails the
        # operation as QuantizeMultiplierSmallerThanOne fails Android's.
        def check(e: Emitter, r: Value, carried: Sequence[Value]) -> list[Value]:
            *_, w_ratio, h_ratio = grid(e, r)
            real = real_multiplier(e, e.op(arith.MuliOp(w_ratio, h_ratio)))
            ctx.error_if(e, e.cmp("ge", real, e.f32(1.0)))
            return []

        ctx.e.for_(0, ctx.shape(boxes)[0], check)

    def setup(e: Emitter, r: Value, i: Value) -> dict[str, Value]:
        """What output row ``i`` of roi ``r`` shares: its grid and batch,
        the first sample row, the quantised multiplier of its count."""
        x1, y1, w_step, h_step, w_ratio, h_ratio = grid(e, r)
        w_bin = e.div(w_step, _index_to_float(e, w_ratio))
        h_bin = e.div(h_step, _index_to_float(e, h_ratio))
        h_start = e.add(e.mul(h_step, _index_to_float(e, i)), y1)
        state = dict(x1=x1, w_step=w_step, w_ratio=w_ratio, h_ratio=h_ratio, w_bin=w_bin, h_bin=h_bin,
                     h_first=e.add(h_start, e.div(h_bin, e.f32(2.0))), b=e.index_cast(e.load(batch, [r])),
                     count=e.op(arith.MuliOp(w_ratio, h_ratio)))  # fmt: skip
        if quantised:
            state["multiplier"], state["shift"] = _multiplier_smaller_than_one(e, real_multiplier(e, state["count"]))
        return state

    out = ctx.output()
    depth = ctx.shape(out)[1 if p.nchw else 3]
    # Quantised sums live in an int32 buffer of the output's shape, with the
    # channels innermost, so that a sample's rounded weights (a roundf call
    # each) are computed once for all channels; float sums stay in registers
    # (channels outermost: recomputing a sample's weights is cheap).
    acc = ctx.alloc(ctx.shape(out), i32) if quantised else None

    def fold_samples(e: Emitter, s: dict[str, Value], j: Value, init: Sequence[Value],
                     step: Callable[[Emitter, Sequence[Value], list[tuple[Value, Value]], list[Value]], list[Value]],
                     ) -> list[Value]:  # fmt: skip
        """Fold ``step(e, accs, points, weights)`` over the samples of bin
        column ``j`` in the reference's order (rows, then columns): the four
        (y, x) neighbours and their bilinear weights (quantised: rounded to
        1/255)."""
        one = e.f32(1.0)
        w_start = e.add(e.mul(s["w_step"], _index_to_float(e, j)), s["x1"])
        w_first = e.add(w_start, e.div(s["w_bin"], e.f32(2.0)))

        def row(e: Emitter, yi: Value, accs: Sequence[Value]) -> list[Value]:
            yy = e.add(s["h_first"], e.mul(s["h_bin"], _index_to_float(e, yi)))
            ya, yb, dy = _neighbours(e, yy, in_h)

            def col(e: Emitter, xi: Value, accs: Sequence[Value]) -> list[Value]:
                xx = e.add(w_first, e.mul(s["w_bin"], _index_to_float(e, xi)))
                xa, xb, dx = _neighbours(e, xx, in_w)
                dx2, dy2 = e.sub(one, dx), e.sub(one, dy)
                weights = [e.mul(dx2, dy2), e.mul(dx, dy2), e.mul(dx2, dy), e.mul(dx, dy)]
                if quantised:
                    weights = [e.to_int(e.op(math.RoundOp(e.div(w, e.f32(_W_SCALE)))), i32) for w in weights]
                return step(e, accs, [(ya, xa), (ya, xb), (yb, xa), (yb, xb)], weights)

            return e.for_(0, s["w_ratio"], col, accs)

        return e.for_(0, s["h_ratio"], row, init)

    def interpolate(e: Emitter, s: dict[str, Value], c: Value, points, weights: list[Value]) -> Value:
        """``w0*v00 + w1*v01 + w2*v10 + w3*v11`` (quantised: of ``v - zero_point``, in int32)."""
        vals = [e.load(x, layout.index(s["b"], c, yp, xp)) for yp, xp in points]
        if quantised:
            vals = [e.sub(q.load_q(e, v, t), e.i32(iinfo.zero_point)) for v in vals]
        total = e.mul(weights[0], vals[0])
        for w, v in zip(weights[1:], vals[1:]):
            total = e.add(total, e.mul(w, v))
        return total

    def per_bin(e: Emitter, s: dict[str, Value], r: Value, i: Value, j: Value) -> None:
        def at(c: Value) -> list[Value]:
            return layout.index(r, c, i, j)

        if not quantised:
            def average(e: Emitter, c: Value) -> None:
                (total,) = fold_samples(e, s, j, [e.f32(0.0)],
                                        lambda e, accs, pts, ws: [e.add(accs[0], interpolate(e, s, c, pts, ws))])  # fmt: skip
                e.store(e.div(total, _index_to_float(e, s["count"])), out, at(c))

            channels(e, depth, average)
            return

        sums = acc
        assert sums is not None  # quantised
        channels(e, depth, lambda e, c: e.store(e.i32(0), sums, at(c)))

        def add_sample(e: Emitter, accs: Sequence[Value], pts, ws: list[Value]) -> list[Value]:
            channels(e, depth, lambda e, c: e.store(e.add(e.load(sums, at(c)), interpolate(e, s, c, pts, ws)), sums, at(c)))
            return []

        fold_samples(e, s, j, [], add_sample)

        def requantise(e: Emitter, c: Value) -> None:
            ops = q.IR(e)
            scaled = q.ssa(q.rdbpot_runtime(ops, ops.srdhm(e.load(sums, at(c)), s["multiplier"]), s["shift"]))
            e.store(q.store_q(e, e.add(scaled, e.i32(oinfo.zero_point)), oinfo.type), out, at(c))

        channels(e, depth, requantise)

    each_bin(ctx, layout, setup, per_bin)


def channels(e: Emitter, depth: int, fn: Callable[[Emitter, Value], None]) -> None:
    """``fn(e, c)`` for every channel ``c`` (a loop)."""

    def body(e: Emitter, c: Value, carried: Sequence[Value]) -> list[Value]:
        fn(e, c)
        return []

    e.for_(0, depth, body)


def each_bin(ctx: LoweringContext, layout: Layout, setup: Callable[[Emitter, Value, Value], dict[str, Value]],
             per_bin: Callable[[Emitter, dict[str, Value], Value, Value, Value], None]) -> None:  # fmt: skip
    """``per_bin(e, setup(e, r, i), r, i, j)`` writes the channels of output
    bin (row i, column j) of roi r of ROI_ALIGN / ROI_POOLING: what a row
    shares is computed once, and the rows (r, i) run in parallel (each
    writes its own elements; the status was written before)."""
    shape = ctx.shape(ctx.output())
    out_h, out_w = layout.hw(shape)

    def row(e: Emitter, k: Value | int) -> None:
        k = e.index(k)
        r, i = e.op(arith.DivUIOp(k, e.index(out_h))), e.op(arith.RemUIOp(k, e.index(out_h)))
        state = setup(e, r, i)

        def column(e: Emitter, j: Value, carried: Sequence[Value]) -> list[Value]:
            per_bin(e, state, r, i, j)
            return []

        e.for_(0, out_w, column)

    parallel_each(ctx.e, 0, shape[0] * out_h, 1, row)


def _neighbours(e: Emitter, v: Value, size: int) -> tuple[Value, Value, Value]:
    """The reference's bilinear neighbours of coordinate ``v >= 0`` on an axis
    of ``size``: ``(floor, floor + 1, v - floor)``, or ``(size - 1, size - 1,
    0)`` from the last position on."""
    fl = e.floor(v)
    lo = e.max(_to_index(e, fl), e.index(0))
    last = e.index(size - 1)
    past = e.cmp("ge", lo, last)
    frac = e.select(past, e.f32(0.0), e.sub(v, fl))
    lo = e.select(past, last, lo)
    hi = e.select(past, last, e.add(lo, e.index(1)))
    return lo, hi, frac


def _multiplier_smaller_than_one(e: Emitter, real: Value) -> tuple[Value, Value]:
    """``QuantizeMultiplierSmallerThanOne(real)`` for a float32 ``real`` in
    [0, 1): frexp gives ``real = m * 2^-shift`` with ``m`` in [0.5, 1), whose
    24-bit significand times 2^31 is the significand shifted left by 7 (no
    rounding).  0 gives (0, 0); the shift is clamped to 31 (a subnormal
    multiplier), so no shift is undefined."""
    bits = e.op(arith.BitcastOp(real, i32))
    mantissa = e.or_(e.and_(bits, e.i32(0x7FFFFF)), e.i32(0x800000))
    multiplier = e.op(arith.ShLIOp(mantissa, e.i32(7)))
    exponent = e.and_(e.op(arith.ShRUIOp(bits, e.i32(23))), e.i32(0xFF))
    shift = e.min(e.max(e.sub(e.i32(126), exponent), e.i32(0)), e.i32(31))
    is_zero = e.cmp("eq", bits, e.i32(0))
    return e.select(is_zero, e.i32(0), multiplier), e.select(is_zero, e.i32(0), shift)


@lowering(Op.ROI_POOLING)
def roi_pooling(ctx: LoweringContext) -> None:
    p = roi_params(ctx.call)
    layout = Layout(p.nchw)
    x, out = ctx.input(0), ctx.output()
    in_h, in_w = layout.hw(ctx.shape(x))
    scales = (_ratio_scale(p.height_ratio), _ratio_scale(p.width_ratio))
    boxes, batch = roi_boxes(ctx, layout, scales, lambda e, v: e.op(math.RoundOp(v)))
    t = ctx.info(0).type
    quantised = t in QUANT8

    def bin_range(e: Emitter, step: Value, start: Value, k: Value, size: int) -> tuple[Value, Value]:
        """``[floor(step * k + start), ceil(step * (k + 1) + start))`` clipped to ``size``."""
        lo = e.floor(e.add(e.mul(step, _index_to_float(e, k)), start))
        hi = e.op(math.CeilOp(e.add(e.mul(step, _index_to_float(e, e.add(k, e.index(1)))), start)))
        clip = e.index(size)
        return e.min(e.max(_to_index(e, lo), e.index(0)), clip), e.min(e.max(_to_index(e, hi), e.index(0)), clip)

    def setup(e: Emitter, r: Value, i: Value) -> dict[str, Value]:
        x1, y1, x2, y2 = (e.load(boxes, [r, k]) for k in range(4))
        one = e.f32(1.0)
        w_step = e.div(e.max(e.add(e.sub(x2, x1), one), one), e.f32(float(p.out_w)))
        h_step = e.div(e.max(e.add(e.sub(y2, y1), one), one), e.f32(float(p.out_h)))
        h0, h1 = bin_range(e, h_step, y1, i, in_h)
        return dict(x1=x1, w_step=w_step, h0=h0, h1=h1, b=e.index_cast(e.load(batch, [r])))

    depth = ctx.shape(out)[1 if p.nchw else 3]

    def per_bin(e: Emitter, s: dict[str, Value], r: Value, i: Value, j: Value) -> None:
        w0, w1 = bin_range(e, s["w_step"], s["x1"], j, in_w)
        channels(e, depth, lambda e, c: e.store(bin_max(e, s, c, w0, w1), out, layout.index(r, c, i, j)))

    def bin_max(e: Emitter, s: dict[str, Value], c: Value, w0: Value, w1: Value) -> Value:
        init = e.const(ctx.info(0).zero_point, i32) if quantised else e.f32(0.0)

        def row(e: Emitter, yy: Value, accs: Sequence[Value]) -> list[Value]:
            def col(e: Emitter, xx: Value, accs: Sequence[Value]) -> list[Value]:
                best, first = accs
                v = e.load(x, layout.index(s["b"], c, yy, xx))
                v = q.load_q(e, v, t) if quantised else v
                take = e.or_(first, e.cmp("gt", v, best))
                return [e.select(take, v, best), e.const(0, i1)]

            return e.for_(w0, w1, col, accs)

        best, _ = e.for_(s["h0"], s["h1"], row, [init, e.const(1, i1)])
        return q.store_q(e, best, t, saturate=False) if quantised else best

    each_bin(ctx, layout, setup, per_bin)


# -- HEATMAP_MAX_KEYPOINT -------------------------------------------------------------------------


def _std_max(e: Emitter, a: Value, b: Value) -> Value:
    """``std::max(a, b)``: ``a < b ? b : a``."""
    return e.select(e.cmp("lt", a, b), b, a)


def _solve_for_delta(e: Emitter, g: list[list[Value]], score: Value, tol: float) -> tuple[Value, Value, Value]:
    """The reference's ``solveForDelta``: (delta_x, delta_y, score) of the
    quadratic fit of the 3x3 grid ``g`` (rows y, columns x), or (0, 0,
    ``score``) when the Hessian is near-singular."""
    two, four = e.f32(2.0), e.f32(4.0)
    b0 = e.div(e.neg(e.sub(g[1][2], g[1][0])), two)
    b1 = e.div(e.neg(e.sub(g[2][1], g[0][1])), two)
    a00 = e.add(e.sub(g[1][0], e.mul(two, g[1][1])), g[1][2])
    a01 = e.div(e.add(e.sub(e.sub(g[2][2], g[2][0]), g[0][2]), g[0][0]), four)
    a10 = a01
    a11 = e.add(e.sub(g[0][1], e.mul(two, g[1][1])), g[2][1])
    cross1, cross2 = e.mul(a00, a11), e.mul(a01, a10)
    det = e.sub(cross1, cross2)
    singular = e.cmp("lt", e.abs(det), e.add(e.f32(tol), e.mul(e.f32(tol), cross1)))
    d0 = e.div(e.sub(e.mul(a11, b0), e.mul(a01, b1)), det)
    d1 = e.div(e.sub(e.mul(a00, b1), e.mul(a10, b0)), det)
    limit = e.f32(1.5)
    m0, m1 = e.abs(d0), e.abs(d1)
    clip = e.or_(e.cmp("gt", m0, limit), e.cmp("gt", m1, limit))
    factor = e.div(limit, _std_max(e, m0, m1))
    d0 = e.select(clip, e.mul(d0, factor), d0)
    d1 = e.select(clip, e.mul(d1, factor), d1)
    quad = e.add(e.mul(e.add(e.mul(a00, d0), e.mul(a01, d1)), d0), e.mul(e.add(e.mul(a10, d0), e.mul(a11, d1)), d1))
    fitted = e.add(e.sub(e.sub(g[1][1], e.mul(b0, d0)), e.mul(b1, d1)), e.div(quad, two))
    zero = e.f32(0.0)
    return e.select(singular, zero, d0), e.select(singular, zero, d1), e.select(singular, score, fitted)


def _dequantize(e: Emitter, v: Value, t: T, scale: float, zero_point: int) -> Value:
    """``(float(v) - zero_point) * scale`` (the reference's convertQuantToFloat32)."""
    if t not in QUANT8:
        return v
    f = e.to_float(q.load_q(e, v, t), f32)
    return e.mul(e.sub(f, e.f32(float(zero_point))), e.f32(scale))


def _quantize(e: Emitter, v: Value, t: T, scale: float, zero_point: int) -> Value:
    """``saturate(round(v / scale + zero_point))`` (convertFloat32ToQuant);
    clamped in float first so the conversion is defined for any value."""
    lo, hi = q.QRANGE[t]
    r = e.op(math.RoundOp(e.add(e.div(v, e.f32(scale)), e.f32(float(zero_point)))))
    r = e.min(e.max(r, e.f32(float(lo))), e.f32(float(hi)))
    return q.store_q(e, e.to_int(r, i32), t, saturate=False)


@lowering(Op.HEATMAP_MAX_KEYPOINT)
def heatmap_max_keypoint(ctx: LoweringContext) -> None:
    heatmap, boxes = ctx.input(0), ctx.input(1)
    scores, points = ctx.output(0), ctx.output(1)
    layout = Layout(bool(ctx.scalar(2)))
    shape = ctx.shape(heatmap)
    num, size = shape[0], shape[2]
    keypoints = shape[1] if layout.nchw else shape[3]
    hinfo, binfo = ctx.info(0), ctx.info(1)
    sinfo, pinfo = ctx.out_info(0), ctx.out_info(1)
    t, bt = hinfo.type, binfo.type
    tol = 1e-3 if ctx.extra.get(FLOAT16_ORIGIN) else 1e-5

    def check(e: Emitter, n: Value, carried: Sequence[Value]) -> list[Value]:
        x1, y1, x2, y2 = load_box(e, boxes, bt, n)
        ctx.error_if(e, _not(e, e.and_(e.cmp("le", x1, x2), e.cmp("le", y1, y2))))
        return []

    ctx.e.for_(0, num, check)

    def value(e: Emitter, n: Value, k: Value, y: Value, xx: Value) -> Value:
        v = e.load(heatmap, layout.index(n, k, y, xx))
        return _dequantize(e, v, t, hinfo.scale, hinfo.zero_point)

    def mirror(e: Emitter, v: Value, d: int) -> Value:
        """``v + d`` reflected into [0, size): -1 -> 1, size -> size - 2."""
        if d < 0:
            return e.select(e.cmp("eq", v, e.index(0)), e.index(1), e.sub(v, e.index(1)))
        if d > 0:
            return e.select(e.cmp("ge", e.add(v, e.index(1)), e.index(size)), e.index(size - 2), e.add(v, e.index(1)))
        return v

    def one(e: Emitter, at: IndexLike) -> None:
        item = e.index(at)  # a Python int when there is a single item (no loop)
        n = e.op(arith.DivUIOp(item, e.index(keypoints)))
        k = e.op(arith.RemUIOp(item, e.index(keypoints)))

        def row(e: Emitter, y: Value, best: Sequence[Value]) -> list[Value]:
            def col(e: Emitter, xx: Value, best: Sequence[Value]) -> list[Value]:
                score, by, bx = best
                v = value(e, n, k, y, xx)
                take = e.cmp("lt", score, v)
                return [e.select(take, v, score), e.select(take, y, by), e.select(take, xx, bx)]

            return e.for_(0, size, col, best)

        score, my, mx = e.for_(0, size, row, [e.f32(_LOWEST), e.index(0), e.index(0)])
        ys = [mirror(e, my, d) for d in (-1, 0, 1)]
        xs = [mirror(e, mx, d) for d in (-1, 0, 1)]
        grid = [[value(e, n, k, yy, xx) for xx in xs] for yy in ys]
        d0, d1, fitted = _solve_for_delta(e, grid, score, tol)
        x1, y1, x2, y2 = load_box(e, boxes, bt, n)
        fsize = e.f32(float(size))
        half = e.f32(0.5)
        w_rel = e.div(e.add(e.add(_index_to_float(e, mx), d0), half), fsize)
        h_rel = e.div(e.add(e.add(_index_to_float(e, my), d1), half), fsize)
        px = e.add(e.mul(w_rel, e.sub(x2, x1)), x1)
        py = e.add(e.mul(h_rel, e.sub(y2, y1)), y1)
        if t in QUANT8:
            fitted = _quantize(e, fitted, sinfo.type, sinfo.scale, sinfo.zero_point)
            px = _quantize(e, px, pinfo.type, pinfo.scale, pinfo.zero_point)
            py = _quantize(e, py, pinfo.type, pinfo.scale, pinfo.zero_point)
        e.store(fitted, scores, [n, k])
        e.store(px, points, [n, k, 0])
        e.store(py, points, [n, k, 1])

    parallel_each(ctx.e, 0, num * keypoints, 1, one)

