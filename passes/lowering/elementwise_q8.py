"""Quantised element-wise operations (TENSOR_QUANT8_ASYMM and _SIGNED), with Android's integer-only reference arithmetic
(see :mod:`nnc.passes.lowering.quant`).

* ADD / SUB / MUL: :func:`binary`, called by the element-wise lowering for
  quantised operands; the fused activation is a clamp in the output's
  quantised domain.
* RELU / RELU1 / RELU6 / LOGISTIC / TANH: :func:`unary`.  LOGISTIC and TANH
  evaluate gemmlowp's fixed-point logistic/tanh inline on each element.
* Comparisons compare float32 real values; MAXIMUM / MINIMUM and SELECT
  requantise their inputs to the output like Android's ``requantize<T>``
  (double arithmetic, std::round); PRELU uses tflite-style fixed point
  (two QuantizeMultiplier multipliers); HARD_SWISH is tflite's int16
  fixed-point reference kernel with the parameters of Android's
  ``hardSwishQuant``; RSQRT (feature level 7) is Android's ``makeQuantized``:
  dequantize, ``1.f / std::sqrt`` in float32, requantize with std::round.
  Its 256 possible results are computed when the op is lowered and read
  from a constant table (:func:`float_unary`).

This module registers no lowering: the element-wise family
(:mod:`nnc.passes.lowering.elementwise`) calls it for quantised operands.

Each parameter record is computed when the op is lowered; a combination the
reference implementation refuses at execution (a multiplier out of range, say)
is reported by the ``check`` hooks as unsupported instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32, f64, i32

from nnc.dialects.rules.base import OpCall
from nnc.enums import FuseCode
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.kernels import q8_binary
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import QUANT8, Emitter, LoweringContext, Value, coalesced, plain


def _qp(info) -> tuple[float, int]:
    return info.scale, info.zero_point


# -- ADD / SUB / MUL -------------------------------------------------------------------------------


def binary_params(call: OpCall) -> q.AddParams | q.MulParams:
    """The kernel parameters of a quantised ADD/SUB/MUL (QuantError if the
    reference implementation rejects the scales)."""
    a, b, out = call.inputs[0], call.inputs[1], call.outputs[0]
    act = call.scalar(2)
    if call.type in (Op.ADD, Op.SUB):
        return q.add_params(a.type, _qp(a), _qp(b), _qp(out), act, subtract=call.type == Op.SUB)
    if call.type == Op.MUL:
        return q.mul_params(a.type, _qp(a), _qp(b), _qp(out), act)
    raise q.QuantError(f"{call.type.name} has no quantised form (float and int32 only)")


def check_binary(call: OpCall) -> str | None:
    if call.inputs[0].type not in QUANT8:
        return None
    return q.quant_reason(call, binary_params)


def binary(ctx: LoweringContext) -> None:
    """Quantised ADD/SUB/MUL with broadcasting: the vector kernels of
    :mod:`~nnc.passes.kernels.q8_binary` where the shapes are rows of
    elements, each input whole or one row broadcast, else a loop of the
    scalar arithmetic."""
    p = binary_params(ctx.call)
    t = ctx.info(0).type
    if _vector_binary(ctx, p, t):
        return

    def body(e: Emitter, a: list[Value]) -> Value:
        return q.binary_stored(e, p, t, a[0], a[1])

    ctx.elementwise(ctx.output(), [ctx.input(0), ctx.input(1)], body)


def _vector_binary(ctx: LoweringContext, p: q.AddParams | q.MulParams, t: T) -> bool:
    """:func:`~nnc.passes.kernels.q8_binary.binary` of the operation, when
    its arithmetic has the vector form, it has at least
    :data:`~nnc.passes.kernels.q8_binary.MIN_ELEMENTS` elements and its
    shapes merge into ``[n]`` (both inputs whole) or ``[rows, cols]`` with
    each input whole or one row; False (nothing emitted) otherwise."""
    a, b, out = ctx.input(0), ctx.input(1), ctx.output()
    if not q8_binary.vector_form(p) or not all(plain(v) for v in (a, b, out)):
        return False
    oshape = ctx.shape(out)
    shapes = coalesced(oshape, [ctx.shape(a), ctx.shape(b)])
    if shapes is None:
        kept = [k for k, d in enumerate(oshape) if d != 1]
        padded = [[1] * (len(oshape) - len(s)) + list(s) for s in (ctx.shape(a), ctx.shape(b))]
        shapes = ([oshape[k] for k in kept] or [1], [[s[k] for k in kept] or [1] for s in padded])
    new_out, new_ins = shapes
    if prod(new_out) < q8_binary.MIN_ELEMENTS:
        return False
    if len(new_out) == 1 and all(s == new_out for s in new_ins):
        rows, cols, strides = 1, new_out[0], [new_out[0], new_out[0]]
    elif len(new_out) == 2 and all(s in (new_out, [1, new_out[1]]) for s in new_ins):
        rows, cols = new_out
        strides = [cols if s == new_out else 0 for s in new_ins]
    else:
        return False
    unsigned = t == T.TENSOR_QUANT8_ASYMM
    q8_binary.binary(ctx, p, unsigned, ctx.flat(a), ctx.flat(b), ctx.flat(out), rows, cols, *strides)
    return True


# -- RELU* / LOGISTIC / TANH ------------------------------------------------------------------------

_RELU_CODES = {Op.RELU: FuseCode.RELU, Op.RELU1: FuseCode.RELU1, Op.RELU6: FuseCode.RELU6}


@dataclass(frozen=True)
class _Clamp:
    """RELU* with the output quantised like the input: Android's clamp of the
    input to the activation range of the input's own quantisation."""

    lo: int
    hi: int


