"""The lowering of FULLY_CONNECTED: dot-product or GEMM kernels (float32),
the int8 GEMM kernel (quantised, filter known at compile time), or the
generic reduction.
"""

from __future__ import annotations

from typing import Any

from nnc.dialects.rules.base import OpCall
from nnc.enums import OperationType as Op
from nnc.passes.kernels import q8
from nnc.passes.kernels.f32 import Level, dot, gemm, half_weights
from nnc.passes.lowering.base import (
    LoweringContext,
    Value,
    lowering,
)
from nnc.passes.lowering.conv.common import (
    TRANSPOSE_MIN_ROWS,
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
from nnc.passes.lowering.conv.geometry import permuted
from nnc.passes.lowering.conv_q8 import QuantConv


def _check_fully_connected(call: OpCall) -> str | None:
    return check_limits(call, None, lambda c: c.scalar(3))


def _fully_connected_q8(
    ctx: LoweringContext, qc: QuantConv, x: Value, wv: Any, bias: Value, out: Value, batch: int, units: int, size: int
) -> None:
    """Quantised FULLY_CONNECTED with constant weights: the int8 GEMM with
    one reduction run of ``size`` per batch row."""
    blocks = q8.column_blocks(units, ctx.tiles.lanes, ctx.tiles.max_col_vectors)
    w3 = qc.filter_int16(wv).reshape(units, 1, size)
    ops = q8_gemm_operands(ctx, qc, x, [batch, size], None, w3, blocks, bias)
    q8.gemm(ctx, ops.x, ops.panel, qc.table(ctx, units), ops.bias, ctx.flat(out), 1, lambda e, t: (0, 0), batch, size, units, [],
            size, blocks, form=ops.form, flip=ops.flip, narrow=ops.narrow, add=q8_residual_add(ctx), full=qc.full_range)  # fmt: skip


@lowering(Op.FULLY_CONNECTED, check=_check_fully_connected)
def fully_connected(ctx: LoweringContext) -> None:
    """out[b, u] = bias[u] + sum_i x[b, i] * weights[u, i], the input flattened to
    [batch, input_size].

    Quantised (weights of the input's type): accumulated in int32 with the zero
    points subtracted, then requantised (see :class:`QuantConv`)."""
    qc = quant_of(ctx, None, ctx.scalar(3))
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
    acc = accumulator(ctx, qc, out, bias, 1)
    body = mac if qc is None else qc.mac
    if batch >= TRANSPOSE_MIN_ROWS:
        # Per batch and input element: out[b, :] += x[b, i] * wt[i, :].
        wt = permuted(ctx, w, (1, 0))
        named_generic(
            ctx,
            [("b", batch), ("i", size), ("u", units)],
            ("i",),
            [(x, lambda d: (d["b"], d["i"])), (wt, lambda d: (d["i"], d["u"]))],
            [(acc, lambda d: (d["b"], d["u"]))],
            body,
        )
    else:
        # A dot product per output element.
        named_generic(
            ctx,
            [("b", batch), ("u", units), ("i", size)],
            ("i",),
            [(x, lambda d: (d["b"], d["i"])), (w, lambda d: (d["u"], d["i"]))],
            [(acc, lambda d: (d["b"], d["u"]))],
            body,
        )
    epilogue(ctx, qc, acc, out, ctx.scalar(3), 1)


def fully_connected_f32(
    ctx: LoweringContext, x: Value, w: Value, bias: Value, out: Value, batch: int, units: int, size: int, act: int,
    parallel: bool = True,
) -> None:  # fmt: skip
    """Float32 FULLY_CONNECTED: dot products for a small batch, else the
    GEMM (weight panels packed at compile time for constant weights).  ``x`` [batch, size] and
    ``out`` [batch, units] are any contiguous buffers (views included); the
    recurrent lowerings use it for their gate products (``parallel=False``:
    the GEMM's tiles or the dot products' blocks on the calling thread)."""
    xf, of = ctx.flat(x), ctx.flat(out)
    if batch < ctx.tiles.dot_max_rows:
        dot(ctx, xf, half_weights(ctx, w) or ctx.flat(w), bias, of, batch, size, units, size, act, parallel)
        return
    w_value = ctx.constant_value(w)
    wf = ctx.flat(w) if w_value is None else w
    gemm(ctx, xf, wf, bias, of, 1, lambda e, r: (0, 0), batch, size, units, [Level(size, 1, 1)], act, w_value,
         epilogue=ctx.take_epilogue(), parallel=parallel)  # fmt: skip
