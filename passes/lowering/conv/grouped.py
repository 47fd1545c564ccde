"""The lowering of GROUPED_CONV_2D: every group is a CONV_2D on its slice of
the channels, run on the CONV_2D kernels in NHWC (the group one more loop),
or one generic reduction.
"""

from __future__ import annotations

from collections.abc import Callable

from nnc.dialects.rules.base import OpCall
from nnc.dialects.rules.conv.grouped import grouped_conv_window
from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import (
    LoweringContext,
    Value,
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
from nnc.passes.lowering.conv.conv_2d import on_kernels
from nnc.passes.lowering.conv.geometry import ConvGeometry, padded_input
from nnc.passes.lowering.conv_q8 import QuantConv


def _check_grouped(call: OpCall) -> str | None:
    return check_limits(call, 0, lambda c: grouped_conv_window(c)[0].activation)


@lowering(Op.GROUPED_CONV_2D, check=_check_grouped)
def grouped_conv_2d(ctx: LoweringContext) -> None:
    """out[n, oh, ow, G*cog + oc] = bias[G*cog + oc] + sum_{kh, kw, ic}
    xpad[n, oh*sh + kh, ow*sw + kw, G*cig + ic] * filter[G*cog + oc, kh, kw, ic]
    for group G of ``groups`` (cig, cog: input and output channels per group).

    Every group is a CONV_2D on its slice of the channels: the same kernels
    with the group as one more loop (see :func:`_grouped_generic`)."""
    win, groups = grouped_conv_window(ctx.call)
    g = ConvGeometry.from_window(ctx, win, groups)
    qc = quant_of(ctx, 0, g.activation)
    if not on_kernels(ctx, g, qc):
        _grouped_generic(ctx, g, qc, ctx.input(0), ctx.input(1), ctx.input(2), ctx.output())


def _grouped_generic(ctx: LoweringContext, g: ConvGeometry, qc: QuantConv | None, x: Value, w: Value, b: Value, out: Value) -> None:
    """Any grouped convolution as one reduction generic over views that
    split the channels into (group, channel in group): contiguous reshapes
    of the (padded) input, the filter and the accumulator."""
    channel_dim = 1 if g.nchw else 3
    xp = padded_input(ctx, x, g, 0.0 if qc is None else qc.in_zp)
    acc = accumulator(ctx, qc, out, b, channel_dim)
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
        mac if qc is None else qc.mac,
    )
    epilogue(ctx, qc, acc, out, g.activation, channel_dim)