@dataclass(frozen=True)
class _Requantize:
    """RELU* whose declared output quantisation differs from the input's:
    rescale to the output's, then clamp to its activation range."""

    lo: int
    hi: int
    multiplier: int
    shift: int


def _unary_params(call: OpCall) -> _Clamp | _Requantize | q.SigmoidParams:
    x, out = call.inputs[0], call.outputs[0]
    if call.type in _RELU_CODES:
        code = _RELU_CODES[call.type]
        if (q.f32(out.scale), out.zero_point) == (q.f32(x.scale), x.zero_point):
            return _Clamp(*q.calculate_activation_range(x.type, code, x.scale, x.zero_point))
        lo, hi = q.calculate_activation_range(out.type, code, out.scale, out.zero_point)
        return _Requantize(lo, hi, *q.requantize_params(x.scale, out.scale))
    fixed = (q.LOGISTIC_OUTPUT if call.type == Op.LOGISTIC else q.TANH_OUTPUT)[x.type]
    if (q.f32(out.scale), out.zero_point) != (q.f32(fixed[0]), fixed[1]):
        raise q.QuantError(
            f"output must have scale {fixed[0]} and zero point {fixed[1]}, "
            f"got {out.scale} and {out.zero_point}"
        )
    return q.sigmoid_params(x.scale, x.zero_point)


def check_unary(call: OpCall) -> str | None:
    if call.inputs[0].type not in QUANT8:
        return None
    if call.type not in (*_RELU_CODES, Op.LOGISTIC, Op.TANH):
        return f"{call.type.name} has no quantised form"
    return q.quant_reason(call, _unary_params)


def unary(ctx: LoweringContext) -> None:
    """Quantised RELU/RELU1/RELU6 (a clamp, or a requantisation when the
    output's quantisation differs), LOGISTIC and TANH."""
    p = _unary_params(ctx.call)
    t, ot = ctx.info(0).type, ctx.out_info(0).type
    x_zp, out_zp = ctx.info(0).zero_point, ctx.out_info(0).zero_point
    sigmoid = q.logistic_element if ctx.call.type == Op.LOGISTIC else q.tanh_element

    def body(e: Emitter, a: list[Value]) -> Value:
        ops = q.IR(e)
        x = q.load_q(e, a[0], t)
        if isinstance(p, _Clamp):
            return q.store_q(e, x, ot, p.lo, p.hi)
        if isinstance(p, _Requantize):
            return q.store_q(e, q.requantize(ops, x, x_zp, out_zp, p.multiplier, p.shift), ot, p.lo, p.hi)
        return q.store_q(e, sigmoid(ops, t, p, x), ot, saturate=False)

    ctx.elementwise(ctx.output(), [ctx.input(0)], body)


