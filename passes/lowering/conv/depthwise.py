"""The lowering of DEPTHWISE_CONV_2D: the float32 and int8 depthwise kernels
over interior and border runs of output pixels (NHWC, multiplier 1), or the
generic reduction.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import i8, i16, i32

from nnc.dialects.rules.base import OpCall
from nnc.dialects.rules.conv.window import conv_window
from nnc.enums import OperationType as Op
from nnc.passes.kernels import q8
from nnc.passes.kernels.f32 import Case, dw_kernel, parallel_cases
from nnc.passes.kernels.tiles import DepthwiseForm, DepthwiseStrides, GemmForm, depthwise_strides
from nnc.passes.kernels.vector import IndexOrInt, Vec, each, kernel, widths
from nnc.passes.lowering.base import (
    Emitter,
    LoweringContext,
    Value,
    identity_map,
    lowering,
)
from nnc.passes.lowering.conv.common import (
    Loops,
    accumulator,
    check_limits,
    epilogue,
    mac,
    named_generic,
    quant_of,
)
from nnc.passes.lowering.conv.geometry import ConvGeometry, padded_input, segments
from nnc.passes.lowering.conv_q8 import QuantConv
from nnc.passes.lowering.quant import is_unsigned

#: The largest window whose borders and short runs take the quads' unrolled
#: kernel (``clipped``) rather than the loop over the taps inside the input.
#: Measured on Zen 4 (AVX512-VNNI): 3x3 borders in quads made MobileNetV1
#: and V2 int8 4% faster for about 0.1 s of LLVM each; MobileNetV3's 5x5
#: ones another 3% for 1.6 s.
CLIPPED_QUADS_MAX_TAPS = 9


def _check_depthwise(call: OpCall) -> str | None:
    return check_limits(call, 3, lambda c: conv_window(c, depthwise=True).activation)


@lowering(Op.DEPTHWISE_CONV_2D, check=_check_depthwise)
def depthwise_conv_2d(ctx: LoweringContext) -> None:
    """out[n, oh, ow, ic*M + m] = bias[ic*M + m] + sum_{kh, kw}
    xpad[n, oh*sh + kh*dh, ow*sw + kw*dw, ic] * filter[0, kh, kw, ic*M + m]
    (filter [1, fh, fw, depth_out], M the depth multiplier).

    Quantised: accumulated in int32 with the zero points subtracted, then
    requantised per output channel (see :class:`QuantConv`)."""
    g = ConvGeometry.of(ctx, depthwise=True)
    qc = quant_of(ctx, 3, g.activation)
    x, w, b, out = ctx.input(0), ctx.input(1), ctx.input(2), ctx.output()
    m = g.multiplier
    if qc is None and not g.nchw and m == 1:
        _depthwise_nhwc(ctx, g, x, w, b, out)
        return
    if qc is not None and not g.nchw and m == 1:
        _depthwise_q8(ctx, g, qc, x, w, b, out)
        return
    channel_dim = 1 if g.nchw else 3
    xp = padded_input(ctx, x, g, 0.0 if qc is None else qc.in_zp)
    acc = accumulator(ctx, qc, out, b, channel_dim)
    # With a multiplier, the output channel ic*M + m is split into two loops
    # over views of the output and the filter ([.., ic, M, ..]), which keeps
    # every index a plain sum (no floordiv in the window index).
    wfn: Callable[[Loops], tuple]
    ofn: Callable[[Loops], tuple]
    if m > 1:
        w = ctx.reshaped(w, [g.filter_h, g.filter_w, g.in_c, m])
        wfn = lambda d: (d["kh"], d["kw"], d["ic"], d["m"])
        if g.nchw:
            ov = ctx.reshaped(acc, [g.batches, g.in_c, m, g.out_h, g.out_w])
            ofn = lambda d: (d["n"], d["ic"], d["m"], d["oh"], d["ow"])
        else:
            ov = ctx.reshaped(acc, [g.batches, g.out_h, g.out_w, g.in_c, m])
            ofn = lambda d: (d["n"], d["oh"], d["ow"], d["ic"], d["m"])
    else:
        ov = acc
        wfn = lambda d: (0, d["kh"], d["kw"], d["ic"])
        ofn = lambda d: g.layout(d["n"], d["oh"], d["ow"], d["ic"])
    if g.nchw:
        # The innermost loop walks along an output row.
        order = ("n", "ic", "m", "oh", "kh", "kw", "ow")
    else:
        # The channels are the innermost parallel loops (contiguous in input,
        # filter and output); LLVM unrolls the small tap loops inside them.
        order = ("n", "oh", "ow", "ic", "m", "kh", "kw")
    sizes = dict(n=g.batches, oh=g.out_h, ow=g.out_w, ic=g.in_c, m=m, kh=g.filter_h, kw=g.filter_w)
    named_generic(
        ctx,
        [(k, sizes[k]) for k in order if k != "m" or m > 1],
        ("kh", "kw"),
        [
            (xp, lambda d: g.window_index_of(d["n"], d["oh"], d["ow"], d["kh"], d["kw"], d["ic"])),
            (w, wfn),
        ],
        [(ov, ofn)],
        mac if qc is None else qc.mac,
    )
    epilogue(ctx, qc, acc, out, g.activation, channel_dim)




#: a depthwise kernel call: (e, x_row, o_row, ow0, npix, (kh0, kh1), (kw0, kw1), tail)
DwCall = Callable[[Emitter, IndexOrInt, IndexOrInt, IndexOrInt, int, tuple[int, int], tuple[int, int], bool], None]


def _dw_runs(ctx: LoweringContext, g: ConvGeometry, call: DwCall, block: int) -> None:
    """The output split into runs of rows and of columns whose windows see
    the same taps (:func:`segments`), so border pixels skip the taps in the
    padding (which would add nothing) and no padded copy is made: ``call``
    computes ``npix`` pixels from output column ``ow0`` of the row whose
    column 0 reads the input from ``x_row`` (possibly before the row: its
    window may start in the padding) and is written at ``o_row``, with the
    taps ``[kh0, kh1) x [kw0, kw1)``; runs are cut into blocks of
    ``block`` pixels.  A ``tail`` (the few pixels after a run's full
    blocks, or a whole run shorter than a block: the interior of a small
    image) loops over its taps even when they are the whole window, with
    the kernels of the borders, instead of adding a large unrolled body per
    pixel count for a few pixels per row (MobileNetV3's 5x5 windows on
    5x5 and 10x10 images ran no faster with theirs, which cost LLVM as
    much as a full block's).  The rows of all
    runs and images are one parallel loop (:func:`parallel_cases`)."""
    e = ctx.shared_e()
    C, H, W = g.out_c, g.in_h, g.in_w
    row_runs = segments(g.out_h, H, g.stride_h, g.dilation_h, g.pad_top, g.filter_h)
    col_runs = segments(g.out_w, W, g.stride_w, g.dilation_w, g.pad_left, g.filter_w)

    def rows(r0: int, r1: int, kh: tuple[int, int]) -> Case:
        """The rows [r0, r1) of every image, whose windows see the taps ``kh``."""

        def row(e: Emitter, t: IndexOrInt) -> None:
            v = Vec(e)
            n, i = (0, t) if g.batches == 1 else (e.div(e.index(t), e.index(r1 - r0)), e.rem(e.index(t), e.index(r1 - r0)))
            oh = v.ix(r0, i)
            # the row's offsets once (output column 0's window may start in the padding)
            x_row = v.ix(0, (n, H * W * C), (oh, g.stride_h * W * C), -(g.pad_top * W + g.pad_left) * C)
            o_row = v.ix(0, (n, g.out_h * g.out_w * C), (oh, g.out_w * C))
            for q0, q1, kw0, kw1 in col_runs:
                npix = block
                full = q0 + (q1 - q0) // npix * npix

                def pixels(e2: Emitter, ow0: IndexOrInt, npix: int = npix, kw: tuple[int, int] = (kw0, kw1)) -> None:
                    call(e2, x_row, o_row, ow0, npix, kh, kw, False)

                each(e, q0, full, npix, pixels)
                if q1 > full:
                    call(e, x_row, o_row, full, q1 - full, kh, (kw0, kw1), True)

        return g.batches * (r1 - r0), row

    # Rows are independent (each writes its own output row): all of them, of
    # every run, are one parallel loop, so the border rows do not run alone.
    parallel_cases(e, [rows(r0, r1, (kh0, kh1)) for r0, r1, kh0, kh1 in row_runs])


def _window_args(g: ConvGeometry, x_row: IndexOrInt, ow0: IndexOrInt, v: Vec) -> list[IndexOrInt]:
    """The kernels' window parameters: the first pixel's input offset, the
    distance between pixels, between tap rows and tap columns in the input,
    and between tap rows in the filter."""
    C, W = g.out_c, g.in_w
    return [v.ix(x_row, (ow0, g.stride_w * C)), g.stride_w * C, g.dilation_h * W * C, g.dilation_w * C, g.filter_w * C]


def _whole(g: ConvGeometry, kh: tuple[int, int], kw: tuple[int, int], tail: bool) -> tuple[int, int] | None:
    """The window to unroll, or None when the kernel loops over clipped taps."""
    return (g.filter_h, g.filter_w) if not tail and kh == (0, g.filter_h) and kw == (0, g.filter_w) else None


def _depthwise_nhwc(ctx: LoweringContext, g: ConvGeometry, x: Value, w: Value, b: Value, out: Value) -> None:
    """DEPTHWISE_CONV_2D, NHWC float32, depth multiplier 1, straight from the
    unpadded input (:func:`_dw_runs`); the interior uses the kernel with
    the window unrolled."""
    xf, wf, of = ctx.flat(x), ctx.flat(w), ctx.flat(out)
    C, lanes = g.out_c, ctx.tiles.lanes
    cfull = C // lanes * lanes
    tails = tuple(widths(C - cfull, lanes))

    def call(e: Emitter, x_row: IndexOrInt, o_row: IndexOrInt, ow0: IndexOrInt, npix: int, kh: tuple[int, int], kw: tuple[int, int], tail: bool) -> None:
        v = Vec(e)
        name, body = dw_kernel(npix, _whole(g, kh, kw, tail), tails, g.activation, lanes)
        args = [xf, wf, b, of, cfull, C, *_window_args(g, x_row, ow0, v), *kh, *kw, v.ix(o_row, (ow0, C))]
        kernel(ctx, e, name, args, body)

    _dw_runs(ctx, g, call, ctx.tiles.dw_q8_pixels)


def _depthwise_q8(ctx: LoweringContext, g: ConvGeometry, qc: QuantConv, x: Value, w: Value, b: Value, out: Value) -> None:
    """Quantised NHWC DEPTHWISE_CONV_2D, multiplier 1: the int8 depthwise
    kernel (:func:`~nnc.passes.kernels.q8.dw_kernel`) straight from the
    stored input (:func:`_dw_runs`), the filter widened to int16 minus its
    zero point: at compile time when it is a constant (a loop of constant
    trip count per layer would be vectorised and fully unrolled by LLVM:
    thousands of instructions of the entry function to optimise and run
    every time), else at run time (it may be a run-time input).  The
    interior kernel takes the layer's strides as constants or as
    parameters (``ctx.dw_strides``, else by the size of the layer:
    :func:`~nnc.passes.kernels.tiles.depthwise_strides`), and with a pair
    or quad ``ctx.dw_form`` (``nnc-choose-kernels``) and a constant filter
    it multiplies tap pairs or quads; the quads need a constant bias (it
    holds the flipped inputs' offset) and weights that fit int8, else the
    layer takes VNNI's pairs."""
    taps = g.filter_h * g.filter_w
    value = ctx.constant_value(w)
    bias_value = ctx.constant_value(b)
    unsigned = is_unsigned(qc.in_type)
    form = DepthwiseForm.WIDEN
    zx = qc.in_zp  # the quads' zero point: moved as their inputs are flipped
    packed: Value | None = None
    corrected: Value | None = None
    if value is not None:
        centred = qc.filter_int16(value).reshape(taps, g.out_c)
        w16 = ctx.packed_constant(centred.reshape(-1), i16)
        form = ctx.dw_form
        if form.quads and not (bias_value is not None and q8.quads_fit(centred)):
            form = DepthwiseForm.VPDPWSSD  # the same instructions' pair form
        if form.quads:
            zx -= q8.quad_input_offset(unsigned, GemmForm.VPDPBUSD)
            packed = ctx.packed_constant(q8.dw_quad_weights(centred), i8)
        elif form.pairs:
            packed = ctx.packed_constant(q8.dw_pair_weights(centred), i16)
        if bias_value is not None:
            corrected = ctx.packed_constant(q8.dw_corrected_bias(np.asarray(bias_value), centred, zx), i32)
    else:
        w16 = ctx.alloc([taps * g.out_c], i16)
        ctx.generic(
            [taps * g.out_c], [(ctx.flat(w), identity_map(1))], [(w16, identity_map(1))],
            lambda e, a, idx: [qc.widen(e, a[0], qc.filter_type, qc.filter_zp)],
        )  # fmt: skip
    xf, of, qtab = ctx.flat(x), ctx.flat(out), qc.table(ctx, g.out_c)
    C, lanes = g.out_c, ctx.tiles.lanes
    cfull = C // lanes * lanes
    tails = tuple(widths(C - cfull, lanes))
    constant_strides = (ctx.dw_strides or depthwise_strides(g.out_h * g.out_w)) is DepthwiseStrides.CONSTANT

    def call(e: Emitter, x_row: IndexOrInt, o_row: IndexOrInt, ow0: IndexOrInt, npix: int, kh: tuple[int, int], kw: tuple[int, int], tail: bool) -> None:
        v = Vec(e)
        whole = _whole(g, kh, kw, tail)
        # the interior kernel: the layer's strides as constants where chosen
        # (the loads' addresses are then a base and a displacement each, not
        # a register per tap and pixel), the zero point's share in its bias,
        # tap pairs or quads where the form says so; the quads serve the
        # borders and short runs too (the taps inside the input masked at
        # run time, ``clipped``) unless no tap is inside (a loop over none)
        geo = (C, g.stride_w * C, g.dilation_h * g.in_w * C, g.dilation_w * C) if whole is not None and constant_strides else None
        clipped = whole is None and form.quads and kh[0] < kh[1] and kw[0] < kw[1] and taps <= CLIPPED_QUADS_MAX_TAPS
        kind = form if whole is not None or clipped else DepthwiseForm.WIDEN
        fixed = whole is not None and corrected is not None
        window = (g.filter_h, g.filter_w) if clipped else whole
        name, body = q8.dw_kernel(npix, window, tails, lanes, unsigned, kind, geo, fixed, clipped, qc.full_range)
        weights = packed if kind is not DepthwiseForm.WIDEN and packed is not None else w16
        start = corrected if fixed and corrected is not None else b
        args = [xf, weights, qtab, start, of, cfull, C, *_window_args(g, x_row, ow0, v), *kh, *kw, v.ix(o_row, (ow0, C)),
                zx if clipped else qc.in_zp]  # fmt: skip
        kernel(ctx, e, name, args, body)

    _dw_runs(ctx, g, call, ctx.tiles.dw_q8_pixels)
