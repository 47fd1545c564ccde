"""Normalizations along one axis: SOFTMAX, L2_NORMALIZATION and
LOCAL_RESPONSE_NORMALIZATION (float32), and quantised SOFTMAX and
L2_NORMALIZATION (TENSOR_QUANT8_ASYMM and _SIGNED).

The optional axis input (NNAPI feature level 3, negative values count from
the end) defaults to the last dimension.  Reductions over the axis write into
a temporary of the input's shape with the axis dimension set to 1
(:func:`reduced_shape`, read back through :func:`reduced_map`), so the axis
handling is independent of the element type and reusable by quantised
variants.

* SOFTMAX:   m = max_axis(x); out = exp((x - m) * beta); out /= sum_axis(out)
* L2_NORMALIZATION: out = x / max(sqrt(sum_axis(x * x)), 1e-6)  (Android)
* LOCAL_RESPONSE_NORMALIZATION: out = x * pow(bias + alpha * s, -beta) with s
  the sum of squares over [c - radius, c + radius] clipped to the axis
  (Android's ``localResponseNormFloat32Impl`` / TFLite).
* LOG_SOFTMAX (float32): out = (x - m) * beta - log(sum_axis(exp((x - m) * beta)))
* INSTANCE_NORMALIZATION (float32): per batch and channel,
  out = (x - mean) * gamma / sqrt(var + epsilon) + beta over the spatial dims.

Quantised forms follow Android's integer-only CPU kernels bit for bit (gemmlowp
fixed point, see :mod:`nnc.passes.lowering.quant`):

* SOFTMAX (``softmaxQuant8Impl``, any axis): ``d = max - q`` lies in
  [0, 255], so ``exp_on_negative_values`` of the rescaled difference (Q5.26)
  is a 256-entry table computed at compile time with the reference's
  arithmetic (0 where ``-d < diff_min``).  Per row: the sum of the table
  entries rescaled to Q12.19, its reciprocal ``one_over_one_plus_x_for_x_in_0_1``
  after normalising by the leading zeros, then per element
  ``RoundingDivideByPOT(reciprocal * exp, num_bits_over_unit + 23)``
  (minus 128 for int8).  The output quantisation is fixed at 1/256 and 0
  (-128 signed).  Along the last axis, rows of at most :data:`SHORT_ROW`
  elements (a segmentation's classes) are one loop over the rows doing all
  of that per row (:func:`_softmax_q8_short_rows`).
* L2_NORMALIZATION: per row the sum of squared centred values and tflite's
  ``GetInvSqrtQuantizedMultiplierExp`` (Newton-Raphson in Q3.28), then
  ``MultiplyByQuantizedMultiplierSmallerThanOneExp(128 * v, m, shift)``
  (+128 for uint8), except int8 along the last axis, which Android runs
  through ``reference_integer_ops::L2Normalization``:
  ``MultiplyByQuantizedMultiplier(v, m, shift + 7)``.  Output 1/128 with zero
  point 128 (0 signed).

The data-dependent shifts these need (leading-zero count, rounding divisions
by a runtime power of two) are emitted here with :func:`_clz32`,
:func:`_shl_var` and :func:`_rdbpot_var`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod
from typing import NamedTuple

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i32, i64
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineExpr, AffineMap

from nnc.dialects.rules.base import OpCall
from nnc.dialects.rules.operands import normalize_axis
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.kernels.rows import FLOAT_LOWEST, softmax_rows
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    affine_map,
    identity_map,
    lowering,
    plain,
)

#: Android's L2_NORMALIZATION lower bound on the norm
L2_EPSILON = 1e-6


def axis_param(ctx: LoweringContext, i: int) -> int:
    """The non-negative axis from optional input ``i`` (default: the last axis)."""
    rank = len(ctx.shape(ctx.input(0)))
    return normalize_axis(int(ctx.scalar(i, -1)), rank)


def reduced_shape(shape: Sequence[int], axis: int) -> list[int]:
    return [1 if k == axis else d for k, d in enumerate(shape)]


def reduced_map(rank: int, axis: int) -> AffineMap:
    """From the full iteration space to a buffer of :func:`reduced_shape`."""
    return affine_map(rank, lambda *d: [0 if k == axis else d[k] for k in range(rank)])


def reduce_axis(
    ctx: LoweringContext,
    x: Value,
    axis: int,
    init: float | int,
    combine: Callable[[Emitter, Value, Value], Value],
    elem: Attribute = f32,
) -> Value:
    """A new ``elem`` buffer of :func:`reduced_shape` holding the fold of
    ``combine(e, acc, v)`` from ``init`` over ``x`` along ``axis``."""
    shape = ctx.shape(x)
    rank = len(shape)
    acc = ctx.alloc(reduced_shape(shape, axis), elem)
    ctx.fill(acc, init)
    ctx.generic(
        shape,
        [(x, identity_map(rank))],
        [(acc, reduced_map(rank, axis))],
        lambda e, args, idx: [combine(e, args[1], args[0])],
        reduction_dims=(axis,),
    )
    return acc


def running_max(e: Emitter, acc: Value, v: Value) -> Value:
    """``(v > acc) ? v : acc``, the fold of SOFTMAX's and LOG_SOFTMAX's maximum.

    Not ``llvm.maxnum``: LLVM 22's loop vectorizer aborts on a maxnum
    reduction of some trip counts for some CPUs (``computeBestVF``: "VPlan
    cost model and legacy cost model disagreed"; SOFTMAX over 30 or 31
    elements on znver3), and llvmlite's LLVM has assertions on, so that
    abort kills the process.  The compare-and-select reduction is the form
    REDUCE_MAX and Android's kernels use; it differs from maxnum only in
    which zero it keeps (acc starts at FLOAT_LOWEST, never NaN, and a NaN
    element leaves it unchanged in both forms).
    """
    return e.select(e.cmp("gt", v, acc), v, acc)


def _scaled_exp(e: Emitter, v: Value, m: Value, beta: float) -> Value:
    d = e.sub(v, m)
    if beta != 1.0:
        d = e.mul(d, e.like(beta, d))
    return e.exp(d)


def _check_softmax(call: OpCall) -> str | None:
    if call.inputs[0].type not in QUANT8:
        return None
    return q.quant_reason(call, softmax_quant_params)


class _SoftmaxFrame(NamedTuple):
    """What float SOFTMAX and LOG_SOFTMAX share."""

    x: Value
    out: Value
    beta: float
    axis: int
    shape: tuple[int, ...]
    full: AffineMap  # the input's iteration space
    red: AffineMap  # into a buffer of reduced_shape
    mx: Value  # the maximum along the axis
    total: Value  # zeroed, for the sum of exponentials


def _softmax_frame(ctx: LoweringContext) -> _SoftmaxFrame:
    """Reads the operands and emits the maximum and the zeroed sum buffer."""
    x, out = ctx.input(0), ctx.output()
    beta = float(ctx.scalar(1))
    axis = axis_param(ctx, 2)
    shape = ctx.shape(x)
    rank = len(shape)
    full, red = identity_map(rank), reduced_map(rank, axis)
    mx = reduce_axis(ctx, x, axis, FLOAT_LOWEST, running_max)
    total = ctx.alloc(reduced_shape(shape, axis), f32)
    ctx.fill(total, 0.0)
    return _SoftmaxFrame(x, out, beta, axis, shape, full, red, mx, total)


def _softmax_rows(ctx: LoweringContext) -> bool:
    """Float32 SOFTMAX along the last axis with a finite beta > 0 by the
    vector row kernel (:func:`~nnc.passes.kernels.rows.softmax_rows`: rows
    in parallel, a polynomial exp, the sum in vector accumulators; within
    the float32 tolerance of the generic form below, not bit-identical to
    it); False (nothing emitted) for any other SOFTMAX."""
    beta = float(ctx.scalar(1))
    shape = ctx.shape(ctx.input(0))
    if ctx.info(0).type != T.TENSOR_FLOAT32 or axis_param(ctx, 2) != len(shape) - 1:
        return False
    if not (0.0 < beta < float("inf")):
        return False
    n = shape[-1]
    softmax_rows(ctx, ctx.flat(ctx.input(0)), ctx.flat(ctx.output()), prod(shape) // n, n, beta)
    return True


@lowering(Op.SOFTMAX, check=_check_softmax)
def softmax(ctx: LoweringContext) -> None:
    if ctx.info(0).type in QUANT8:
        softmax_quant(ctx)
        return
    if _softmax_rows(ctx):
        return
    x, out, beta, axis, shape, full, red, mx, total = _softmax_frame(ctx)

    # out = exp((x - max) * beta), total += out
    def exps(e: Emitter, args: Sequence[Value], idx) -> list[Value]:
        v, m, _, acc = args
        ex = _scaled_exp(e, v, m, beta)
        return [ex, e.add(acc, ex)]

    ctx.generic(
        shape,
        [(x, full), (mx, red)],
        [(out, full), (total, red)],
        exps,
        reduction_dims=(axis,),
    )
    ctx.generic(
        shape,
        [(total, red)],
        [(out, full)],
        lambda e, args, idx: [e.div(args[1], args[0])],
    )


@lowering(Op.L2_NORMALIZATION)
def l2_normalization(ctx: LoweringContext) -> None:
    if ctx.info(0).type in QUANT8:
        l2_normalization_quant(ctx)
        return
    x, out = ctx.input(0), ctx.output()
    axis = axis_param(ctx, 1)
    shape = ctx.shape(x)
    rank = len(shape)
    sq = reduce_axis(ctx, x, axis, 0.0, lambda e, acc, v: e.add(acc, e.mul(v, v)))

    def body(e: Emitter, args: Sequence[Value], idx) -> list[Value]:
        v, s, _ = args
        norm = e.max(e.sqrt(s), e.like(L2_EPSILON, s))
        return [e.div(v, norm)]

    ctx.generic(
        shape,
        [(x, identity_map(rank)), (sq, reduced_map(rank, axis))],
        [(out, identity_map(rank))],
        body,
    )


def axis_window(e: Emitter, pos: Value, radius: int, size: int) -> tuple[Value, Value]:
    """[max(0, pos - radius), min(size, pos + radius + 1)) as index values."""
    start = e.max(e.sub(pos, e.index(radius)), e.index(0))
    end = e.min(e.add(pos, e.index(radius + 1)), e.index(size))
    return start, end


@lowering(Op.LOCAL_RESPONSE_NORMALIZATION)
def local_response_normalization(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    radius = int(ctx.scalar(1))
    bias, alpha, beta = (float(ctx.scalar(i)) for i in (2, 3, 4))
    axis = axis_param(ctx, 5)
    shape = ctx.shape(x)
    rank = len(shape)

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        v = args[0]
        start, end = axis_window(e, idx[axis], radius, shape[axis])

        def step(e: Emitter, d: Value, accs: Sequence[Value]) -> list[Value]:
            w = e.load(x, [d if k == axis else idx[k] for k in range(rank)])
            return [e.add(accs[0], e.mul(w, w))]

        (s,) = e.for_(start, end, step, [e.like(0.0, v)])
        base = e.add(e.like(bias, v), e.mul(e.like(alpha, v), s))
        return [e.mul(v, e.pow(base, e.like(-beta, v)))]

    ctx.generic(shape, [(x, identity_map(rank))], [(out, identity_map(rank))], body)


# -- quantised SOFTMAX and L2_NORMALIZATION ------------------------------------------------------

#: the longest rows of quantised SOFTMAX lowered row by row (:func:`_softmax_q8_short_rows`)
SHORT_ROW = 8
#: Q5.26 input of exp() and Q12.19 accumulator of softmaxQuant8Impl
_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12


def softmax_quant_params(call: OpCall) -> tuple[int, int, int]:
    """``(input_multiplier, input_left_shift, diff_min)`` of quantised SOFTMAX
    (Android's ``softmaxQuant8``; QuantError where it fails)."""
    beta = q.f32(float(call.scalar(1)))
    scale = q.f32(call.inputs[0].scale)
    # 1.0 * beta * scale * (1 << 26), in double, capped at 2^31 - 1
    real = min(1.0 * beta * scale * float(1 << (31 - _SCALED_DIFF_INTEGER_BITS)), float((1 << 31) - 1))
    multiplier, left_shift = q.quantize_multiplier_greater_than_one(real)
    diff_min = -q.calculate_input_radius(_SCALED_DIFF_INTEGER_BITS, left_shift)
    return multiplier, left_shift, diff_min


def softmax_exp_table(multiplier: int, left_shift: int, diff_min: int) -> list[int]:
    """``exp_on_negative_values`` (Q0.31) of the rescaled difference ``-d`` for
    d = max - q in [0, 255]; 0 where the reference skips the element
    (``-d < diff_min``), which then contributes nothing and yields the type's
    minimum, exactly as the skipped branch."""
    table = []
    for d in range(256):
        if -d < diff_min:
            table.append(0)
            continue
        rescaled = q.multiply_by_quantized_multiplier_greater_than_one(-d, multiplier, left_shift)
        table.append(q.py_int(q.exp_on_negative_values(q.PY, rescaled, _SCALED_DIFF_INTEGER_BITS)))
    return table


def _clz32(e: Emitter, x: Value) -> Value:
    """Leading zeros of the i32 ``x`` read as uint32 (``x`` != 0), by binary search."""
    n = e.i32(0)
    for bits in (16, 8, 4, 2, 1):
        below = e.cmp("ult", x, e.i32(q.wrap32(1 << (32 - bits))))
        n = e.select(below, e.add(n, e.i32(bits)), n)
        x = e.select(below, e.op(arith.ShLIOp(x, e.i32(bits))), x)
    return n


def _shl_var(e: Emitter, x: Value, n: Value) -> Value:
    """``x << n`` for a runtime ``n`` in [0, 31]."""
    return e.op(arith.ShLIOp(x, n))


def _rdbpot_var(e: Emitter, x: Value, exponent: Value) -> Value:
    """gemmlowp ``RoundingDivideByPOT(x, exponent)`` for a runtime exponent >= 0
    (round half away from zero), computed in i64 so that any exponent below 63
    is defined (the reference requires <= 31; beyond that the quotient is 0)."""
    x64 = e.op(arith.ExtSIOp(x, i64))
    n = e.op(arith.ExtSIOp(exponent, i64))
    one = e.const(1, i64)
    mask = e.sub(e.op(arith.ShLIOp(one, n)), one)
    remainder = e.and_(x64, mask)
    threshold = e.op(arith.ShRSIOp(mask, one))
    threshold = e.add(threshold, e.select(e.cmp("lt", x64, e.const(0, i64)), one, e.const(0, i64)))
    up = e.select(e.cmp("gt", remainder, threshold), one, e.const(0, i64))
    return e.op(arith.TruncIOp(e.add(e.op(arith.ShRSIOp(x64, n)), up), i32))


def softmax_quant(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    t = ctx.info(0).type
    axis = axis_param(ctx, 2)
    shape = ctx.shape(x)
    rank = len(shape)
    qmin, qmax = q.QRANGE[t]
    multiplier, left_shift, diff_min = softmax_quant_params(ctx.call)
    full, red = identity_map(rank), reduced_map(rank, axis)
    rshape = reduced_shape(shape, axis)

    # exp table, indexed by max - q: a constant (not 256 stores to compile)
    table = ctx.constant(np.array(softmax_exp_table(multiplier, left_shift, diff_min), np.int32), i32)
    if _softmax_q8_short_rows(ctx, table, t):
        return

    mx = reduce_axis(ctx, x, axis, qmin, lambda e, acc, v: e.max(acc, q.load_q(e, v, t)), elem=i32)

    def lookup(e: Emitter, v: Value, m: Value) -> Value:
        return e.load(table, [e.index_cast(e.sub(m, q.load_q(e, v, t)))])

    # sum_of_exps (Q12.19) += Rescale<12>(exp)
    total = ctx.alloc(rshape, i32)
    ctx.fill(total, 0)
    ctx.generic(
        shape,
        [(x, full), (mx, red)],
        [(total, red)],
        lambda e, a, idx: [e.add(a[2], q.IR(e).rdbpot(lookup(e, a[0], a[1]), _ACCUMULATION_INTEGER_BITS))],
        reduction_dims=(axis,),
    )

    # per row: shifted_scale = 1 / (1 + shifted_sum_minus_one) and the final exponent
    scale_buf = ctx.alloc(rshape, i32)
    exp_buf = ctx.alloc(rshape, i32)
    ident = identity_map(rank)
    ctx.generic(rshape, [(total, ident)], [(scale_buf, ident), (exp_buf, ident)], lambda e, a, idx: list(_row_scale(e, a[0])))

    def body(e: Emitter, a: Sequence[Value], idx) -> list[Value]:
        v, m, shifted_scale, exponent = a[:4]
        return [_softmax_q8_output(e, lookup(e, v, m), shifted_scale, exponent, t)]

    ctx.generic(shape, [(x, full), (mx, red), (scale_buf, red), (exp_buf, red)], [(out, full)], body)


def _row_scale(e: Emitter, s: Value) -> tuple[Value, Value]:
    """A row's ``(shifted_scale, exponent)`` from its sum of exps (Q12.19):
    ``1 / (1 + shifted_sum_minus_one)`` after normalising by the leading
    zeros, and the final rounding division's exponent."""
    headroom_plus_one = _clz32(e, s)
    num_bits_over_unit = e.sub(e.i32(_ACCUMULATION_INTEGER_BITS), headroom_plus_one)
    # (uint32(s) << headroom_plus_one) - (1u << 31), as int32
    shifted_sum_minus_one = e.add(_shl_var(e, s, headroom_plus_one), e.i32(q.INT32_MIN))
    shifted_scale = q.ssa(q.one_over_one_plus_x_for_x_in_0_1(q.IR(e), shifted_sum_minus_one))
    return shifted_scale, e.add(num_bits_over_unit, e.i32(31 - 8))


def _softmax_q8_output(e: Emitter, exp: Value, shifted_scale: Value, exponent: Value, t: T) -> Value:
    """One stored output of quantised SOFTMAX from its exp (Q0.31) and its
    row's :func:`_row_scale`."""
    qmin, qmax = q.QRANGE[t]
    r = _rdbpot_var(e, q.IR(e).srdhm(shifted_scale, exp), exponent)
    if t != T.TENSOR_QUANT8_ASYMM:
        r = e.add(r, e.i32(-128))
    return q.store_q(e, r, t, qmin, qmax)


def _softmax_q8_short_rows(ctx: LoweringContext, table: Value, t: T) -> bool:
    """Quantised SOFTMAX along the last axis of at most
    :data:`SHORT_ROW` elements (a segmentation's classes) as one loop over
    the rows, each row's elements read and written as separate operands:
    the same operations per row as the reduction loops, so the same
    results, but with the rows, not a handful of elements, as the loop LLVM
    vectorises (the per-row reciprocal, dozens of operations, then runs
    lane by lane across rows).  False (nothing emitted) for other shapes."""
    x, out = ctx.input(0), ctx.output()
    shape = ctx.shape(x)
    n = shape[-1]
    if axis_param(ctx, 2) != len(shape) - 1 or not 2 <= n <= SHORT_ROW or not plain(x) or not plain(out):
        return False
    rows = prod(shape) // n
    xv, ov = ctx.reshaped(x, [rows, n]), ctx.reshaped(out, [rows, n])
    column = [AffineMap(1, 0, (AffineExpr.dimension(0), AffineExpr.constant(c))) for c in range(n)]
    qmin = q.QRANGE[t][0]

    def body(e: Emitter, a: Sequence[Value], idx) -> list[Value]:
        vals = [q.load_q(e, v, t) for v in a[:n]]
        m = e.i32(qmin)
        for v in vals:
            m = e.max(m, v)
        exps = [e.load(table, [e.index_cast(e.sub(m, v))]) for v in vals]
        total = e.i32(0)
        for x_exp in exps:
            total = e.add(total, q.IR(e).rdbpot(x_exp, _ACCUMULATION_INTEGER_BITS))
        shifted_scale, exponent = _row_scale(e, total)
        return [_softmax_q8_output(e, x_exp, shifted_scale, exponent, t) for x_exp in exps]

    ctx.generic([rows], [(xv, cmap) for cmap in column], [(ov, cmap) for cmap in column], body)
    return True


def _inv_sqrt_quantized_multiplier_exp(e: Emitter, x: Value) -> tuple[Value, Value]:
    """tflite's ``GetInvSqrtQuantizedMultiplierExp(x, -1, ...)`` for an i32
    ``x`` >= 0: ``(multiplier, shift)`` with 1/sqrt(x) ~ multiplier * 2^(shift - 31)
    (``shift`` <= 0); ``x`` <= 1 gives (INT32_MAX, 0)."""
    ops = q.IR(e)
    small = e.cmp("le", x, e.i32(1))
    big = e.cmp("ge", x, e.i32(1 << 29))  # x < 2^31: one division by 4 suffices
    x = e.select(big, e.op(arith.DivSIOp(x, e.i32(4))), x)
    shift = e.select(big, e.i32(12), e.i32(11))
    x = e.select(small, e.i32(2), x)  # a harmless value for the unused general path
    max_left_shift_bits = e.sub(_clz32(e, x), e.i32(1))
    left_shift_bit_pairs = e.sub(e.op(arith.ShRSIOp(max_left_shift_bits, e.i32(1))), e.i32(1))
    shift = e.sub(shift, left_shift_bit_pairs)
    x = _shl_var(e, x, e.add(left_shift_bit_pairs, left_shift_bit_pairs))
    # Newton-Raphson for 1/sqrt in Q3.28 (FixedPoint<int32, 3>)
    half_input = ops.rdbpot(ops.ashr(x, 1), 1)  # SaturatingRoundingMultiplyByPOT<-1>
    half_three = (1 << 28) + (1 << 27)
    r: q.Val = 1 << 28  # F3::One()
    for _ in range(5):
        r3 = q.saturating_rounding_multiply_by_pot(ops, ops.srdhm(ops.srdhm(r, r), r), 6)  # Q9 -> Q3
        r = q.saturating_rounding_multiply_by_pot(
            ops, ops.sub(ops.srdhm(half_three, r), ops.srdhm(half_input, r3)), 3
        )  # Q6 -> Q3
    r = ops.v(ops.srdhm(r, 1518500250))  # * sqrt(2) / 2
    negative = e.cmp("lt", shift, e.i32(0))
    r = e.select(negative, _shl_var(e, r, e.max(e.neg(shift), e.i32(0))), r)
    shift = e.select(negative, e.i32(0), shift)
    shift = e.neg(shift)  # reverse_shift = -1
    return e.select(small, e.i32(q.INT32_MAX), r), e.select(small, e.i32(0), shift)


def l2_normalization_quant(ctx: LoweringContext) -> None:
    x, out = ctx.input(0), ctx.output()
    t = ctx.info(0).type
    zp = ctx.info(0).zero_point
    axis = axis_param(ctx, 1)
    shape = ctx.shape(x)
    rank = len(shape)
    signed = t == T.TENSOR_QUANT8_ASYMM_SIGNED
    # int8 along the last axis runs reference_integer_ops::L2Normalization
    integer_ops = signed and axis == rank - 1
    out_zp = 0 if signed else 128
    full, red = identity_map(rank), reduced_map(rank, axis)
    rshape = reduced_shape(shape, axis)

    def centred(e: Emitter, v: Value) -> Value:
        w = q.load_q(e, v, t)
        return e.sub(w, e.i32(zp)) if zp else w

    def square(e: Emitter, acc: Value, v: Value) -> Value:
        c = centred(e, v)
        return e.add(acc, e.mul(c, c))

    sq = reduce_axis(ctx, x, axis, 0, square, elem=i32)
    mult_buf = ctx.alloc(rshape, i32)
    shift_buf = ctx.alloc(rshape, i32)
    ident = identity_map(rank)
    ctx.generic(
        rshape,
        [(sq, ident)],
        [(mult_buf, ident), (shift_buf, ident)],
        lambda e, a, idx: list(_inv_sqrt_quantized_multiplier_exp(e, a[0])),
    )

    def body(e: Emitter, a: Sequence[Value], idx) -> list[Value]:
        v, m, shift = a[:3]
        c = centred(e, v)
        if integer_ops:
            # MultiplyByQuantizedMultiplier(c, m, shift + 7)
            s = e.add(shift, e.i32(7))
            zero = e.i32(0)
            left, right = e.max(s, zero), e.max(e.neg(s), zero)
            r = _rdbpot_var(e, q.IR(e).srdhm(_shl_var(e, c, left), m), right)
        else:
            # MultiplyByQuantizedMultiplierSmallerThanOneExp(128 * c, m, shift)
            r = _rdbpot_var(e, q.IR(e).srdhm(e.mul(c, e.i32(128)), m), e.neg(shift))
        if out_zp:
            r = e.add(r, e.i32(out_zp))
        return [q.store_q(e, r, t)]

    ctx.generic(shape, [(x, full), (mult_buf, red), (shift_buf, red)], [(out, full)], body)


# -- LOG_SOFTMAX, INSTANCE_NORMALIZATION (float32) -----------------------------------


@lowering(Op.LOG_SOFTMAX)
def log_softmax(ctx: LoweringContext) -> None:
    """Android's LogSoftmax: ``(x - max) * beta - log(sum(exp((x - max) * beta)))``
    along the axis."""
    x, out, beta, axis, shape, full, red, mx, total = _softmax_frame(ctx)
    ctx.generic(shape, [(x, full), (mx, red)], [(total, red)],
                lambda e, a, idx: [e.add(a[2], _scaled_exp(e, a[0], a[1], beta))], reduction_dims=(axis,))  # fmt: skip

    def body(e: Emitter, a: Sequence[Value], idx) -> list[Value]:
        v, m, s, _ = a
        d = e.sub(v, m)
        if beta != 1.0:
            d = e.mul(d, e.f32(beta))
        return [e.sub(d, e.log(s))]

    ctx.generic(shape, [(x, full), (mx, red), (total, red)], [(out, full)], body)


@lowering(Op.INSTANCE_NORMALIZATION)
def instance_normalization(ctx: LoweringContext) -> None:
    """Android's InstanceNormalization per (batch, channel):
    ``mean = sum / n``, ``var = sum((x - mean)^2) / n``,
    ``out = (x - mean) * gamma / sqrt(var + epsilon) + beta``."""
    x, out = ctx.input(0), ctx.output()
    gamma, beta, eps = (float(ctx.scalar(i)) for i in (1, 2, 3))
    nchw = bool(ctx.scalar(4))
    shape = ctx.shape(x)
    spatial = (2, 3) if nchw else (1, 2)
    n = shape[spatial[0]] * shape[spatial[1]]
    full = identity_map(4)
    red = affine_map(4, lambda *d: [0 if k in spatial else d[k] for k in range(4)])
    rshape = [1 if k in spatial else s for k, s in enumerate(shape)]
    total = ctx.alloc(rshape, f32)
    ctx.fill(total, 0.0)
    ctx.generic(shape, [(x, full)], [(total, red)], lambda e, a, idx: [e.add(a[1], a[0])], reduction_dims=spatial)
    mean = ctx.alloc(rshape, f32)
    ctx.elementwise(mean, [total], lambda e, a: e.div(a[0], e.f32(float(n))))
    sq = ctx.alloc(rshape, f32)
    ctx.fill(sq, 0.0)

    def sq_diff(e: Emitter, a: Sequence[Value], idx) -> list[Value]:
        d = e.sub(a[0], a[1])
        return [e.add(a[2], e.mul(d, d))]

    ctx.generic(shape, [(x, full), (mean, red)], [(sq, red)], sq_diff, reduction_dims=spatial)
    # sigma = sqrt(var + epsilon), in place of the squared-difference sums
    ctx.elementwise(sq, [sq], lambda e, a: e.sqrt(e.add(e.div(a[0], e.f32(float(n))), e.f32(eps))))

    def normalize(e: Emitter, a: Sequence[Value], idx) -> list[Value]:
        v, m, sigma, _ = a
        return [e.add(e.div(e.mul(e.sub(v, m), e.f32(gamma)), sigma), e.f32(beta))]

    ctx.generic(shape, [(x, full), (mean, red), (sq, red)], [(out, full)], normalize)
