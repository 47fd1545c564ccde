"""Convolutions and FULLY_CONNECTED (float32, and quantised 8-bit): the
lowerings of the conv family, which choose how each call is computed.

Float32 CONV_2D and DEPTHWISE_CONV_2D in NHWC (depth multiplier 1) and
float32 FULLY_CONNECTED use the register-blocked vector kernels of
:mod:`nnc.passes.kernels.f32`, blocked by the compilation's tile policy
(``ctx.tiles``): a GEMM over output pixels x output channels whose
reduction reads the (padded) input windows directly (:func:`_conv_2d_nhwc`),
a depthwise kernel applied to runs of output pixels split into interior and
border runs instead of padding (:func:`_depthwise_nhwc`), and dot products
for a FULLY_CONNECTED of few rows (:func:`fully_connected_f32`).  They start
from the bias, apply the fused activation in registers and write each output
once.

Quantised (8-bit) NHWC CONV_2D and FULLY_CONNECTED with a filter known at
compile time, and NHWC DEPTHWISE_CONV_2D with depth multiplier 1, use the
int8 kernels of :mod:`nnc.passes.kernels.q8` (int32 accumulators in vector
registers, the filter packed with numpy, the requantisation in the kernel's
epilogue; bit-identical to the generic path below): see
:func:`_conv_2d_q8`, :func:`_depthwise_q8`, :func:`_fully_connected_q8`.

Every other case (NCHW, depth multiplier > 1, a quantised filter given at
run time) is lowered to three to five ``linalg.generic`` ops:

1. (only when some window reaches outside the input) the input is copied into
   the interior of a zero-filled temporary, so that the hot loop needs no
   bounds checks: a window tap becomes a plain affine index into the padded
   buffer (:func:`padded_input`, :meth:`ConvGeometry.window_index_of`);
2. the output is initialised with the bias, broadcast along the channels;
3. (CONV_2D in NHWC with enough output pixels, FULLY_CONNECTED with enough
   batches) the weights are transposed into a temporary, see
   :data:`TRANSPOSE_MIN_ROWS`;
4. one reduction generic accumulates into the output, with the output-pixel
   loops outermost and the reduction loops inside them;
5. (only with a fused activation) an in-place clamp of the output.

The geometry (layout, explicit padding computed like Android's
``calculateExplicitPadding``, strides, dilations, multiplier) lives in
:class:`ConvGeometry`; together with :func:`padded_input` and
:func:`named_generic` it is shared by the float and the quantised variants,
which differ only in the accumulator, the body and the epilogue: for
quantised inputs those come from :class:`~nnc.passes.lowering.conv_q8.QuantConv`
(int32 accumulation with the zero points subtracted, then requantisation
like Android's reference CPU path; see :mod:`nnc.passes.lowering.conv_q8`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, i8, i16, i32
from xdsl.ir.affine import AffineExpr, AffineMap

from nnc.dialects.rules.base import OpCall
from nnc.dialects.rules.conv import (
    TransposeWindow,
    Window,
    conv_window,
    grouped_conv_window,
    join_layout,
    transpose_conv_window,
)
from nnc.enums import FuseCode
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.kernels import q8
from nnc.passes.kernels.f32 import Level, Region, dot, dw_kernel, gemm
from nnc.passes.kernels.vector import IndexOrInt, Vec, each, kernel, parallel_each, widths
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    activation,
    affine_map,
    identity_map,
    lowering,
    memref_elem,
)
from nnc.passes.lowering.conv_q8 import QuantConv, QuantConvError
from nnc.passes.lowering.quant import is_unsigned
from nnc.passes.target import Int8Dot

# -- geometry ------------------------------------------------------------------------------


def explicit_padding(
    in_size: int, out_size: int, stride: int, dilation: int, filter_size: int
) -> tuple[int, int]:
    """Android's ``calculateExplicitPadding`` for an implicit scheme, given the
    output size the scheme produced: (head, tail).  VALID yields (0, 0)."""
    effective = (filter_size - 1) * dilation + 1
    total = max((out_size - 1) * stride + effective - in_size, 0)
    head = total // 2
    return head, total - head


@dataclass(frozen=True)
class ConvGeometry:
    """Sizes and window parameters of one CONV_2D / DEPTHWISE_CONV_2D call."""

    nchw: bool
    batches: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_top: int
    pad_left: int
    multiplier: int = 1
    activation: int = FuseCode.NONE
    #: GROUPED_CONV_2D: input and output channels split into this many groups
    groups: int = 1

    @staticmethod
    def of(ctx: LoweringContext, depthwise: bool) -> ConvGeometry:
        return ConvGeometry.from_window(ctx, conv_window(ctx.call, depthwise))

    @staticmethod
    def from_window(ctx: LoweringContext, win: Window, groups: int = 1) -> ConvGeometry:
        x, w, out = ctx.input(0), ctx.input(1), ctx.output()
        n, h, wd, c = _split(ctx.shape(x), win.nchw)
        _, oh, ow, oc = _split(ctx.shape(out), win.nchw)
        fshape = ctx.shape(w)
        fh, fw = fshape[1], fshape[2]
        if win.explicit is not None:
            left, _right, top, _bottom = win.explicit
        else:
            top, _ = explicit_padding(h, oh, win.stride_h, win.dilation_h, fh)
            left, _ = explicit_padding(wd, ow, win.stride_w, win.dilation_w, fw)
        return ConvGeometry(
            win.nchw, n, h, wd, c, oh, ow, oc, fh, fw,
            win.stride_h, win.stride_w, win.dilation_h, win.dilation_w,
            top, left, win.multiplier, win.activation, groups,
        )  # fmt: skip

    # The rows/columns of the padded input that some window reads.
    @property
    def needed_h(self) -> int:
        return (self.out_h - 1) * self.stride_h + (self.filter_h - 1) * self.dilation_h + 1

    @property
    def needed_w(self) -> int:
        return (self.out_w - 1) * self.stride_w + (self.filter_w - 1) * self.dilation_w + 1

    @property
    def needs_padding(self) -> bool:
        return (
            self.pad_top > 0
            or self.pad_left > 0
            or self.needed_h > self.in_h
            or self.needed_w > self.in_w
        )

    @property
    def padded_hw(self) -> tuple[int, int]:
        """Height and width of the padded input (the input itself if no padding)."""
        if not self.needs_padding:
            return self.in_h, self.in_w
        return (
            max(self.pad_top + self.in_h, self.needed_h),
            max(self.pad_left + self.in_w, self.needed_w),
        )

    def layout(self, n, h, w, c) -> tuple:
        return join_layout(n, h, w, c, self.nchw)

    def window_index(self, oh: AffineExpr, ow: AffineExpr, kh: AffineExpr, kw: AffineExpr):
        """(row, column) in the padded input read by output (oh, ow), tap (kh, kw)."""
        return (
            oh * self.stride_h + kh * self.dilation_h,
            ow * self.stride_w + kw * self.dilation_w,
        )

    def window_index_of(self, n, oh, ow, kh, kw, c) -> tuple:
        """Indices into the padded input (in its layout) of one window tap."""
        h, w = self.window_index(oh, ow, kh, kw)
        return self.layout(n, h, w, c)


def _split(shape: Sequence[int], nchw: bool) -> tuple[int, int, int, int]:
    if nchw:
        return shape[0], shape[2], shape[3], shape[1]
    return shape[0], shape[1], shape[2], shape[3]


def padded_input(ctx: LoweringContext, x: Value, g: ConvGeometry, pad_value: float | int = 0.0) -> Value:
    """``x`` itself, or a copy surrounded by ``pad_value`` (0.0 for float, the
    zero point for quantised inputs) large enough for every window."""
    if not g.needs_padding:
        return x
    return padded_copy(ctx, x, g.nchw, (g.pad_top, g.pad_left), g.padded_hw, pad_value)


def padded_copy(
    ctx: LoweringContext, x: Value, nchw: bool, head: tuple[int, int], size: tuple[int, int], pad_value: float | int
) -> Value:
    """A copy of the rank-4 ``x`` at rows/columns ``head`` of a buffer of
    spatial ``size`` filled with ``pad_value``."""
    n, _, _, c = _split(ctx.shape(x), nchw)
    elem = memref_elem(x)
    buf = ctx.alloc(join_layout(n, size[0], size[1], c, nchw), elem)
    ctx.fill(buf, pad_value)
    # The input goes into the interior, a static subview at (top, left).
    interior = strided_view(ctx, buf, join_layout(0, head[0], head[1], 0, nchw), ctx.shape(x), [1] * 4)
    ctx.copy(x, interior)
    return buf


def strided_view(ctx: LoweringContext, buf: Value, offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int]) -> Value:
    """The static subview of ``buf`` at ``offsets`` with ``sizes`` and ``strides``."""
    assert isinstance(buf.type, MemRefType)
    view = memref.SubviewOp.from_static_parameters(buf, buf.type, list(offsets), list(sizes), list(strides))
    ctx.builder.insert(view)
    return view.result


def init_with_bias(ctx: LoweringContext, out: Value, bias: Value, channel_dim: int) -> None:
    """``out[..., c, ...] = bias[c]`` with ``c`` at ``channel_dim``."""
    shape = ctx.shape(out)
    bmap = affine_map(len(shape), lambda *d: (d[channel_dim],))
    ctx.generic(shape, [(bias, bmap)], [(out, identity_map(len(shape)))], lambda e, a, idx: [a[0]])


def apply_activation(ctx: LoweringContext, out: Value, code: int) -> None:
    """Clamp ``out`` in place for a fused activation (nothing for NONE)."""
    if code == FuseCode.NONE:
        return
    shape = ctx.shape(out)
    ctx.generic(
        shape, [], [(out, identity_map(len(shape)))], lambda e, a, idx: [activation(e, a[0], code)]
    )


def permuted(ctx: LoweringContext, src: Value, perm: Sequence[int]) -> Value:
    """A temporary copy of ``src`` with its dimensions reordered like numpy's
    ``src.transpose(perm)``: dimension ``k`` of the copy is ``perm[k]`` of ``src``."""
    shape = ctx.shape(src)
    dst = ctx.alloc([shape[p] for p in perm], memref_elem(src))
    dmap = affine_map(len(shape), lambda *d: tuple(d[p] for p in perm))
    ctx.generic(shape, [(src, identity_map(len(shape)))], [(dst, dmap)], lambda e, a, idx: [a[0]])
    return dst


#: With at least this many output rows (pixels, or FULLY_CONNECTED batches),
#: the weights are first transposed so that the innermost loop runs along the
#: output channels / units, contiguous in both the transposed weights and the
#: output, which LLVM vectorises (with strict float semantics a dot-product
#: inner loop over the input depth cannot be).  Below it the transposition
#: would cost as much as the product itself.
TRANSPOSE_MIN_ROWS = 4


def _mac(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
    """acc + x * w for generics with ins (x, w) and outs (acc)."""
    return [e.add(a[2], e.mul(a[0], a[1]))]


Loops = dict[str, AffineExpr]


def named_generic(
    ctx: LoweringContext,
    loops: Sequence[tuple[str, int]],
    reductions: Sequence[str],
    ins: Sequence[tuple[Value, Callable[[Loops], Sequence[AffineExpr | int]]]],
    outs: Sequence[tuple[Value, Callable[[Loops], Sequence[AffineExpr | int]]]],
    body,
) -> None:
    """:meth:`LoweringContext.generic` with named loops, outermost first; each
    operand's map is a function of ``{name: dim}``."""
    names = [n for n, _ in loops]
    rank = len(names)

    def amap(fn) -> AffineMap:
        return affine_map(rank, lambda *d: fn(dict(zip(names, d))))

    ctx.generic(
        [size for _, size in loops],
        [(b, amap(fn)) for b, fn in ins],
        [(b, amap(fn)) for b, fn in outs],
        body,
        reduction_dims=[names.index(r) for r in reductions],
    )