# -- comparisons, MAXIMUM / MINIMUM, PRELU, SELECT, HARD_SWISH ----------------------


def dequantizer(info) -> Callable[[Emitter, Value], Value]:
    """Android's real value of a stored element in float32:
    ``(q - zero_point) * scale`` (an int difference times a float)."""
    t, scale, zp = info.type, q.f32(info.scale), info.zero_point

    def real(e: Emitter, v: Value) -> Value:
        return e.mul(e.to_float(e.sub(q.load_q(e, v, t), e.i32(zp)), f32), e.f32(scale))

    return real


def requantizer(src, dst) -> Callable[[Emitter, Value], Value]:
    """Android's ``requantize<T>(value, oldShape, newShape)`` (OperationsUtils.h):
    ``d = double((q - zp_old) * scale_old) / scale_new + zp_new``, saturated to
    the type's range, else ``std::round(d)`` (half away from zero).  The
    identity when the quantisations are equal (the round trip is exact)."""
    t = src.type
    if (q.f32(src.scale), src.zero_point) == (q.f32(dst.scale), dst.zero_point):
        return lambda e, v: v
    real = dequantizer(src)
    qmin, qmax = q.QRANGE[t]
    new_scale, new_zp = float(q.f32(dst.scale)), float(dst.zero_point)

    def requant(e: Emitter, v: Value) -> Value:
        d = e.op(arith.ExtFOp(real(e, v), f64))
        d = e.add(e.div(d, e.const(new_scale, f64)), e.const(new_zp, f64))
        lo, hi = e.const(float(qmin), f64), e.const(float(qmax), f64)
        d = e.select(e.cmp("lt", d, lo), lo, e.select(e.cmp("gt", d, hi), hi, d))
        whole = e.op(math.TruncOp(d))
        half = e.cmp("ge", e.abs(e.sub(d, whole)), e.const(0.5, f64))
        step = e.select(e.cmp("lt", d, e.const(0.0, f64)), e.const(-1.0, f64), e.const(1.0, f64))
        r = e.select(half, e.add(whole, step), whole)
        return q.store_q(e, e.to_int(r, i32), t, saturate=False)

    return requant


@dataclass(frozen=True)
class _PReluParams:
    """Android's ``prelu::evalQuant8`` multipliers (QuantizeMultiplier)."""

    pos: tuple[int, int]
    neg: tuple[int, int]


def _prelu_params(call: OpCall) -> _PReluParams:
    a, b, out = call.inputs[0], call.inputs[1], call.outputs[0]
    sa, sb, so = np.float32(a.scale), np.float32(b.scale), np.float32(out.scale)
    product = float(sa * sb)  # float product, widened to double
    return _PReluParams(q.quantize_multiplier(float(sa / so)), q.quantize_multiplier(product / float(so)))


def check_plain_binary(call: OpCall) -> str | None:
    if call.inputs[0].type not in QUANT8:
        return None
    return q.quant_reason(call, _prelu_params) if call.type == Op.PRELU else None


