"""2-D pooling: AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D (float32), and
quantised AVERAGE_POOL_2D / MAX_POOL_2D (TENSOR_QUANT8_ASYMM and _SIGNED).

Every signature is handled: explicit padding (10/11 inputs) or an implicit
SAME/VALID scheme (7/8 inputs, turned into explicit padding like Android's
``calculateExplicitPadding``: head = total / 2), strides, filter size, a fused
activation and the optional NCHW layout flag.

One ``linalg.generic`` runs over the output; its body walks the window with
two ``scf.for`` loops clipped to the input (like Android/TFLite, which start
at ``max(0, origin)`` and stop at ``min(size, origin + filter)``), so padded
positions are never read and the element count of a window is the clipped
extent.  :func:`pool_geometry` and :func:`window_reduce` only deal with
indices and are shared by any element type (quant8 pooling reuses them with
its own combine/finish steps).

Quantised pooling works on the stored integers (the output keeps the input's
quantisation), as Android's CPU path: uint8 runs tflite's
``optimized_ops::AveragePool``/``MaxPool`` and int8 the
``reference_integer_ops`` kernels.  The average is the int32 window sum
divided by the clipped count with rounding half away from zero,
``(sum + count/2) / count`` for ``sum > 0`` and ``(sum - count/2) / count``
otherwise (C division truncates; for uint8 the sum is never negative, where
both kernels agree).  MAX_POOL_2D starts from the type's minimum (0 / -128).
The fused activation is a clamp to ``CalculateActivationRangeUint8/Int8`` of
the output's scale and zero point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i32

from nnc.dialects.rules.base import OpCall
from nnc.dialects.rules.conv.window import implicit_padding
from nnc.dialects.rules.pool import pool_window
from nnc.enums import OperationType as Op
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    activation,
    identity_map,
    lowering,
)
from nnc.passes.lowering.normalization import running_max


@dataclass(frozen=True)
class PoolGeometry:
    """Static window parameters of one pooling op (input sizes included)."""

    nchw: bool
    in_h: int
    in_w: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    pad_top: int
    pad_left: int
    activation: int

    def input_index(self, n: Value, c: Value, y: Value, x: Value) -> list[Value]:
        return [n, c, y, x] if self.nchw else [n, y, x, c]

    def output_coords(self, idx: Sequence[Value]) -> tuple[Value, Value, Value, Value]:
        """(batch, channel, out_y, out_x) from the output iteration indices."""
        if self.nchw:
            return idx[0], idx[1], idx[2], idx[3]
        return idx[0], idx[3], idx[1], idx[2]


def pool_geometry(ctx: LoweringContext) -> PoolGeometry:
    """Parse the scalar inputs of a pooling call (any signature)."""
    win = pool_window(ctx.call)
    shape = ctx.shape(ctx.input(0))
    in_h, in_w = (shape[2], shape[3]) if win.nchw else (shape[1], shape[2])
    if win.explicit is not None:
        pad_left, _, pad_top, _ = win.explicit
    else:
        pw = implicit_padding(in_w, win.stride_w, 1, win.filter_w, win.scheme)
        ph = implicit_padding(in_h, win.stride_h, 1, win.filter_h, win.scheme)
        pad_left = pw[0] if pw is not None else 0
        pad_top = ph[0] if ph is not None else 0
    return PoolGeometry(
        nchw=win.nchw,
        in_h=in_h,
        in_w=in_w,
        filter_h=win.filter_h,
        filter_w=win.filter_w,
        stride_h=win.stride_h,
        stride_w=win.stride_w,
        pad_top=pad_top,
        pad_left=pad_left,
        activation=win.activation,
    )


def _clipped_range(e: Emitter, out_pos: Value, stride: int, pad: int, filt: int, size: int):
    """[start, end) of the in-bounds input positions of one window (index values)."""
    origin = e.mul(out_pos, e.index(stride)) if stride != 1 else out_pos
    if pad:
        origin = e.sub(origin, e.index(pad))
    start = e.max(origin, e.index(0))
    end = e.min(e.add(origin, e.index(filt)), e.index(size))
    return start, end


def window_reduce(
    e: Emitter,
    geo: PoolGeometry,
    x: Value,
    idx: Sequence[Value],
    init: Sequence[Value],
    combine: Callable[[Emitter, Value, Sequence[Value]], Sequence[Value]],
    with_count: bool = True,
) -> tuple[list[Value], Value | None]:
    """Fold ``combine(e, element, accs)`` over the in-bounds window of the output
    position ``idx``; returns the accumulators and (``with_count``) the number
    of in-bounds elements as an index value."""
    n, c, oy, ox = geo.output_coords(idx)
    y0, y1 = _clipped_range(e, oy, geo.stride_h, geo.pad_top, geo.filter_h, geo.in_h)
    x0, x1 = _clipped_range(e, ox, geo.stride_w, geo.pad_left, geo.filter_w, geo.in_w)

    def row(e: Emitter, y: Value, accs: Sequence[Value]) -> Sequence[Value]:
        def col(e: Emitter, xx: Value, accs: Sequence[Value]) -> Sequence[Value]:
            v = e.load(x, geo.input_index(n, c, y, xx))
            return combine(e, v, accs)

        return e.for_(x0, x1, col, accs)

    accs = e.for_(y0, y1, row, init)
    count = e.mul(e.sub(y1, y0), e.sub(x1, x0)) if with_count else None
    return accs, count


# Note: to_float gets f32 explicitly: Emitter.to_float's default ``to=f32`` is
# evaluated in the class body, where ``f32`` names the Emitter.f32 method.
#: per op: (initial accumulator, combine, finish(e, acc, count)); count is
#: None for MAX_POOL_2D, which does not need it
_FLOAT_POOLS: dict[Op, tuple[float, Callable, Callable]] = {
    Op.AVERAGE_POOL_2D: (
        0.0,
        lambda e, v, acc: e.add(acc, v),
        lambda e, acc, count: e.div(acc, e.to_float(count, f32)),
    ),
    Op.MAX_POOL_2D: (
        # std::numeric_limits<float>::lowest(), as in TFLite's MaxPool
        -3.4028234663852886e38,
        # compare-and-select, not llvm.maxnum: LLVM's loop vectorizer aborts on
        # a maxnum reduction over a 1 x 30 window (see running_max)
        lambda e, v, acc: running_max(e, acc, v),
        lambda e, acc, count: acc,
    ),
    Op.L2_POOL_2D: (
        0.0,
        lambda e, v, acc: e.add(acc, e.mul(v, v)),
        lambda e, acc, count: e.sqrt(e.div(acc, e.to_float(count, f32))),
    ),
}


def _check_pool(call: OpCall) -> str | None:
    if call.inputs[0].type not in QUANT8:
        return None
    if call.type == Op.L2_POOL_2D:
        return "L2_POOL_2D has no quantised form"
    out = call.outputs[0]
    try:
        q.calculate_activation_range(out.type, pool_window(call).activation, out.scale, out.zero_point)
    except q.QuantError as e:
        return f"quantised {call.type.name}: {e}"
    return None


@lowering(Op.AVERAGE_POOL_2D, Op.MAX_POOL_2D, Op.L2_POOL_2D, check=_check_pool)
def pool(ctx: LoweringContext) -> None:
    if ctx.info(0).type in QUANT8:
        pool_quant(ctx)
    else:
        pool_float(ctx)


def pool_float(ctx: LoweringContext) -> None:
    geo = pool_geometry(ctx)
    x, out = ctx.input(0), ctx.output()
    init, combine, finish = _FLOAT_POOLS[ctx.call.type]
    oshape = ctx.shape(out)

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        (acc,), count = window_reduce(
            e,
            geo,
            x,
            idx,
            [e.like(init, args[0])],
            lambda e, v, accs: [combine(e, v, accs[0])],
            with_count=ctx.call.type != Op.MAX_POOL_2D,
        )
        return [activation(e, finish(e, acc, count), geo.activation)]

    ctx.generic(oshape, [], [(out, identity_map(len(oshape)))], body)


def _rounded_average(e: Emitter, acc: Value, count: Value) -> Value:
    """tflite's integer average: the sum divided by ``count`` (> 0), rounded
    half away from zero with C's truncating division."""
    c = e.index_cast(e.max(count, e.index(1)), i32)  # count >= 1 (padding < filter)
    half = e.op(arith.DivSIOp(c, e.i32(2)))
    positive = e.cmp("gt", acc, e.i32(0))
    num = e.select(positive, e.add(acc, half), e.sub(acc, half))
    return e.op(arith.DivSIOp(num, c))


def pool_quant(ctx: LoweringContext) -> None:
    """Quantised AVERAGE_POOL_2D / MAX_POOL_2D on int32 values of the stored
    integers, clamped to the activation range of the output."""
    geo = pool_geometry(ctx)
    x, out = ctx.input(0), ctx.output()
    t = ctx.info(0).type
    oinfo = ctx.out_info(0)
    act_min, act_max = q.calculate_activation_range(oinfo.type, geo.activation, oinfo.scale, oinfo.zero_point)
    average = ctx.call.type == Op.AVERAGE_POOL_2D
    init = 0 if average else q.QRANGE[t][0]
    oshape = ctx.shape(out)

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        def combine(e: Emitter, v: Value, accs: Sequence[Value]) -> list[Value]:
            w = q.load_q(e, v, t)
            return [e.add(accs[0], w) if average else e.max(accs[0], w)]

        (acc,), count = window_reduce(e, geo, x, idx, [e.i32(init)], combine, with_count=average)
        if average:
            assert count is not None  # with_count
            acc = _rounded_average(e, acc, count)
        return [q.store_q(e, acc, oinfo.type, act_min, act_max)]

    ctx.generic(oshape, [], [(out, identity_map(len(oshape)))], body)