def _quant_of(ctx: LoweringContext, channel_dim: int | None, activation: int) -> QuantConv | None:
    if ctx.info(0).type not in QUANT8:
        return None
    return QuantConv.of(ctx.call, channel_dim, activation)


def _check(call: OpCall, channel_dim: int | None, activation: Callable[[OpCall], int]) -> str | None:
    """The ``check`` hook: which filter/bias types (and quantisation
    parameters) of a supported input type are implemented."""
    x, w, b = call.inputs[0], call.inputs[1], call.inputs[2]
    if x.type == T.TENSOR_FLOAT32:
        if w.type != T.TENSOR_FLOAT32 or b.type != T.TENSOR_FLOAT32:
            return (
                f"filter {w.type.name} / bias {b.type.name} with a TENSOR_FLOAT32 input not implemented"
            )
        return None
    try:
        QuantConv.of(call, channel_dim, activation(call))
    except QuantConvError as e:
        return f"quantised {call.type.name}: {e}"
    return None


def _check_conv(call: OpCall) -> str | None:
    return _check(call, 0, lambda c: conv_window(c, depthwise=False).activation)


def _check_depthwise(call: OpCall) -> str | None:
    return _check(call, 3, lambda c: conv_window(c, depthwise=True).activation)


def _check_fully_connected(call: OpCall) -> str | None:
    return _check(call, None, lambda c: c.scalar(3))


# -- CONV_2D -------------------------------------------------------------------------------