def plain_binary(ctx: LoweringContext) -> None:
    """Quantised MAXIMUM / MINIMUM (both inputs requantised to the output,
    then std::max / std::min) and PRELU (tflite-style fixed point:
    ``zp_out + MBQM(x, pos)`` for ``x = q - zp_in >= 0``, else
    ``zp_out + MBQM(x * (alpha - zp_alpha), neg)``, saturated)."""
    a, b, out = ctx.info(0), ctx.info(1), ctx.out_info()
    t = a.type
    if ctx.call.type in (Op.MAXIMUM, Op.MINIMUM):
        fa, fb = requantizer(a, out), requantizer(b, out)
        pick = "gt" if ctx.call.type == Op.MAXIMUM else "lt"
        unsigned = q.is_unsigned(t)

        def body(e: Emitter, v: list[Value]) -> Value:
            x, y = fa(e, v[0]), fb(e, v[1])
            # std::max(x, y) = x < y ? y : x;  std::min(x, y) = y < x ? y : x
            better = e.cmp(("u" if unsigned else "") + pick, y, x)
            return e.select(better, y, x)

    else:
        p = _prelu_params(ctx.call)

        def body(e: Emitter, v: list[Value]) -> Value:
            ops = q.IR(e)
            x = e.sub(q.load_q(e, v[0], t), e.i32(a.zero_point))
            alpha = e.sub(q.load_q(e, v[1], t), e.i32(b.zero_point))
            pos = q.ssa(q.mbqm(ops, x, *p.pos))
            neg = q.ssa(q.mbqm(ops, e.mul(x, alpha), *p.neg))
            r = e.select(e.cmp("ge", x, e.i32(0)), pos, neg)
            return q.store_q(e, e.add(r, e.i32(out.zero_point)), t)

    ctx.elementwise(ctx.output(), [ctx.input(0), ctx.input(1)], body)


# HARD_SWISH: tflite reference_ops::HardSwish on int16 fixed point, with the
# parameters of Android's hardSwishQuant (Activation.cpp).


@dataclass(frozen=True)
class _HardSwishParams:
    out_m16: int
    out_exp: int
    relu_m16: int
    relu_exp: int


def _down_scale_int16(m: int) -> int:
    """tflite ``DownScaleInt32ToInt16Multiplier``."""
    if m >= q.INT32_MAX - (1 << 15):
        return 2**15 - 1
    return (m + (1 << 15)) >> 16


def _hard_swish_params(call: OpCall) -> _HardSwishParams:
    x, out = call.inputs[0], call.outputs[0]
    hires = np.float32(1.0 / 128.0) * np.float32(x.scale)
    out_m, out_exp = q.quantize_multiplier(float(hires / np.float32(out.scale)))
    if out_exp > 0:
        raise q.QuantError(f"output multiplier exponent {out_exp} > 0 (input scale too large for the output's)")
    relu_m, relu_exp = q.quantize_multiplier(float(hires / np.float32(3.0 / 32768.0)))
    return _HardSwishParams(_down_scale_int16(out_m), out_exp, _down_scale_int16(relu_m), relu_exp)


def check_plain_unary(call: OpCall) -> str | None:
    if call.inputs[0].type not in QUANT8:
        return None
    if call.type in FLOAT_UNARY:
        return None
    if call.type != Op.HARD_SWISH:
        return f"{call.type.name} has no quantised form"
    return q.quant_reason(call, _hard_swish_params)


def _srdhm16(e: Emitter, a: Value, b: Value, rounding: bool) -> Value:
    """gemmlowp's int16 ``SaturatingRoundingDoublingHighMul`` (or tflite's
    non-rounding ``SaturatingDoublingHighMul``) on i32-held int16 values:
    ``(a*b + nudge) / 2^15`` truncated toward zero, INT16_MIN^2 -> INT16_MAX."""
    ab = e.mul(a, b)
    if rounding:
        nudge = e.select(e.cmp("ge", ab, e.i32(0)), e.i32(1 << 14), e.i32(1 - (1 << 14)))
        ab = e.add(ab, nudge)
    r = e.op(arith.DivSIOp(ab, e.i32(1 << 15)))
    lo = e.i32(-(1 << 15))
    overflow = e.and_(e.cmp("eq", a, lo), e.cmp("eq", b, lo))
    return e.select(overflow, e.i32((1 << 15) - 1), r)


def _shl16(e: Emitter, x: Value, n: int) -> Value:
    """gemmlowp ``ShiftLeft(int16, n)``: saturating."""
    return e.clamp(e.mul(x, e.i32(1 << n)), -(1 << 15), (1 << 15) - 1)


