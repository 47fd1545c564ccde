"""The lowering of TRANSPOSE_CONV_2D as stride x stride phases: each output
phase is an ordinary stride-1 convolution of the zero-padded input with a
sub-filter, on the GEMM kernels (float32, or int8 with the filter known at
compile time) or a generic reduction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import i32
from xdsl.ir.affine import AffineExpr

from nnc.dialects.rules.base import OpCall
from nnc.dialects.rules.conv.transpose import TransposeWindow, transpose_conv_window
from nnc.dialects.rules.operands import join_layout
from nnc.enums import OperationType as Op
from nnc.passes.kernels import q8
from nnc.passes.kernels.f32 import Level, gemm
from nnc.passes.kernels.vector import IndexOrInt, Vec
from nnc.passes.lowering.base import (
    Emitter,
    LoweringContext,
    Value,
    affine_map,
    identity_map,
    lowering,
    memref_elem,
)
from nnc.passes.lowering.conv.common import (
    Loops,
    accumulator,
    check_limits,
    epilogue,
    filter_value,
    mac,
    named_generic,
    packed_weights,
    q8_bytes,
    q8_input_padded,
    quant_of,
)
from nnc.passes.lowering.conv.geometry import padded_copy, strided_view
from nnc.passes.lowering.conv_q8 import QuantConv
from nnc.passes.lowering.indexing import split_nhwc
from nnc.passes.lowering.quant import is_unsigned


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
        n, h, wd, c = split_nhwc(ctx.shape(ctx.input(0)), win.nchw)
        _, oh, ow, oc = split_nhwc(ctx.shape(ctx.output()), win.nchw)
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
    return check_limits(call, 0, lambda c: transpose_conv_window(c).activation)


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
    qc = quant_of(ctx, 0, g.activation)
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
    channel): a phase's windows slide one input pixel at a time.  In the
    target's quad form (``ctx.gemm_form``) when every phase's weights fit
    int8 and the bias is a constant, as :func:`q8_gemm_operands` decides
    for CONV_2D: then from a padded byte copy of the input, with each
    phase's own bias (the zero point's share of its taps folded in)."""
    hp, wp = g.padded_hw
    top, left = g.pad_head
    C, K = g.in_c, g.out_c
    subs = {(py, px): qc.filter_int16(_phase_filter_value(wv, g, py, px)).reshape(K, py.taps, px.taps * C)
            for py in g.rows for px in g.cols}  # fmt: skip
    bias = ctx.constant_value(b)
    form = ctx.gemm_form
    if form is q8.GemmForm.PAIR or bias is None or not all(q8.quads_fit(sub) for sub in subs.values()):
        form = q8.GemmForm.PAIR
    off = q8.quad_input_offset(is_unsigned(qc.in_type), form) if form is not q8.GemmForm.PAIR else 0
    if form is q8.GemmForm.PAIR:
        xq = q8_input_padded(ctx, qc, x, g.pad_head, g.padded_hw)
    else:
        xq = q8_bytes(ctx, qc, x, ctx.shape(x), (g.pad_head, g.padded_hw), off)
    blocks = q8.column_blocks(K, ctx.tiles.lanes, ctx.tiles.max_col_vectors)
    qtab = qc.table(ctx, K)
    of = ctx.flat(out)
    for py in g.rows:
        for px in g.cols:
            levels = [lv for lv in [q8.Level(py.taps, wp * C)] if lv.size > 1]
            run = px.taps * C
            sub = subs[(py, px)]
            start = b
            if form is q8.GemmForm.PAIR:
                panel = packed_weights(ctx, q8.pack_panel(sub, blocks))
            else:
                panel = packed_weights(ctx, q8.pack_panel(sub, blocks, 4))
                start = ctx.packed_constant(q8.quad_bias(np.asarray(bias, np.int32), sub, qc.in_zp - off), i32)

            def run_at(e: Emitter, t: IndexOrInt, py=py, px=px) -> tuple[IndexOrInt, IndexOrInt]:
                """One run per row ``j`` of the phase in image ``n``."""
                n, j = (0, t) if g.batches == 1 else (e.div(e.index(t), e.index(py.count)), e.rem(e.index(t), e.index(py.count)))
                v = Vec(e)
                return (v.ix((py.start + top) * wp * C + (px.start + left) * C, (n, hp * wp * C), (j, wp * C)),
                        v.ix((py.first * g.out_w + px.first) * K, (n, g.out_h * g.out_w * K), (j, g.stride_h * g.out_w * K)))  # fmt: skip

            q8.gemm(ctx, xq, panel, qtab, start, of, g.batches * py.count, run_at, px.count, C, K, levels, run, blocks,
                    ldo=g.stride_w * K, form=form, full=qc.full_range)  # fmt: skip


def _transpose_generic(ctx: LoweringContext, g: TransposeGeometry, qc: QuantConv | None, x: Value, w: Value, b: Value, out: Value) -> None:
    """Any TRANSPOSE_CONV_2D: per phase one reduction generic into the
    phase's strided view of the accumulator (initialised with the bias, so
    outputs without taps keep it), then the epilogue."""
    channel_dim = 1 if g.nchw else 3
    xp = _transpose_input(ctx, g, x, 0.0 if qc is None else qc.in_zp)
    top, left = g.pad_head
    acc = accumulator(ctx, qc, out, b, channel_dim)
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
                mac if qc is None else qc.mac,
            )
    epilogue(ctx, qc, acc, out, g.activation, channel_dim)