@lowering(Op.CONV_2D, check=_check_conv)
def conv_2d(ctx: LoweringContext) -> None:
    """out[n, oh, ow, oc] = bias[oc] + sum_{kh, kw, ic} xpad[n, oh*sh + kh*dh, ow*sw + kw*dw, ic]
    * filter[oc, kh, kw, ic] (filter [depth_out, fh, fw, depth_in] in either layout).

    Quantised: accumulated in int32 with the zero points subtracted, then
    requantised per output channel (see :class:`QuantConv`)."""
    g = ConvGeometry.of(ctx, depthwise=False)
    qc = _quant_of(ctx, 0, g.activation)
    x, w, b, out = ctx.input(0), ctx.input(1), ctx.input(2), ctx.output()
    if qc is None and not g.nchw:
        _conv_2d_nhwc(ctx, g, x, w, b, out)
        return
    if qc is not None and not g.nchw and (wv := filter_value(ctx)) is not None:
        _conv_2d_q8(ctx, g, qc, x, wv, b, out)
        return
    channel_dim = 1 if g.nchw else 3
    xp = padded_input(ctx, x, g, 0.0 if qc is None else qc.in_zp)
    acc = _accumulator(ctx, qc, out, b, channel_dim)
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
        _mac if qc is None else qc.mac,
    )
    _epilogue(ctx, qc, acc, out, g.activation, channel_dim)


def _conv_2d_nhwc(ctx: LoweringContext, g: ConvGeometry, x: Value, w: Value, b: Value, out: Value) -> None:
    """Float32 NHWC CONV_2D as a GEMM over output pixels x output channels,
    the reduction over (filter row, filter column, input channel) read
    straight from the input -- with padding, through windows clipped to it
    (:func:`_clipped_regions`), or from a padded copy when most pixels are
    on the border: :func:`~nnc.passes.kernels.f32.gemm`,
    or :func:`~nnc.passes.kernels.f32.dot` for a 1x1 filter applied to very
    few pixels.  Grouped (GROUPED_CONV_2D): one GEMM per group side by side
    (the GEMM's ``groups``), each reducing over its group's ``c`` channels
    of pixels ``C`` apart."""
    C, c, cols = g.in_c, g.in_c // g.groups, g.out_c // g.groups
    if g.needs_padding and g.groups == 1 and (regions := _clipped_regions(g)) is not None:
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


def _clipped_regions(g: ConvGeometry) -> list[Region] | None:
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
    rows = _segments(g.out_h, H, g.stride_h, g.dilation_h, g.pad_top, g.filter_h)
    cols = _segments(g.out_w, W, g.stride_w, g.dilation_w, g.pad_left, g.filter_w)
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


def _accumulator(ctx: LoweringContext, qc, out: Value, bias: Value, channel_dim: int) -> Value:
    """The buffer the reduction accumulates into, initialised with the bias:
    the output itself for float, an int32 temporary when quantised."""
    acc = out if qc is None else ctx.alloc(ctx.shape(out), i32)
    init_with_bias(ctx, acc, bias, channel_dim)
    return acc


def _epilogue(ctx: LoweringContext, qc, acc: Value, out: Value, activation: int, channel_dim: int) -> None:
    """Fused activation in place (float) or requantisation into ``out``."""
    if qc is None:
        apply_activation(ctx, out, activation)
    else:
        qc.requantize(ctx, acc, out, channel_dim)


# -- DEPTHWISE_CONV_2D ----------------------------------------------------------------------


@lowering(Op.DEPTHWISE_CONV_2D, check=_check_depthwise)
def depthwise_conv_2d(ctx: LoweringContext) -> None:
    """out[n, oh, ow, ic*M + m] = bias[ic*M + m] + sum_{kh, kw}
    xpad[n, oh*sh + kh*dh, ow*sw + kw*dw, ic] * filter[0, kh, kw, ic*M + m]
    (filter [1, fh, fw, depth_out], M the depth multiplier).

    Quantised: accumulated in int32 with the zero points subtracted, then
    requantised per output channel (see :class:`QuantConv`)."""
    g = ConvGeometry.of(ctx, depthwise=True)
    qc = _quant_of(ctx, 3, g.activation)
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
    acc = _accumulator(ctx, qc, out, b, channel_dim)
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
        _mac if qc is None else qc.mac,
    )
    _epilogue(ctx, qc, acc, out, g.activation, channel_dim)


def _segments(out_size: int, in_size: int, stride: int, dilation: int, pad: int, taps: int):
    """Runs of output positions whose window sees the same range of taps
    inside the input: [(first, end, tap_lo, tap_hi)].  The interior is one
    run; the borders (where the window reaches into the padding) are short."""
    runs: list[tuple[int, int, int, int]] = []
    for o in range(out_size):
        origin = o * stride - pad
        valid = [k for k in range(taps) if 0 <= origin + k * dilation < in_size]
        lo, hi = (valid[0], valid[-1] + 1) if valid else (0, 0)
        if runs and runs[-1][1] == o and runs[-1][2:] == (lo, hi):
            runs[-1] = (runs[-1][0], o + 1, lo, hi)
        else:
            runs.append((o, o + 1, lo, hi))
    return runs


