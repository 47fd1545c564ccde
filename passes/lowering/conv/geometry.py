"""The geometry of a convolution: layout, explicit padding (computed like
Android's ``calculateExplicitPadding``), strides, dilations and multiplier
(:class:`ConvGeometry`), the padded copy of an input, strided views, the
interior/border runs of a window, and transposed weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir.affine import AffineExpr

from nnc.dialects.rules.conv.window import Window, conv_window
from nnc.dialects.rules.operands import join_layout
from nnc.enums import FuseCode
from nnc.passes.lowering.base import (
    LoweringContext,
    Value,
    affine_map,
    identity_map,
    memref_elem,
)
from nnc.passes.lowering.indexing import split_nhwc


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
        n, h, wd, c = split_nhwc(ctx.shape(x), win.nchw)
        _, oh, ow, oc = split_nhwc(ctx.shape(out), win.nchw)
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
    n, _, _, c = split_nhwc(ctx.shape(x), nchw)
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


def permuted(ctx: LoweringContext, src: Value, perm: Sequence[int]) -> Value:
    """A temporary copy of ``src`` with its dimensions reordered like numpy's
    ``src.transpose(perm)``: dimension ``k`` of the copy is ``perm[k]`` of ``src``."""
    shape = ctx.shape(src)
    dst = ctx.alloc([shape[p] for p in perm], memref_elem(src))
    dmap = affine_map(len(shape), lambda *d: tuple(d[p] for p in perm))
    ctx.generic(shape, [(src, identity_map(len(shape)))], [(dst, dmap)], lambda e, a, idx: [a[0]])
    return dst


def segments(out_size: int, in_size: int, stride: int, dilation: int, pad: int, taps: int):
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
