"""The lowering of CONV_2D: the float32 GEMM kernel over output pixels x
output channels (NHWC), the int8 GEMM kernel (quantised, filter known at
compile time), or the generic reduction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nnc.dialects.rules.base import OpCall
from nnc.dialects.rules.conv.window import conv_window
from nnc.enums import OperationType as Op
from nnc.passes.kernels import q8
from nnc.passes.kernels.f32 import Level, Region, dot, gemm
from nnc.passes.kernels.vector import IndexOrInt, Vec
from nnc.passes.lowering.base import (
    Emitter,
    LoweringContext,
    Value,
    lowering,
)
from nnc.passes.lowering.conv.common import (
    TRANSPOSE_MIN_ROWS,
    Loops,
    accumulator,
    check_limits,
    epilogue,
    filter_value,
    mac,
    named_generic,
    q8_gemm_operands,
    q8_residual_add,
    quant_of,
)
from nnc.passes.lowering.conv.geometry import ConvGeometry, padded_input, permuted, segments
from nnc.passes.lowering.conv_q8 import QuantConv


def _check_conv(call: OpCall) -> str | None:
    return check_limits(call, 0, lambda c: conv_window(c, depthwise=False).activation)


def on_kernels(ctx: LoweringContext, g: ConvGeometry, qc: QuantConv | None) -> bool:
    """The call on the CONV_2D kernels, if they take it (NHWC: float32, or
    quantised with the filter known at compile time); False otherwise."""
    if g.nchw:
        return False
    x, w, b, out = ctx.input(0), ctx.input(1), ctx.input(2), ctx.output()
    if qc is None:
        conv_2d_nhwc(ctx, g, x, w, b, out)
        return True
    if (wv := filter_value(ctx)) is not None:
        conv_2d_q8(ctx, g, qc, x, wv, b, out)
        return True
    return False


@lowering(Op.CONV_2D, check=_check_conv)
def conv_2d(ctx: LoweringContext) -> None:
    """out[n, oh, ow, oc] = bias[oc] + sum_{kh, kw, ic} xpad[n, oh*sh + kh*dh, ow*sw + kw*dw, ic]
    * filter[oc, kh, kw, ic] (filter [depth_out, fh, fw, depth_in] in either layout).

    Quantised: accumulated in int32 with the zero points subtracted, then
    requantised per output channel (see :class:`QuantConv`)."""
    g = ConvGeometry.of(ctx, depthwise=False)
    qc = quant_of(ctx, 0, g.activation)
    x, w, b, out = ctx.input(0), ctx.input(1), ctx.input(2), ctx.output()
    if on_kernels(ctx, g, qc):
        return
    channel_dim = 1 if g.nchw else 3
    xp = padded_input(ctx, x, g, 0.0 if qc is None else qc.in_zp)
    acc = accumulator(ctx, qc, out, b, channel_dim)
    wfn: Callable[[Loops], tuple] = lambda d: (d["oc"], d["kh"], d["kw"], d["ic"])
    if g.nchw:
        # The innermost loop walks along an output row; the filter tap is invariant.
        order = ("n", "oc", "ic", "kh", "kw", "oh", "ow")
    elif g.batches * g.out_h * g.out_w >= TRANSPOSE_MIN_ROWS:
        # Per pixel and tap: out[pixel, :] += x[tap, ic] * wt[kh, kw, ic, :].
        w = permuted(ctx, w, (1, 2, 3, 0))
        wfn = lambda d: (d["kh"], d["kw"], d["ic"], d["oc"])
        order = ("n", "oh", "ow", "kh", "kw", "ic", "oc")
    else:
        # A dot product per output element over (kh, kw, ic).
        order = ("n", "oh", "ow", "oc", "kh", "kw", "ic")
    sizes = dict(n=g.batches, oh=g.out_h, ow=g.out_w, oc=g.out_c, kh=g.filter_h, kw=g.filter_w, ic=g.in_c)
    named_generic(
        ctx,
        [(k, sizes[k]) for k in order],
        ("kh", "kw", "ic"),
        [
            (xp, lambda d: g.window_index_of(d["n"], d["oh"], d["ow"], d["kh"], d["kw"], d["ic"])),
            (w, wfn),
        ],
        [(acc, lambda d: g.layout(d["n"], d["oh"], d["ow"], d["oc"]))],
        mac if qc is None else qc.mac,
    )
    epilogue(ctx, qc, acc, out, g.activation, channel_dim)


def conv_2d_nhwc(ctx: LoweringContext, g: ConvGeometry, x: Value, w: Value, b: Value, out: Value) -> None:
    """Float32 NHWC CONV_2D as a GEMM over output pixels x output channels,
    the reduction over (filter row, filter column, input channel) read
    straight from the input -- with padding, through windows clipped to it
    (:func:`clipped_regions`), or from a padded copy when most pixels are
    on the border: :func:`~nnc.passes.kernels.f32.gemm`,
    or :func:`~nnc.passes.kernels.f32.dot` for a 1x1 filter applied to very
    few pixels.  Grouped (GROUPED_CONV_2D): one GEMM per group side by side
    (the GEMM's ``groups``), each reducing over its group's ``c`` channels
    of pixels ``C`` apart."""
    C, c, cols = g.in_c, g.in_c // g.groups, g.out_c // g.groups
    if g.needs_padding and g.groups == 1 and (regions := clipped_regions(g)) is not None:
        # padding fused: border pixels' windows clipped to the input, no padded copy
        w_value = ctx.constant_value(w)
        levels = [Level(g.filter_h, g.dilation_h * g.in_w * C, g.filter_w * c), Level(g.filter_w, g.dilation_w * C, c), Level(c, 1, 1)]
        gemm(ctx, ctx.flat(x), ctx.flat(w) if w_value is None else w, b, ctx.flat(out), 0, lambda e, r: (0, 0), 0, 0,
             cols, levels, g.activation, w_value, epilogue=ctx.take_epilogue(), regions=regions)  # fmt: skip
        return
    xp = padded_input(ctx, x, g)
    hp, wp = g.padded_hw
    pixels = g.batches * g.out_h * g.out_w
    xf, of = ctx.flat(xp), ctx.flat(out)
    plain = g.filter_h == g.filter_w == 1 and g.stride_h == g.stride_w == 1 and not g.needs_padding
    if plain and pixels < ctx.tiles.dot_max_rows and g.groups == 1:
        dot(ctx, xf, ctx.flat(w), b, of, pixels, c, cols, c, g.activation)
        return
    levels = [
        Level(g.filter_h, g.dilation_h * wp * C, g.filter_w * c),
        Level(g.filter_w, g.dilation_w * C, c),
        Level(c, 1, 1),
    ]
    levels = [lv for lv in levels if lv.size > 1] or levels[-1:]
    w_value = ctx.constant_value(w)
    wf = ctx.flat(w) if w_value is None else w  # read only to lay panels out at run time

    if plain:
        # All pixels are one run: pixel p's input is x[p, :].
        gemm(ctx, xf, wf, b, of, 1, lambda e, r: (0, 0), pixels, C, cols, levels, g.activation, w_value, g.groups, c,
             epilogue=ctx.take_epilogue())  # fmt: skip
        return

    def row_at(e: Emitter, r: IndexOrInt) -> tuple[IndexOrInt, IndexOrInt]:
        """Run ``r`` is output row (n, oh) = divmod(r, out_h); its windows start stride_w * c apart."""
        v = Vec(e)
        n: IndexOrInt
        oh: IndexOrInt
        if g.batches == 1:
            n, oh = 0, r
        else:
            n, oh = e.div(e.index(r), e.index(g.out_h)), e.rem(e.index(r), e.index(g.out_h))
        return v.ix(0, (n, hp * wp * C), (oh, g.stride_h * wp * C)), v.ix(0, (r, g.out_w * g.out_c))

    gemm(
        ctx, xf, wf, b, of, g.batches * g.out_h, row_at, g.out_w, g.stride_w * C, cols, levels, g.activation,
        w_value, g.groups, c, epilogue=ctx.take_epilogue(),
    )  # fmt: skip


def clipped_regions(g: ConvGeometry) -> list[Region] | None:
    """The GEMM regions of a padded NHWC CONV_2D read from the unpadded
    input: one per run of output rows x run of output columns whose windows
    see the same taps (:func:`_segments`), the taps in the padding skipped
    (they would add zeros: the sums are the same, in the same order).  A
    region's runs follow its longer side: output rows for the interior and
    the top and bottom borders, output columns for the left and right ones,
    so that border pixels still fill blocks of several pixels; the largest
    region first (the GEMM's tile loop tests the regions in order).  None
    when fewer than half the output pixels see a whole window: then the
    padded copy costs less than many small border blocks."""
    H, W, C = g.in_h, g.in_w, g.in_c
    total = g.out_c
    rows = segments(g.out_h, H, g.stride_h, g.dilation_h, g.pad_top, g.filter_h)
    cols = segments(g.out_w, W, g.stride_w, g.dilation_w, g.pad_left, g.filter_w)
    regions = []
    for r0, r1, kh0, kh1 in rows:
        for q0, q1, kw0, kw1 in cols:
            levels = (Level(kh1 - kh0, g.dilation_h * W * C, g.filter_w * C), Level(kw1 - kw0, g.dilation_w * C, C), Level(C, 1, 1))
            skip = (kh0 * g.filter_w + kw0) * C
            along_rows = q1 - q0 >= r1 - r0
            per_image = r1 - r0 if along_rows else q1 - q0

            def run_at(e: Emitter, t: IndexOrInt, r0=r0, q0=q0, kh0=kh0, kw0=kw0, along_rows=along_rows, per_image=per_image) -> tuple[IndexOrInt, IndexOrInt]:
                v = Vec(e)
                n, i = (0, t) if g.batches == 1 else (e.div(e.index(t), e.index(per_image)), e.rem(e.index(t), e.index(per_image)))
                oh, ow = (v.ix(r0, i), q0) if along_rows else (r0, v.ix(q0, i))
                a_off = v.ix(0, (n, H * W * C), (oh, g.stride_h * W * C), (ow, g.stride_w * C),
                             (kh0 * g.dilation_h - g.pad_top) * W * C + (kw0 * g.dilation_w - g.pad_left) * C)  # fmt: skip
                return a_off, v.ix(0, (n, g.out_h * g.out_w * total), (oh, g.out_w * total), (ow, total))

            if along_rows:
                regions.append(Region(g.batches * (r1 - r0), run_at, q1 - q0, g.stride_w * C, total, levels, skip))
            else:
                regions.append(Region(g.batches * (q1 - q0), run_at, r1 - r0, g.stride_h * W * C, g.out_w * total, levels, skip))
    whole = [(r1 - r0) * (q1 - q0) for r0, r1, kh0, kh1 in rows for q0, q1, kw0, kw1 in cols
             if (kh0, kh1, kw0, kw1) == (0, g.filter_h, 0, g.filter_w)]  # fmt: skip
    if 2 * sum(whole) < g.out_h * g.out_w:
        return None
    return sorted(regions, key=lambda reg: -reg.run_count * reg.run_len // g.batches)


def conv_2d_q8(ctx: LoweringContext, g: ConvGeometry, qc: QuantConv, x: Value, wv: Any, b: Value, out: Value) -> None:
    """Quantised NHWC CONV_2D with a constant filter: the int8 GEMM
    (:func:`~nnc.passes.kernels.q8.gemm`) over output pixels x output
    channels, the reduction over filter rows around a contiguous run of
    (filter column, input channel) when the columns are not dilated (and
    not split into groups: a grouped convolution's GEMMs run side by side,
    each over its group's ``c`` channels of pixels ``C`` apart)."""
    hp, wp = g.padded_hw
    C, c, cols = g.in_c, g.in_c // g.groups, g.out_c // g.groups
    if g.dilation_w == 1 and g.groups == 1:
        levels = [q8.Level(g.filter_h, g.dilation_h * wp * C)]
        run = g.filter_w * c
    else:
        levels = [q8.Level(g.filter_h, g.dilation_h * wp * C), q8.Level(g.filter_w, g.dilation_w * C)]
        run = c
    levels = [lv for lv in levels if lv.size > 1]
    outer = int(np.prod([lv.size for lv in levels]))
    blocks = q8.column_blocks(cols, ctx.tiles.lanes, ctx.tiles.max_col_vectors)
    all_blocks = [(c0 + k * cols, c1 + k * cols, ws) for k in range(g.groups) for c0, c1, ws in blocks]
    w3 = qc.filter_int16(wv).reshape(g.out_c, outer, run)
    ops = q8_gemm_operands(ctx, qc, x, ctx.shape(x), g, w3, all_blocks, b)
    qtab = qc.table(ctx, g.out_c)
    of = ctx.flat(out)
    plain = g.filter_h == g.filter_w == 1 and g.stride_h == g.stride_w == 1 and not g.needs_padding
    if plain:
        pixels = g.batches * g.out_h * g.out_w
        q8.gemm(ctx, ops.x, ops.panel, qtab, ops.bias, of, 1, lambda e, t: (0, 0), pixels, C, cols, levels, run, blocks,
                g.groups, c, form=ops.form, flip=ops.flip, narrow=ops.narrow, add=q8_residual_add(ctx), full=qc.full_range)  # fmt: skip
        return

    def row_at(e: Emitter, t: IndexOrInt) -> tuple[IndexOrInt, IndexOrInt]:
        """One run per output row (n, oh): its windows start stride_w * C apart."""
        n, oh = (0, t) if g.batches == 1 else (e.div(e.index(t), e.index(g.out_h)), e.rem(e.index(t), e.index(g.out_h)))
        v = Vec(e)
        return (v.ix(0, (n, hp * wp * C), (oh, g.stride_h * wp * C)),
                v.ix(0, (n, g.out_h * g.out_w * g.out_c), (oh, g.out_w * g.out_c)))  # fmt: skip

    q8.gemm(ctx, ops.x, ops.panel, qtab, ops.bias, of, g.batches * g.out_h, row_at, g.out_w, g.stride_w * C, cols, levels, run,
            blocks, g.groups, c, form=ops.form, flip=ops.flip, narrow=ops.narrow, add=q8_residual_add(ctx),
            full=qc.full_range)  # fmt: skip