def _depthwise_nhwc(ctx: LoweringContext, g: ConvGeometry, x: Value, w: Value, b: Value, out: Value) -> None:
    """DEPTHWISE_CONV_2D, NHWC float32, depth multiplier 1, straight from the
    unpadded input: the output is split into runs of rows and of columns
    whose windows see the same taps (:func:`_segments`), so border pixels
    skip the taps in the padding (which would add zeros) and no padded copy
    is made.  The interior uses the kernel with the window unrolled."""
    e = ctx.shared_e()
    xf, wf, of = ctx.flat(x), ctx.flat(w), ctx.flat(out)
    C, H, W = g.out_c, g.in_h, g.in_w
    row_runs = _segments(g.out_h, H, g.stride_h, g.dilation_h, g.pad_top, g.filter_h)
    col_runs = _segments(g.out_w, W, g.stride_w, g.dilation_w, g.pad_left, g.filter_w)
    lanes = ctx.tiles.lanes
    cfull = C // lanes * lanes
    tails = tuple(widths(C - cfull, lanes))

    def call(e: Emitter, x_row: IndexOrInt, o_row: IndexOrInt, ow0: IndexOrInt, npix: int, kh: tuple[int, int], kw: tuple[int, int], tail: bool = False) -> None:
        """``npix`` pixels from output column ``ow0`` of the row whose column 0
        reads the input from ``x_row`` and is written at ``o_row``.  A
        ``tail`` (the few pixels after a run's full blocks) loops over its
        taps even when they are the whole window, with the kernels of the
        borders, instead of adding a large unrolled body per tail size for
        a few pixels per row."""
        v = Vec(e)
        whole = not tail and kh == (0, g.filter_h) and kw == (0, g.filter_w)
        name, body = dw_kernel(npix, (g.filter_h, g.filter_w) if whole else None, tails, g.activation, lanes)
        args = [
            xf, wf, b, of, cfull, C, v.ix(x_row, (ow0, g.stride_w * C)), g.stride_w * C, g.dilation_h * W * C,
            g.dilation_w * C, g.filter_w * C, *kh, *kw, v.ix(o_row, (ow0, C)),
        ]  # fmt: skip
        kernel(ctx, e, name, args, body)

    def image(e: Emitter, n: IndexOrInt) -> None:
        for r0, r1, kh0, kh1 in row_runs:
            def row(e: Emitter, oh: IndexOrInt, kh=(kh0, kh1)) -> None:
                # the row's offsets once (output column 0's window may start in the padding)
                v = Vec(e)
                x_row = v.ix(0, (n, H * W * C), (oh, g.stride_h * W * C), -(g.pad_top * W + g.pad_left) * C)
                o_row = v.ix(0, (n, g.out_h * g.out_w * C), (oh, g.out_w * C))
                for q0, q1, kw0, kw1 in col_runs:
                    npix = min(ctx.tiles.dw_pixels, q1 - q0)
                    full = q0 + (q1 - q0) // npix * npix
                    def pixels(e2: Emitter, ow0: IndexOrInt, npix: int = npix, kw: tuple[int, int] = (kw0, kw1)) -> None:
                        call(e2, x_row, o_row, ow0, npix, kh, kw)

                    each(e, q0, full, npix, pixels)
                    if q1 > full:
                        call(e, x_row, o_row, full, q1 - full, kh, (kw0, kw1), tail=True)

            # Rows are independent: each writes its own output row.
            parallel_each(e, r0, r1, 1, row)

    each(e, 0, g.batches, 1, image)


# -- GROUPED_CONV_2D -------------------------------------------------------------------------


def _check_grouped(call: OpCall) -> str | None:
    return _check(call, 0, lambda c: grouped_conv_window(c)[0].activation)


@lowering(Op.GROUPED_CONV_2D, check=_check_grouped)
def grouped_conv_2d(ctx: LoweringContext) -> None:
    """out[n, oh, ow, G*cog + oc] = bias[G*cog + oc] + sum_{kh, kw, ic}
    xpad[n, oh*sh + kh, ow*sw + kw, G*cig + ic] * filter[G*cog + oc, kh, kw, ic]
    for group G of ``groups`` (cig, cog: input and output channels per group).

    Every group is a CONV_2D on its slice of the channels: the same kernels
    with the group as one more loop (see :func:`_grouped_generic`)."""
    win, groups = grouped_conv_window(ctx.call)
    g = ConvGeometry.from_window(ctx, win, groups)
    qc = _quant_of(ctx, 0, g.activation)
    x, w, b, out = ctx.input(0), ctx.input(1), ctx.input(2), ctx.output()
    if qc is None and not g.nchw:
        _conv_2d_nhwc(ctx, g, x, w, b, out)
        return
    if qc is not None and not g.nchw and (wv := filter_value(ctx)) is not None:
        _conv_2d_q8(ctx, g, qc, x, wv, b, out)
        return
    _grouped_generic(ctx, g, qc, x, w, b, out)


def _grouped_generic(ctx: LoweringContext, g: ConvGeometry, qc: QuantConv | None, x: Value, w: Value, b: Value, out: Value) -> None:
    """Any grouped convolution as one reduction generic over views that
    split the channels into (group, channel in group): contiguous reshapes
    of the (padded) input, the filter and the accumulator."""
    channel_dim = 1 if g.nchw else 3
    xp = padded_input(ctx, x, g, 0.0 if qc is None else qc.in_zp)
    acc = _accumulator(ctx, qc, out, b, channel_dim)
    G, cig, cog = g.groups, g.in_c // g.groups, g.out_c // g.groups
    hp, wp = g.padded_hw
    wv = ctx.reshaped(w, [G, cog, g.filter_h, g.filter_w, cig])
    xfn: Callable[[Loops], tuple]
    afn: Callable[[Loops], tuple]
    if g.nchw:
        xv = ctx.reshaped(xp, [g.batches, G, cig, hp, wp])
        av = ctx.reshaped(acc, [g.batches, G, cog, g.out_h, g.out_w])
        xfn = lambda d: (d["n"], d["g"], d["ic"], *g.window_index(d["oh"], d["ow"], d["kh"], d["kw"]))
        afn = lambda d: (d["n"], d["g"], d["oc"], d["oh"], d["ow"])
        order = ("n", "g", "oc", "ic", "kh", "kw", "oh", "ow")
    else:
        xv = ctx.reshaped(xp, [g.batches, hp, wp, G, cig])
        av = ctx.reshaped(acc, [g.batches, g.out_h, g.out_w, G, cog])
        xfn = lambda d: (d["n"], *g.window_index(d["oh"], d["ow"], d["kh"], d["kw"]), d["g"], d["ic"])
        afn = lambda d: (d["n"], d["oh"], d["ow"], d["g"], d["oc"])
        order = ("n", "oh", "ow", "g", "oc", "kh", "kw", "ic")
    sizes = dict(n=g.batches, g=G, oh=g.out_h, ow=g.out_w, oc=cog, kh=g.filter_h, kw=g.filter_w, ic=cig)
    named_generic(
        ctx,
        [(k, sizes[k]) for k in order],
        ("kh", "kw", "ic"),
        [(xv, xfn), (wv, lambda d: (d["g"], d["oc"], d["kh"], d["kw"], d["ic"]))],
        [(av, afn)],
        _mac if qc is None else qc.mac,
    )
    _epilogue(ctx, qc, acc, out, g.activation, channel_dim)


# -- TRANSPOSE_CONV_2D -----------------------------------------------------------------------


@dataclass(frozen=True)
class Phase:
    """The outputs of one dimension of a TRANSPOSE_CONV_2D that see the same
    filter taps (sub-pixel decomposition): outputs ``first + j * stride``
    (``j < count``) are an ordinary stride-1 correlation of the input with
    the ``taps`` filter taps ``tap0, tap0 + stride, ...`` in reverse order:
    output ``j``, window position ``u < taps`` reads input ``start + j + u``
    times filter tap ``tap0 + (taps - 1 - u) * stride``.  (The reference
    scatters input ``h`` to outputs ``h * stride - pad + tap``; an output
    ``o`` gathers the taps ``(o + pad - h * stride)``, all congruent to
    ``o + pad`` modulo the stride.)"""

    tap0: int
    taps: int
    first: int
    count: int
    start: int

    def tap(self, u: int, stride: int) -> int:
        return self.tap0 + (self.taps - 1 - u) * stride