def hard_swish(ctx: LoweringContext) -> None:
    """Quantised HARD_SWISH, bit-exact with tflite's reference kernel."""
    p = _hard_swish_params(ctx.call)
    t, ot = ctx.info(0).type, ctx.out_info().type
    in_zp, out_zp = ctx.info(0).zero_point, ctx.out_info().zero_point

    def body(e: Emitter, a: list[Value]) -> Value:
        ops = q.IR(e)
        x = e.sub(q.load_q(e, a[0], t), e.i32(in_zp))
        hires = e.mul(x, e.i32(1 << 7))
        pre_out = _srdhm16(e, hires, e.i32(p.out_m16), rounding=True)
        r = hires
        if p.relu_exp > 0:
            r = _shl16(e, r, p.relu_exp - 1)
        r = _srdhm16(e, r, e.i32(p.relu_m16), rounding=True)
        if p.relu_exp > 0:
            r = _shl16(e, r, 1)
        if p.relu_exp < 0:
            r = ops.rdbpot(r, -p.relu_exp)
        r = e.op(arith.ShRSIOp(e.add(r, e.i32(1 << 15)), e.i32(1)))
        y = _srdhm16(e, r, pre_out, rounding=False)
        y = ops.rdbpot(y, -p.out_exp)
        return q.store_q(e, e.add(y, e.i32(out_zp)), ot)

    ctx.elementwise(ctx.output(), [ctx.input(0)], body)


# -- quantised unary ops computed in float (Android's makeQuantized) ---------------------------


def _rsqrt(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float32(1.0) / np.sqrt(x)


#: quantised unary ops whose reference dequantizes, applies a float32 function
#: and requantizes each element (Elementwise.cpp ``makeQuantized``)
FLOAT_UNARY: dict[Op, Callable[[np.ndarray], np.ndarray]] = {Op.RSQRT: _rsqrt}


def float_unary_table(fn: Callable[[np.ndarray], np.ndarray], t: T, x_scale: float, x_zp: int,
                      out_scale: float, out_zp: int) -> np.ndarray:  # fmt: skip
    """The stored output byte for each stored input byte 0..255 (the raw bits:
    entry k is the value k of QUANT8_ASYMM, or k - 256 above 127 of _SIGNED).

    float32 throughout, as the C++: ``(int32)(q - zp) * scale``, ``fn``,
    ``zp + std::round(y / scale)`` (half away from zero), clamped to the
    type's range with std::min/std::max, which send NaN (and +inf) to the
    maximum."""
    lo, hi = q.QRANGE[t]
    raw = np.arange(256, dtype=np.int32)
    values = raw if q.is_unsigned(t) else np.where(raw > 127, raw - 256, raw)
    real = (values - np.int32(x_zp)).astype(np.float32) * np.float32(x_scale)
    y = fn(real).astype(np.float32) / np.float32(out_scale)
    rounded = np.sign(y) * np.floor(np.abs(y) + np.float32(0.5))
    out = np.float32(out_zp) + rounded.astype(np.float32)
    out = np.where(np.isnan(out), np.float32(hi), np.clip(out, lo, hi)).astype(np.int32)
    return (out & 0xFF).astype(np.uint8).view(np.int8)


def float_unary(ctx: LoweringContext) -> None:
    """``out[i] = table[bits(in[i])]`` with the table of :func:`float_unary_table`."""
    x, out = ctx.info(0), ctx.out_info(0)
    values = float_unary_table(FLOAT_UNARY[ctx.call.type], x.type, x.scale, x.zero_point, out.scale, out.zero_point)
    table = ctx.constant(values, q.storage_type(x.type))

    def body(e: Emitter, a: list[Value]) -> Value:
        k = e.index_cast(e.op(arith.ExtUIOp(a[0], i32)))
        return e.load(table, [k])

    ctx.elementwise(ctx.output(), [ctx.input(0)], body)