def transpose_phases(out_size: int, filter_size: int, stride: int, pad: int) -> list[Phase]:
    """The phases of one dimension that have outputs (a phase without taps,
    when the stride exceeds the filter, is bias only)."""
    phases = []
    for r in range(stride):
        first = (r - pad) % stride
        count = max(0, -(-(out_size - first) // stride))
        taps = len(range(r, filter_size, stride))
        if count:
            phases.append(Phase(r, taps, first, count, (first + pad) // stride - (taps - 1)))
    return phases


def _extent(phases: Sequence[Phase], in_size: int) -> tuple[int, int]:
    """(zero rows before the input, padded size) so that every phase's
    windows lie inside the padded input."""
    used = [p for p in phases if p.taps]
    lo = min((p.start for p in used), default=0)
    hi = max((p.start + p.count + p.taps - 1 for p in used), default=in_size)
    head = max(0, -lo)
    return head, head + max(in_size, hi)


@dataclass(frozen=True)
class TransposeGeometry:
    """Sizes and sub-pixel phases of one TRANSPOSE_CONV_2D call."""

    nchw: bool
    batches: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    activation: int
    rows: tuple[Phase, ...]
    cols: tuple[Phase, ...]

    @staticmethod
    def of(ctx: LoweringContext) -> TransposeGeometry:
        win: TransposeWindow = transpose_conv_window(ctx.call)
        assert win.pads is not None
        left, _, top, _ = win.pads
        n, h, wd, c = _split(ctx.shape(ctx.input(0)), win.nchw)
        _, oh, ow, oc = _split(ctx.shape(ctx.output()), win.nchw)
        _, fh, fw, _ = ctx.shape(ctx.input(1))
        return TransposeGeometry(
            win.nchw, n, h, wd, c, oh, ow, oc, fh, fw, win.stride_h, win.stride_w, win.activation,
            tuple(transpose_phases(oh, fh, win.stride_h, top)), tuple(transpose_phases(ow, fw, win.stride_w, left)),
        )  # fmt: skip

    @property
    def pad_head(self) -> tuple[int, int]:
        return _extent(self.rows, self.in_h)[0], _extent(self.cols, self.in_w)[0]

    @property
    def padded_hw(self) -> tuple[int, int]:
        return _extent(self.rows, self.in_h)[1], _extent(self.cols, self.in_w)[1]

    @property
    def needs_padding(self) -> bool:
        return self.pad_head != (0, 0) or self.padded_hw != (self.in_h, self.in_w)

    @property
    def holes(self) -> bool:
        """Some outputs get no filter tap (a stride above the filter size)."""
        return any(p.taps == 0 for p in (*self.rows, *self.cols))

    def layout(self, n, h, w, c) -> tuple:
        return join_layout(n, h, w, c, self.nchw)


def _check_transpose(call: OpCall) -> str | None:
    return _check(call, 0, lambda c: transpose_conv_window(c).activation)


@lowering(Op.TRANSPOSE_CONV_2D, check=_check_transpose)
def transpose_conv_2d(ctx: LoweringContext) -> None:
    """out[n, o_y, o_x, k] = bias[k] + sum x[n, h, w, d] * filter[k, i, j, d]
    over o_y = h*sh - pad_top + i, o_x = w*sw - pad_left + j (the reference
    scatters each input pixel through the filter).

    Computed as a gather, phase by phase (:class:`Phase`): the outputs of one
    phase (o_y, o_x modulo the strides) form an ordinary stride-1
    convolution of the zero-padded input with a sub-filter, so every output
    is computed once, from the bias, with no multiplication by inserted
    zeros.  Quantised: int32 accumulation, then the requantisation of
    :class:`QuantConv` (the reference's arithmetic)."""
    g = TransposeGeometry.of(ctx)
    qc = _quant_of(ctx, 0, g.activation)
    x, w, b, out = ctx.input(0), ctx.input(1), ctx.input(2), ctx.output()
    if qc is None and not g.nchw and not g.holes:
        _transpose_nhwc(ctx, g, x, w, b, out)
        return
    if qc is not None and not g.nchw and not g.holes and (wv := filter_value(ctx)) is not None:
        _transpose_q8(ctx, g, qc, x, wv, b, out)
        return
    _transpose_generic(ctx, g, qc, x, w, b, out)


def _transpose_input(ctx: LoweringContext, g: TransposeGeometry, x: Value, pad_value: float | int) -> Value:
    """``x``, or a zero-padded (``pad_value``) copy every phase's windows fit in."""
    if not g.needs_padding:
        return x
    return padded_copy(ctx, x, g.nchw, g.pad_head, g.padded_hw, pad_value)


def _phase_filter(ctx: LoweringContext, w: Value, g: TransposeGeometry, py: Phase, px: Phase) -> Value:
    """The sub-filter of phase (py, px) as a temporary ``[out_c, py.taps,
    px.taps, in_c]``, window position (u, v) holding tap (py.tap(u), px.tap(v))."""
    sub = ctx.alloc([g.out_c, py.taps, px.taps, g.in_c], memref_elem(w))
    src = affine_map(4, lambda k, u, v, d: (
        k, u * -g.stride_h + py.tap(0, g.stride_h), v * -g.stride_w + px.tap(0, g.stride_w), d))
    ctx.generic(ctx.shape(sub), [(w, src)], [(sub, identity_map(4))], lambda e, a, idx: [a[0]])
    return sub


def _phase_output(ctx: LoweringContext, buf: Value, g: TransposeGeometry, py: Phase, px: Phase) -> Value:
    """The view of ``buf`` (output-shaped) holding phase (py, px)'s outputs."""
    return strided_view(
        ctx, buf, g.layout(0, py.first, px.first, 0), g.layout(g.batches, py.count, px.count, g.out_c),
        g.layout(1, g.stride_h, g.stride_w, 1),
    )  # fmt: skip


def _phase_filter_value(wv: np.ndarray, g: TransposeGeometry, py: Phase, px: Phase) -> np.ndarray:
    """:func:`_phase_filter` of a filter known at compile time, with numpy."""
    rows = [py.tap(u, g.stride_h) for u in range(py.taps)]
    cols = [px.tap(v, g.stride_w) for v in range(px.taps)]
    return np.ascontiguousarray(np.asarray(wv)[:, rows][:, :, cols])


def _transpose_nhwc(ctx: LoweringContext, g: TransposeGeometry, x: Value, w: Value, b: Value, out: Value) -> None:
    """Float32 NHWC TRANSPOSE_CONV_2D on the GEMM kernels, one GEMM per
    phase: its output pixels are the phase's (every ``stride``-th pixel of
    an output row: the GEMM's ``ldo``), its runs the phase's rows, its
    reduction the sub-filter's taps over the padded input, whose windows
    for consecutive outputs of a phase are consecutive input pixels.  Every
    output belongs to one phase and is written once, bias and activation
    included."""
    xp = _transpose_input(ctx, g, x, 0.0)
    xf, of = ctx.flat(xp), ctx.flat(out)
    hp, wp = g.padded_hw
    top, left = g.pad_head
    C, K = g.in_c, g.out_c
    wv = ctx.constant_value(w)
    for py in g.rows:
        for px in g.cols:
            levels = [Level(py.taps, wp * C, px.taps * C), Level(px.taps, C, C), Level(C, 1, 1)]
            levels = [lv for lv in levels if lv.size > 1] or levels[-1:]
            if wv is not None:
                sub_value = _phase_filter_value(wv, g, py, px)
                sub: Value = w
            else:
                sub_value, sub = None, ctx.flat(_phase_filter(ctx, w, g, py, px))

            def run_at(e: Emitter, r: IndexOrInt, py=py, px=px) -> tuple[IndexOrInt, IndexOrInt]:
                """Run ``r`` is row ``j`` of the phase in image ``n``: (n, j) = divmod(r, rows)."""
                v = Vec(e)
                n: IndexOrInt
                j: IndexOrInt
                if g.batches == 1:
                    n, j = 0, r
                else:
                    n, j = e.div(e.index(r), e.index(py.count)), e.rem(e.index(r), e.index(py.count))
                a = v.ix((py.start + top) * wp * C + (px.start + left) * C, (n, hp * wp * C), (j, wp * C))
                o = v.ix((py.first * g.out_w + px.first) * K, (n, g.out_h * g.out_w * K), (j, g.stride_h * g.out_w * K))
                return a, o

            gemm(
                ctx, xf, sub, b, of, g.batches * py.count, run_at, px.count, C, K, levels, g.activation,
                sub_value, ldo=g.stride_w * K,
            )  # fmt: skip


def _transpose_q8(ctx: LoweringContext, g: TransposeGeometry, qc: QuantConv, x: Value, wv: Any, b: Value, out: Value) -> None:
    """Quantised NHWC TRANSPOSE_CONV_2D with a constant filter: one int8
    GEMM per phase (as :func:`_transpose_nhwc`), the reduction over the
    sub-filter's rows around a contiguous run of (tap column, input
    channel): a phase's windows slide one input pixel at a time."""
    hp, wp = g.padded_hw
    top, left = g.pad_head
    C, K = g.in_c, g.out_c
    xq = q8_input_padded(ctx, qc, x, g.pad_head, g.padded_hw)
    blocks = q8.column_blocks(K, ctx.tiles.lanes, ctx.tiles.max_col_vectors)
    qtab = qc.table(ctx, K)
    of = ctx.flat(out)
    for py in g.rows:
        for px in g.cols:
            levels = [lv for lv in [q8.Level(py.taps, wp * C)] if lv.size > 1]
            run = px.taps * C
            sub = qc.filter_int32(_phase_filter_value(wv, g, py, px)).reshape(K, py.taps, run)
            panel = packed_weights(ctx, q8.pack_panel(sub, blocks))

            def runs(e: Emitter, f: Callable[[Emitter, IndexOrInt, IndexOrInt], None], py=py, px=px) -> None:
                """One run per row ``j`` of the phase in image ``n``."""

                def image(e: Emitter, n: IndexOrInt) -> None:
                    each(e, 0, py.count, 1, lambda e2, j: f(
                        e2,
                        Vec(e2).ix((py.start + top) * wp * C + (px.start + left) * C, (n, hp * wp * C), (j, wp * C)),
                        Vec(e2).ix((py.first * g.out_w + px.first) * K, (n, g.out_h * g.out_w * K),
                                   (j, g.stride_h * g.out_w * K)),
                    ))

                each(e, 0, g.batches, 1, image)

            q8.gemm(ctx, xq, panel, qtab, b, of, runs, px.count, C, K, levels, run, blocks, ldo=g.stride_w * K)


def _transpose_generic(ctx: LoweringContext, g: TransposeGeometry, qc: QuantConv | None, x: Value, w: Value, b: Value, out: Value) -> None:
    """Any TRANSPOSE_CONV_2D: per phase one reduction generic into the
    phase's strided view of the accumulator (initialised with the bias, so
    outputs without taps keep it), then the epilogue."""
    channel_dim = 1 if g.nchw else 3
    xp = _transpose_input(ctx, g, x, 0.0 if qc is None else qc.in_zp)
    top, left = g.pad_head
    acc = _accumulator(ctx, qc, out, b, channel_dim)
    for py in g.rows:
        for px in g.cols:
            if not py.taps or not px.taps:
                continue
            sub = _phase_filter(ctx, w, g, py, px)
            view = _phase_output(ctx, acc, g, py, px)
            sizes = dict(n=g.batches, j=py.count, i=px.count, k=g.out_c, u=py.taps, v=px.taps, d=g.in_c)
            order = ("n", "k", "d", "u", "v", "j", "i") if g.nchw else ("n", "j", "i", "k", "u", "v", "d")

            def x_map(d: Loops, py=py, px=px) -> Sequence[AffineExpr | int]:
                return g.layout(d["n"], d["j"] + d["u"] + (py.start + top), d["i"] + d["v"] + (px.start + left), d["d"])

            named_generic(
                ctx,
                [(k, sizes[k]) for k in order],
                ("u", "v", "d"),
                [
                    (xp, x_map),
                    (sub, lambda d: (d["k"], d["u"], d["v"], d["d"])),
                ],
                [(view, lambda d: g.layout(d["n"], d["j"], d["i"], d["k"]))],
                _mac if qc is None else qc.mac,
            )
    _epilogue(ctx, qc, acc, out, g.activation, channel_dim)


# -- quantised (8-bit) on the vector kernels --------------------------------------------------


def filter_value(ctx: LoweringContext) -> Any:
    """The filter's values when they are known at compile time (then the
    GEMM's weight panel is packed with numpy), else None (a filter given at
    run time keeps the generic path): inline constants and, when the
    compilation has the model's constant pool, constants stored there."""
    return ctx.constant_value(ctx.input(1))


def packed_weights(ctx: LoweringContext, panel: np.ndarray) -> Value:
    """The buffer holding a packed int16 weight panel: appended to the
    model's constant pool (``ctx.packed_constant``; the original filter,
    read only here, is then left out of the pool)."""
    return ctx.packed_constant(panel, i16)


def q8_input(ctx: LoweringContext, qc: QuantConv, x: Value, shape: Sequence[int], g: ConvGeometry | None = None) -> Value:
    """The int16 input the quantised kernels read: ``x - input_zp``, inside
    the zero padding ``g`` asks for (0 contributes nothing, like the
    reference's skipped taps), as a flat buffer with two elements of slack
    at its end (the partner of a last odd reduction step, times a zero
    weight).  ``shape``: ``x``'s shape (NHWC, or [batch, size])."""
    if g is not None and g.needs_padding:
        return q8_input_padded(ctx, qc, x, (g.pad_top, g.pad_left), g.padded_hw)
    return _q8_widened(ctx, qc, x, shape, list(shape), (0, 0))


def q8_input_padded(ctx: LoweringContext, qc: QuantConv, x: Value, head: tuple[int, int], size: tuple[int, int]) -> Value:
    """:func:`q8_input` of an NHWC ``x`` at rows/columns ``head`` of a zero
    buffer of spatial ``size``."""
    shape = list(ctx.shape(x))
    return _q8_widened(ctx, qc, x, shape, [shape[0], *size, shape[3]], head)


def _q8_widened(ctx: LoweringContext, qc: QuantConv, x: Value, shape: Sequence[int], padded: list[int], head: tuple[int, int]) -> Value:
    """The flat int16 buffer (two elements of slack) of ``x - input_zp``
    (``shape``) inside zeros of ``padded`` shape, at ``head`` (rank 4),
    copied over the whole buffer, or over rows of width x channels inside
    the padding: by the shared widening kernel
    (:func:`~nnc.passes.kernels.q8.widen`) when the runs are long (inline,
    LLVM vectorised and unrolled each layer's copy in the graph function),
    else by a linalg.generic (a few elements: less code than the kernel)."""
    n = int(np.prod(padded))
    flat = ctx.alloc([n + 2], i16)
    if list(shape) != padded:
        ctx.fill(flat, 0)
        batch, h, w, c = shape
        row = padded[2] * c
        runs, run, dst_rows, dst_off = (batch, h), w * c, (padded[1] * row, row), head[0] * row + head[1] * c
    else:
        for k in (n, n + 1):
            ctx.e.store(ctx.e.const(0, i16), flat, [k])
        # Runs of rows (NHWC) or batch rows: pieces for the thread pool.
        runs = (shape[0], shape[1]) if len(shape) == 4 else (1, shape[0])
        run = n // (runs[0] * runs[1])
        dst_rows, dst_off = (n // runs[0], run), 0
    if q8.widen_worth(ctx.tiles, run):
        q8.widen(ctx, ctx.flat(x), flat, is_unsigned(qc.in_type), qc.in_zp, runs, run, dst_rows, dst_off)
        return flat
    if list(shape) != padded:
        rows = ctx.reinterpreted(flat, i16, [padded[0], padded[1], padded[2] * shape[3]])
        dst = strided_view(ctx, rows, [0, head[0], head[1] * shape[3]], [shape[0], shape[1], run], [1] * 3)
        copy_shape = [shape[0], shape[1], run]
    else:
        dst, copy_shape = ctx.reinterpreted(flat, i16, [n]), [n]
    rank = len(copy_shape)
    src = ctx.reshaped(x, copy_shape)
    ctx.generic(copy_shape, [(src, identity_map(rank))], [(dst, identity_map(rank))], lambda e, a, idx: [qc.widen(e, a[0])])
    return flat


def _q8_bytes(ctx: LoweringContext, qc: QuantConv, x: Value, shape: Sequence[int], g: ConvGeometry | None, off: int) -> Value:
    """The sdot form's input (:func:`~nnc.passes.kernels.q8.gemm`, step 4):
    the stored 8-bit ``x`` as int8 (``x - off``, :func:`~nnc.passes.kernels.q8.quad_input_offset`)
    inside the padding ``g`` asks for, filled with the zero point (so that
    ``x - zx`` is 0 there, like the reference's skipped taps), as a flat
    buffer with three elements of slack (partners of zero weights)."""
    shape = list(shape)
    padded, head = shape, (0, 0)
    if g is not None and g.needs_padding:
        padded, head = [shape[0], *g.padded_hw, shape[3]], (g.pad_top, g.pad_left)
    n = int(np.prod(padded))
    flat = ctx.alloc([n + 3], i8)
    dst = ctx.reinterpreted(flat, i8, padded)
    if padded != shape:
        ctx.fill(flat, qc.in_zp - off)
        dst = strided_view(ctx, dst, [0, head[0], head[1], 0], shape, [1] * 4)
    else:
        for k in range(n, n + 3):  # the slack: any value (times zero weights), but defined
            ctx.e.store(ctx.e.const(0, i8), flat, [k])
    rank = len(shape)

    def body(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        return [e.op(arith.XOrIOp(a[0], e.const(-128, i8)))] if off else [a[0]]

    ctx.generic(shape, [(ctx.reshaped(x, shape), identity_map(rank))], [(dst, identity_map(rank))], body)
    return flat


def _q8_gemm_operands(
    ctx: LoweringContext, qc: QuantConv, x: Value, shape: Sequence[int], g: ConvGeometry | None, w: np.ndarray,
    blocks: Sequence[tuple[int, int, tuple[int, ...]]], b: Value,
) -> tuple[Value, Value, Value, int]:  # fmt: skip
    """(input, weight panel, bias, step) of the int8 GEMM for the filter
    ``w`` (``[cols, outer, run]``, :meth:`QuantConv.filter_int32`; panel
    ``blocks``): the sdot form (step 4) when the target has SDOT, the
    weights fit int8 and the bias is a compile-time constant, else the
    int16 pair form (step 2)."""
    bias = ctx.constant_value(b)
    if ctx.int8_dot is Int8Dot.SDOT and bias is not None and q8.quads_fit(w):
        off = q8.quad_input_offset(is_unsigned(qc.in_type))
        xq = _q8_bytes(ctx, qc, x, shape, g, off)
        corrected = ctx.packed_constant(q8.quad_bias(np.asarray(bias, np.int32), w, qc.in_zp - off), i32)
        return xq, ctx.packed_constant(q8.pack_panel(w, blocks, 4), i8), corrected, 4
    return q8_input(ctx, qc, x, shape, g), packed_weights(ctx, q8.pack_panel(w, blocks)), b, 2


def _conv_2d_q8(ctx: LoweringContext, g: ConvGeometry, qc: QuantConv, x: Value, wv: Any, b: Value, out: Value) -> None:
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
    w3 = qc.filter_int32(wv).reshape(g.out_c, outer, run)
    xq, panel, b, step = _q8_gemm_operands(ctx, qc, x, ctx.shape(x), g, w3, all_blocks, b)
    qtab = qc.table(ctx, g.out_c)
    of = ctx.flat(out)
    plain = g.filter_h == g.filter_w == 1 and g.stride_h == g.stride_w == 1 and not g.needs_padding
    if plain:
        pixels = g.batches * g.out_h * g.out_w
        q8.gemm(ctx, xq, panel, qtab, b, of, lambda e, f: f(e, 0, 0), pixels, C, cols, levels, run, blocks, g.groups, c,
                step=step)  # fmt: skip
        return

    def rows(e: Emitter, f: Callable[[Emitter, IndexOrInt, IndexOrInt], None]) -> None:
        """One run per output row (n, oh): its windows start stride_w * c apart.
        Rows are independent: the parallel loop when there is a single
        column block (the outermost marked loop worth a dispatch runs)."""

        def image(e: Emitter, n: IndexOrInt) -> None:
            parallel_each(e, 0, g.out_h, 1, lambda e2, oh: f(
                e2,
                Vec(e2).ix(0, (n, hp * wp * C), (oh, g.stride_h * wp * C)),
                Vec(e2).ix(0, (n, g.out_h * g.out_w * g.out_c), (oh, g.out_w * g.out_c)),
            ))

        each(e, 0, g.batches, 1, image)

    q8.gemm(ctx, xq, panel, qtab, b, of, rows, g.out_w, g.stride_w * C, cols, levels, run, blocks, g.groups, c, step=step)


def _depthwise_q8(ctx: LoweringContext, g: ConvGeometry, qc: QuantConv, x: Value, w: Value, b: Value, out: Value) -> None:
    """Quantised NHWC DEPTHWISE_CONV_2D, multiplier 1: the int8 depthwise
    kernel (:func:`~nnc.passes.kernels.q8.depthwise`) on the padded int16
    input, the filter widened to int16 minus its zero point: at compile
    time when it is a constant (a loop of constant trip count per layer
    would be vectorised and fully unrolled by LLVM: thousands of
    instructions of the entry function to optimise and run every time),
    else at run time (it may be a run-time input)."""
    xq = q8_input(ctx, qc, x, ctx.shape(x), g)
    taps = g.filter_h * g.filter_w
    value = ctx.constant_value(w)
    if value is not None:
        w16 = ctx.packed_constant(qc.filter_int32(value).reshape(-1).astype(np.int16), i16)
    else:
        w16 = ctx.alloc([taps * g.out_c], i16)
        ctx.generic(
            [taps * g.out_c], [(ctx.flat(w), identity_map(1))], [(w16, identity_map(1))],
            lambda e, a, idx: [qc.widen(e, a[0], qc.filter_type, qc.filter_zp)],
        )  # fmt: skip
    q8.depthwise(
        ctx, xq, w16, qc.table(ctx, g.out_c), b, ctx.flat(out), g.batches, g.padded_hw, (g.out_h, g.out_w),
        g.out_c, (g.filter_h, g.filter_w), (g.stride_h, g.stride_w), (g.dilation_h, g.dilation_w),
    )  # fmt: skip


def _fully_connected_q8(
    ctx: LoweringContext, qc: QuantConv, x: Value, wv: Any, bias: Value, out: Value, batch: int, units: int, size: int
) -> None:
    """Quantised FULLY_CONNECTED with constant weights: the int8 GEMM with
    one reduction run of ``size`` per batch row."""
    blocks = q8.column_blocks(units, ctx.tiles.lanes, ctx.tiles.max_col_vectors)
    w3 = qc.filter_int32(wv).reshape(units, 1, size)
    xq, panel, bias, step = _q8_gemm_operands(ctx, qc, x, [batch, size], None, w3, blocks, bias)
    q8.gemm(ctx, xq, panel, qc.table(ctx, units), bias, ctx.flat(out), lambda e, f: f(e, 0, 0), batch, size, units, [], size, blocks,
            step=step)  # fmt: skip


# -- FULLY_CONNECTED ------------------------------------------------------------------------


@lowering(Op.FULLY_CONNECTED, check=_check_fully_connected)
def fully_connected(ctx: LoweringContext) -> None:
    """out[b, u] = bias[u] + sum_i x[b, i] * weights[u, i], the input flattened to
    [batch, input_size].

    Quantised (weights of the input's type): accumulated in int32 with the zero
    points subtracted, then requantised (see :class:`QuantConv`)."""
    qc = _quant_of(ctx, None, ctx.scalar(3))
    w, bias, out = ctx.input(1), ctx.input(2), ctx.output()
    units, size = ctx.shape(w)
    batch = ctx.shape(out)[0]
    x = ctx.reshaped(ctx.input(0), [batch, size])
    if qc is None:
        fully_connected_f32(ctx, x, w, bias, out, batch, units, size, ctx.scalar(3))
        return
    if (wv := filter_value(ctx)) is not None:
        _fully_connected_q8(ctx, qc, x, wv, bias, out, batch, units, size)
        return
    acc = _accumulator(ctx, qc, out, bias, 1)
    mac = _mac if qc is None else qc.mac
    if batch >= TRANSPOSE_MIN_ROWS:
        # Per batch and input element: out[b, :] += x[b, i] * wt[i, :].
        wt = permuted(ctx, w, (1, 0))
        named_generic(
            ctx,
            [("b", batch), ("i", size), ("u", units)],
            ("i",),
            [(x, lambda d: (d["b"], d["i"])), (wt, lambda d: (d["i"], d["u"]))],
            [(acc, lambda d: (d["b"], d["u"]))],
            mac,
        )
    else:
        # A dot product per output element.
        named_generic(
            ctx,
            [("b", batch), ("u", units), ("i", size)],
            ("i",),
            [(x, lambda d: (d["b"], d["i"])), (w, lambda d: (d["u"], d["i"]))],
            [(acc, lambda d: (d["b"], d["u"]))],
            mac,
        )
    _epilogue(ctx, qc, acc, out, ctx.scalar(3), 1)


def fully_connected_f32(
    ctx: LoweringContext, x: Value, w: Value, bias: Value, out: Value, batch: int, units: int, size: int, act: int
) -> None:
    """Float32 FULLY_CONNECTED: dot products for a small batch, else the
    GEMM (weight panels packed at compile time for constant weights).  ``x`` [batch, size] and
    ``out`` [batch, units] are any contiguous buffers (views included); the
    recurrent lowerings use it for their gate products."""
    xf, of = ctx.flat(x), ctx.flat(out)
    if batch < ctx.tiles.dot_max_rows:
        dot(ctx, xf, ctx.flat(w), bias, of, batch, size, units, size, act)
        return
    w_value = ctx.constant_value(w)
    wf = ctx.flat(w) if w_value is None else w
    gemm(ctx, xf, wf, bias, of, 1, lambda e, r: (0, 0), batch, size, units, [Level(size, 1, 1)], act, w_value,
         epilogue=ctx.take_epilogue())  # fmt: skip
