"""Quantised integer arithmetic, bit-exact with Android's reference CPU path.

Android's NNAPI CPU implementation computes quantised operations with
integers only: scales become fixed-point multipliers at preparation time
(``nn/common/OperationsUtils.cpp``), and the kernels (TFLite's reference and
optimized ops) combine them with gemmlowp's rounding primitives
(``fixedpoint.h``).  This module reproduces that arithmetic in two layers:

* **compile time** (plain Python): :func:`quantize_multiplier` and its
  variants, :func:`calculate_activation_range`, :func:`calculate_input_radius`,
  the per-operation parameter records (:func:`add_params`, :func:`mul_params`,
  :func:`sigmoid_params`), float<->quant conversions, and a Python evaluation
  of every element function (used by tests and for constant folding);
* **code generation**: the same element functions emitted as ``arith`` ops on
  ``i32`` (``i64`` inside the high multiply) through an
  :class:`~nnc.passes.lowering.Emitter`, plus :func:`load_q` / :func:`store_q`
  to move between the ``i8`` storage of a quantised tensor and ``i32``.

Every algorithm is written once against :class:`Int32Ops`, whose two
backends are :data:`PY` (Python ints with int32 wrap-around, exactly what the
C code computes where it does not overflow) and :class:`IR` (emits code;
operands that are Python ints are folded at compile time).  Python wrappers
with the reference names (:func:`saturating_rounding_doubling_high_mul`,
:func:`rounding_divide_by_pot`, :func:`multiply_by_quantized_multiplier`, ...)
evaluate the :data:`PY` backend; ``emit_*`` functions the :class:`IR` one.

Storage: every 8-bit quantised type is stored as ``i8``; TENSOR_QUANT8_ASYMM is
unsigned (zero-extend on load), the others are signed (sign-extend).

Scales are float32 in NNAPI; every helper rounds the given scale to float32
first and reproduces the C++ expression types (float vs double) of the
reference, so that multipliers match bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i32, i64
from xdsl.ir import Attribute, SSAValue

from nnc.dialects.nnapi import QUANT_STORAGE as STORAGE
from nnc.dialects.rules.elementwise import LOGISTIC_OUTPUT as LOGISTIC_OUTPUT  # the rule's fact, read as q.*_OUTPUT
from nnc.dialects.rules.elementwise import TANH_OUTPUT as TANH_OUTPUT
from nnc.enums import FuseCode, OperandType
from nnc.operand_types import QRANGE as QRANGE
from nnc.operand_types import UNSIGNED_QUANT_TYPES
from nnc.passes.build import arith_binary

T = OperandType

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

class QuantError(ValueError):
    """Quantisation parameters the reference implementation rejects."""


# -- scalar helpers ---------------------------------------------------------------------


def quant_reason(call, params: Callable[[Any], object]) -> str | None:
    """For a lowering's ``check``: None when ``params(call)`` can compute the
    quantised form's parameters, else why not (``quantised OP: reason``)."""
    try:
        params(call)
    except QuantError as e:
        return f"quantised {call.type.name}: {e}"
    return None


def wrap32(x: int) -> int:
    """``x`` reduced to int32 (two's complement wrap-around)."""
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def f32(x: float) -> float:
    """``x`` rounded to float32 (NNAPI scales are C ``float``)."""
    return float(np.float32(x))


def round_half_away(x: float) -> int:
    """``std::round`` of a finite float/double value, as an int (exact)."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:  # x - t is exact in binary floating point
        t += 1 if x > 0 else -1
    return t


def _roundf(x: np.float32) -> np.float32:
    """``std::round(float)``: half away from zero; inf/NaN unchanged."""
    if not np.isfinite(x):
        return x
    return np.float32(round_half_away(float(x)))


def _saturate_int32(x: int) -> int:
    return min(max(x, INT32_MIN), INT32_MAX)


def is_unsigned(t: OperandType) -> bool:
    return t in UNSIGNED_QUANT_TYPES


# -- multipliers (OperationsUtils.cpp) -------------------------------------------------------


def quantize_multiplier(double_multiplier: float) -> tuple[int, int]:
    """``QuantizeMultiplier``: ``d ~= m * 2^(shift - 31)`` with ``m`` in [2^30, 2^31).

    Returns ``(quantized_multiplier, shift)``; ``shift`` > 0 is a left shift.
    Like TFLite (and unlike Android 11, where the next right shift would be
    undefined behaviour) a multiplier below 2^-31 is flushed to ``(0, 0)``.
    """
    if double_multiplier == 0.0:
        return 0, 0
    q, shift = math.frexp(double_multiplier)
    q_fixed = round_half_away(q * (1 << 31))
    if q_fixed > (1 << 31):
        raise QuantError(f"cannot quantize multiplier {double_multiplier}")
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if q_fixed > INT32_MAX:
        raise QuantError(f"cannot quantize multiplier {double_multiplier}")
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def quantize_multiplier_smaller_than_one_exp(double_multiplier: float) -> tuple[int, int]:
    """``QuantizeMultiplierSmallerThanOneExp``: ``(m, left_shift)``, ``left_shift <= 0``;
    the multiplier must lie in (0, 1)."""
    if not 0.0 < double_multiplier < 1.0:
        raise QuantError(f"multiplier {double_multiplier} must be in (0, 1)")
    m, shift = quantize_multiplier(double_multiplier)
    if shift > 0:
        raise QuantError(f"multiplier {double_multiplier} must be in (0, 1)")
    return m, shift


def quantize_multiplier_smaller_than_one(double_multiplier: float) -> tuple[int, int]:
    """``QuantizeMultiplierSmallerThanOne``: ``(m, right_shift)``, ``right_shift >= 0``;
    the multiplier must lie in [0, 1)."""
    if not 0.0 <= double_multiplier < 1.0:
        raise QuantError(f"multiplier {double_multiplier} must be in [0, 1)")
    if double_multiplier == 0.0:
        return 0, 0
    q, exp = math.frexp(double_multiplier)
    right_shift = -exp
    q_fixed = round_half_away(q * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        right_shift -= 1
    if right_shift < 0 or q_fixed > INT32_MAX:
        raise QuantError(f"cannot quantize multiplier {double_multiplier}")
    return q_fixed, right_shift


def quantize_multiplier_greater_than_one(double_multiplier: float) -> tuple[int, int]:
    """``QuantizeMultiplierGreaterThanOne``: ``(m, left_shift)``, ``left_shift >= 0``;
    the multiplier must be > 1."""
    if not double_multiplier > 1.0:
        raise QuantError(f"multiplier {double_multiplier} must be > 1")
    q, left_shift = math.frexp(double_multiplier)
    q_fixed = round_half_away(q * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        left_shift += 1
    if left_shift < 0 or q_fixed > INT32_MAX:
        raise QuantError(f"cannot quantize multiplier {double_multiplier}")
    return q_fixed, left_shift


def calculate_input_radius(input_integer_bits: int, input_left_shift: int) -> int:
    """``CalculateInputRadius``: largest input magnitude that does not saturate."""
    max_input_rescaled = (
        1.0 * ((1 << input_integer_bits) - 1) * (1 << (31 - input_integer_bits)) / (1 << input_left_shift)
    )
    return int(math.floor(max_input_rescaled))


def calculate_activation_range(
    t: OperandType, activation: int, scale: float, zero_point: int
) -> tuple[int, int]:
    """``CalculateActivationRangeUint8/Int8``: a fused activation as a clamp
    ``[act_min, act_max]`` in the quantised domain of ``(scale, zero_point)``."""
    qmin, qmax = QRANGE[t]
    s = np.float32(scale)

    def quantize(f: float) -> int:
        # zero_point + static_cast<int32_t>(std::round(f / scale)), f and scale float
        with np.errstate(over="ignore", divide="ignore"):
            q = np.float32(f) / s
        if not np.isfinite(q):  # static_cast of inf is undefined in C; saturate
            return zero_point + (INT32_MAX if q > 0 else INT32_MIN)
        return zero_point + _saturate_int32(round_half_away(float(q)))

    if activation == FuseCode.NONE:
        return qmin, qmax
    if activation == FuseCode.RELU:
        return max(qmin, quantize(0.0)), qmax
    if activation == FuseCode.RELU6:
        return max(qmin, quantize(0.0)), min(qmax, quantize(6.0))
    if activation == FuseCode.RELU1:
        return max(qmin, quantize(-1.0)), min(qmax, quantize(1.0))
    raise QuantError(f"unsupported fused activation {activation}")


# -- float <-> quant (Quantize.cpp / Dequantize.cpp) -------------------------------------------


def quantize_value(x: float, t: OperandType, scale: float, zero_point: int) -> int:
    """QUANTIZE of one float32 value: ``clamp(zp + round(x / scale))`` in float32."""
    qmin, qmax = QRANGE[t]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        q = np.float32(x) / np.float32(scale)
        o = np.float32(zero_point) + _roundf(q)
    o = o if o < np.float32(qmax) else np.float32(qmax)  # std::min<float>(qmax, o)
    o = o if np.float32(qmin) < o else np.float32(qmin)  # std::max<float>(qmin, o)
    return int(o)


def dequantize_value(q: int, scale: float, zero_point: int) -> float:
    """DEQUANTIZE of one value: ``scale * (q - zero_point)`` in float32."""
    return float(np.float32(scale) * np.float32(q - zero_point))


# -- the int32 primitive backends ------------------------------------------------------------

Val = int | SSAValue  # an int32 value: compile-time int or i32 SSA value
Cond = bool | SSAValue  # a condition: compile-time bool or i1 SSA value


class Int32Ops:
    """The int32 primitives gemmlowp/TFLite kernels are written with.

    Values are :data:`Val` (int32), conditions :data:`Cond`.  ``shl`` wraps
    around on overflow (the C code's ``x * (1 << n)`` is undefined there and
    never reached for valid parameters); ``srdhm`` and ``rdbpot`` are gemmlowp's
    ``SaturatingRoundingDoublingHighMul`` and ``RoundingDivideByPOT``.

    ``bits`` is the width of gemmlowp's raw type the fixed-point functions
    below compute in: 32 here, 16 for :class:`Int16Ops`.
    """

    bits = 32

    def add(self, a: Val, b: Val) -> Val:
        raise NotImplementedError

    def sub(self, a: Val, b: Val) -> Val:
        raise NotImplementedError

    def mul(self, a: Val, b: Val) -> Val:
        raise NotImplementedError

    def and_(self, a: Val, b: Val) -> Val:
        raise NotImplementedError

    def shl(self, a: Val, n: Val) -> Val:
        """``a << n``; ``n`` in [0, 31] (a run-time value too)."""
        raise NotImplementedError

    def ashr(self, a: Val, n: Val) -> Val:
        """Arithmetic ``a >> n``; ``n`` in [0, 31] (a run-time value too)."""
        raise NotImplementedError

    def wrap(self, a: Val, bits: int) -> Val:
        """``a`` reduced to a signed ``bits``-bit integer (C's conversion to
        ``int16_t``), sign-extended back to int32."""
        raise NotImplementedError

    def cmp(self, pred: str, a: Val, b: Val) -> Cond:
        """``pred`` in eq/ne/lt/le/gt/ge (signed)."""
        raise NotImplementedError

    def select(self, c: Cond, a: Val, b: Val) -> Val:
        raise NotImplementedError

    def srdhm(self, a: Val, b: Val) -> Val:
        raise NotImplementedError

    def rdbpot(self, x: Val, exponent: int) -> Val:
        raise NotImplementedError

    def rounding_half_sum(self, a: Val, b: Val) -> Val:
        raise NotImplementedError

    # derived
    def neg(self, a: Val) -> Val:
        return self.sub(0, a)

    def min(self, a: Val, b: Val) -> Val:
        return self.select(self.cmp("lt", a, b), a, b)

    def max(self, a: Val, b: Val) -> Val:
        return self.select(self.cmp("gt", a, b), a, b)

    def clamp(self, x: Val, lo: int, hi: int) -> Val:
        return self.min(self.max(x, lo), hi)

    def add_sat_if_16bit(self, a: Val, b: Val) -> Val:
        """gemmlowp ``AddSaturatingIf16Bit``: a plain addition on int32."""
        return self.add(a, b)


_PREDS = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


class PyOps(Int32Ops):
    """Compile-time evaluation on Python ints (int32 results wrap around)."""

    def add(self, a, b):
        return wrap32(a + b)

    def sub(self, a, b):
        return wrap32(a - b)

    def mul(self, a, b):
        return wrap32(a * b)

    def and_(self, a, b):
        return wrap32(a & b)

    def shl(self, a, n):
        return wrap32(a << n)

    def ashr(self, a, n):
        return a >> n

    def wrap(self, a, bits):
        half = 1 << (bits - 1)
        return ((a + half) & ((1 << bits) - 1)) - half

    def cmp(self, pred, a, b):
        return bool(_PREDS[pred](a, b))

    def select(self, c, a, b):
        return a if c else b

    def srdhm(self, a, b):
        """gemmlowp ``SaturatingRoundingDoublingHighMul`` (int32), as written in C."""
        overflow = a == b == INT32_MIN
        ab = a * b
        nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
        n = ab + nudge
        q = abs(n) // (1 << 31)  # C division truncates toward zero
        q = q if n >= 0 else -q
        return INT32_MAX if overflow else wrap32(q)

    def rdbpot(self, x, exponent):
        """gemmlowp ``RoundingDivideByPOT``: round half away from zero."""
        if not 0 <= exponent <= 31:
            raise QuantError(f"RoundingDivideByPOT exponent {exponent} out of [0, 31]")
        mask = (1 << exponent) - 1
        remainder = x & mask
        threshold = (mask >> 1) + (1 if x < 0 else 0)
        return wrap32((x >> exponent) + (1 if remainder > threshold else 0))

    def rounding_half_sum(self, a, b):
        s = a + b
        sign = 1 if s >= 0 else -1
        n = s + sign
        q = abs(n) // 2
        return wrap32(q if n >= 0 else -q)


#: The compile-time backend.
PY = PyOps()


class IR(Int32Ops):
    """Emits the primitives as ``arith`` ops at an :class:`Emitter`'s insertion
    point; operations whose operands are all Python ints fold to Python ints."""

    def __init__(self, e):
        self.e = e
        self._consts: dict[tuple[int, Attribute], SSAValue] = {}

    # -- plumbing
    def c(self, value: int, t: Attribute = i32) -> SSAValue:
        """The constant ``value`` of type ``t``, made once per backend: an
        element function repeats the same few (shift amounts, rounding
        nudges, masks), and every op costs compile time in every pass.
        Emitted at the insertion point, which only moves forward, so the
        first use's constant dominates the later ones."""
        key = (value, t)
        v = self._consts.get(key)
        if v is None:
            v = self._consts[key] = self.e.const(value, t)
        return v

    def v(self, x: Val) -> SSAValue:
        """``x`` as an i32 SSA value."""
        if isinstance(x, SSAValue):
            return x
        return self.c(wrap32(int(x)))

    def _i64(self, x: Val) -> SSAValue:
        if isinstance(x, SSAValue):
            return self.e.op(arith.ExtSIOp(x, i64))
        return self.c(int(x), i64)

    @staticmethod
    def _const(*xs) -> bool:
        return not any(isinstance(x, SSAValue) for x in xs)

    # -- primitives
    def add(self, a, b):
        if self._const(a, b):
            return PY.add(a, b)
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
        return self.e.op(arith_binary(arith.AddiOp, self.v(a), self.v(b)))

    def sub(self, a, b):
        if self._const(a, b):
            return PY.sub(a, b)
        if isinstance(b, int) and b == 0:
            return a
        return self.e.op(arith_binary(arith.SubiOp, self.v(a), self.v(b)))

    def mul(self, a, b):
        if self._const(a, b):
            return PY.mul(a, b)
        return self.e.op(arith_binary(arith.MuliOp, self.v(a), self.v(b)))

    def and_(self, a, b):
        if self._const(a, b):
            return PY.and_(a, b)
        return self.e.op(arith_binary(arith.AndIOp, self.v(a), self.v(b)))

    def shl(self, a, n):
        if self._const(a, n):
            return PY.shl(a, n)
        if isinstance(n, int) and n == 0:
            return a
        return self.e.op(arith_binary(arith.ShLIOp, self.v(a), self.v(n)))

    def ashr(self, a, n):
        if self._const(a, n):
            return PY.ashr(a, n)
        if isinstance(n, int) and n == 0:
            return a
        return self.e.op(arith_binary(arith.ShRSIOp, self.v(a), self.v(n)))

    def wrap(self, a, bits):
        if self._const(a):
            return PY.wrap(a, bits)
        narrow = self.e.op(arith.TruncIOp(a, IntegerType(bits)))
        return self.e.op(arith.ExtSIOp(narrow, i32))

    def cmp(self, pred, a, b):
        if self._const(a, b):
            return PY.cmp(pred, a, b)
        return self.e.cmp(pred, self.v(a), self.v(b))

    def select(self, c, a, b):
        if isinstance(c, bool):
            return a if c else b
        if self._const(a, b) and a == b:
            return a
        return self.e.select(c, self.v(a), self.v(b))

    def min(self, a, b):
        if self._const(a, b):
            return min(a, b)
        return self.e.min(self.v(a), self.v(b))

    def max(self, a, b):
        if self._const(a, b):
            return max(a, b)
        return self.e.max(self.v(a), self.v(b))

    def srdhm(self, a, b):
        if self._const(a, b):
            return PY.srdhm(a, b)
        e = self.e
        # (a*b + 2^30) >> 31 (arithmetic) rounds half up exactly like the C
        # code's truncating division with a sign-dependent nudge.
        ab = e.op(arith_binary(arith.MuliOp, self._i64(a), self._i64(b)))
        hi = e.op(arith_binary(arith.ShRSIOp, e.op(arith_binary(arith.AddiOp, ab, self.c(1 << 30, i64))), self.c(31, i64)))
        r = e.op(arith.TruncIOp(hi, i32))
        # Saturation: only INT32_MIN * INT32_MIN overflows.
        if isinstance(b, int) or isinstance(a, int):
            k, x = (b, a) if isinstance(b, int) else (a, b)
            if k != INT32_MIN:
                return r
            return e.select(e.cmp("eq", x, self.c(INT32_MIN)), self.c(INT32_MAX), r)
        both = e.and_(e.cmp("eq", a, self.c(INT32_MIN)), e.cmp("eq", b, self.c(INT32_MIN)))
        return e.select(both, self.c(INT32_MAX), r)

    def rdbpot(self, x, exponent):
        if not 0 <= exponent <= 31:
            raise QuantError(f"RoundingDivideByPOT exponent {exponent} out of [0, 31]")
        if self._const(x):
            return PY.rdbpot(x, exponent)
        if exponent == 0:
            return x
        # Branch-free: threshold = mask / 2 + (x < 0), the sign bit shifted
        # down; remainder > threshold iff threshold - remainder (no
        # overflow: both in [0, 2^31)) is negative, its sign bit.
        e = self.e
        mask = (1 << exponent) - 1
        remainder = e.and_(x, self.c(mask))
        threshold = e.op(arith_binary(arith.ShRUIOp, x, self.c(31)))
        if mask >> 1:
            threshold = e.add(threshold, self.c(mask >> 1))
        up = e.op(arith_binary(arith.ShRUIOp, e.sub(threshold, remainder), self.c(31)))
        return e.add(e.op(arith_binary(arith.ShRSIOp, x, self.c(exponent))), up)

    def rounding_half_sum(self, a, b):
        if self._const(a, b):
            return PY.rounding_half_sum(a, b)
        e = self.e
        s = e.op(arith_binary(arith.AddiOp, self._i64(a), self._i64(b)))
        nonneg = e.cmp("ge", s, e.const(0, i64))
        s = e.op(arith_binary(arith.AddiOp, s, e.select(nonneg, e.const(1, i64), e.const(-1, i64))))
        q = e.op(arith_binary(arith.DivSIOp, s, e.const(2, i64)))  # truncating, like C
        return e.op(arith.TruncIOp(q, i32))


class Int16Ops(Int32Ops):
    """gemmlowp's ``std::int16_t`` primitives on an int32 backend (``PY`` or
    ``IR``), for ``FixedPoint<std::int16_t, k>`` (the 16-bit LSTM cells).

    Values stay int32 holding int16 values; every result C converts back to
    ``int16_t`` is wrapped to 16 bits, so overflow behaves as the C code
    does.  ``srdhm`` is the int16 ``SaturatingRoundingDoublingHighMul``
    (high half of the doubled 32-bit product) and ``add_sat_if_16bit`` the
    int16 ``SaturatingAdd``."""

    bits = 16
    _MIN, _MAX = -(1 << 15), (1 << 15) - 1

    def __init__(self, inner: Int32Ops):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        # backend plumbing (IR's ``v``, ``e``) comes from the int32 backend
        return getattr(self.inner, name)

    def _w(self, x: Val) -> Val:
        return self.inner.wrap(x, 16)

    def add(self, a, b):
        return self._w(self.inner.add(a, b))

    def sub(self, a, b):
        return self._w(self.inner.sub(a, b))

    def mul(self, a, b):
        return self._w(self.inner.mul(a, b))

    def shl(self, a, n):
        return self._w(self.inner.shl(a, n))

    def and_(self, a, b):
        return self.inner.and_(a, b)

    def ashr(self, a, n):
        return self.inner.ashr(a, n)

    def wrap(self, a, bits):
        return self.inner.wrap(a, bits)

    def cmp(self, pred, a, b):
        return self.inner.cmp(pred, a, b)

    def select(self, c, a, b):
        return self.inner.select(c, a, b)

    def min(self, a, b):
        return self.inner.min(a, b)

    def max(self, a, b):
        return self.inner.max(a, b)

    def srdhm(self, a, b):
        # (a*b + 2^14) >> 15 equals C's truncating division of a*b plus the
        # sign-dependent nudge by 2^15 (as for int32, see IR.srdhm); the
        # product of two int16 values fits int32.
        inner = self.inner
        r = inner.ashr(inner.add(inner.mul(a, b), 1 << 14), 15)
        if any(isinstance(v, int) and v != self._MIN for v in (a, b)):
            return r
        return inner.select(inner.cmp("eq", a, self._MIN),
                            inner.select(inner.cmp("eq", b, self._MIN), self._MAX, r), r)  # fmt: skip

    def rdbpot(self, x, exponent):
        return self.inner.rdbpot(x, exponent)

    def rounding_half_sum(self, a, b):
        return self.inner.rounding_half_sum(a, b)

    def add_sat_if_16bit(self, a, b):
        return self.inner.clamp(self.inner.add(a, b), self._MIN, self._MAX)


#: The compile-time int16 backend.
PY16 = Int16Ops(PY)


def rdbpot_runtime(ops: Int32Ops, x: Val, exponent: Val) -> Val:
    """``RoundingDivideByPOT`` by a run-time ``exponent`` in [0, 31]."""
    mask = ops.sub(ops.shl(1, exponent), 1)
    remainder = ops.and_(x, mask)
    threshold = ops.add(ops.ashr(mask, 1), ops.select(ops.cmp("lt", x, 0), 1, 0))
    return ops.add(ops.ashr(x, exponent), ops.select(ops.cmp("gt", remainder, threshold), 1, 0))


# -- multiplication by a quantized multiplier (TFLite common.h) --------------------------------


def saturating_rounding_multiply_by_pot(ops: Int32Ops, x: Val, exponent: int) -> Val:
    """gemmlowp ``SaturatingRoundingMultiplyByPOT<exponent>`` on ``ops.bits``-bit raws."""
    if exponent == 0:
        return x
    if exponent < 0:
        return ops.rdbpot(x, -exponent)
    threshold = (1 << (ops.bits - 1 - exponent)) - 1
    r = ops.shl(x, exponent)
    r = ops.select(ops.cmp("gt", x, threshold), raw_max(ops), r)
    return ops.select(ops.cmp("lt", x, -threshold), raw_min(ops), r)


def raw_max(ops: Int32Ops) -> int:
    """The largest raw value of ``ops``' width (``FixedPoint<.., 0>::One()``)."""
    return (1 << (ops.bits - 1)) - 1


def raw_min(ops: Int32Ops) -> int:
    return -(1 << (ops.bits - 1))


def fixed_constant(ops: Int32Ops, raw32: int) -> int:
    """gemmlowp ``GEMMLOWP_CHECKED_FIXEDPOINT_CONSTANT``: constants are written
    as int32 raws; a 16-bit raw is that rounding-shifted right by 16."""
    return raw32 if ops.bits == 32 else PY.rdbpot(raw32, 32 - ops.bits)


def mbqm(ops: Int32Ops, x: Val, multiplier: int, shift: int) -> Val:
    """``MultiplyByQuantizedMultiplier``: ``x * m * 2^(shift - 31)``, rounded;
    ``shift`` > 0 shifts left first (wrapping like the C code would not)."""
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    return ops.rdbpot(ops.srdhm(ops.shl(x, left), multiplier), right)


def mbqm_smaller_than_one_exp(ops: Int32Ops, x: Val, multiplier: int, left_shift: int) -> Val:
    """``MultiplyByQuantizedMultiplierSmallerThanOneExp`` (``left_shift <= 0``)."""
    return ops.rdbpot(ops.srdhm(x, multiplier), -left_shift)


def mbqm_greater_than_one(ops: Int32Ops, x: Val, multiplier: int, left_shift: int) -> Val:
    """``MultiplyByQuantizedMultiplierGreaterThanOne`` (``left_shift >= 0``)."""
    return ops.srdhm(ops.shl(x, left_shift), multiplier)


def saturating_rounding_doubling_high_mul(a: int, b: int) -> int:
    return PY.srdhm(a, b)


def rounding_divide_by_pot(x: int, exponent: int) -> int:
    return PY.rdbpot(x, exponent)


def py_int(v: Val) -> int:
    """A value of the Python backend (:data:`PY`): always an int."""
    assert isinstance(v, int)
    return v


def ssa(v: Val) -> SSAValue:
    """A value :class:`IR` computed from an SSA operand: always an SSA value."""
    assert isinstance(v, SSAValue)
    return v


def multiply_by_quantized_multiplier(x: int, multiplier: int, shift: int) -> int:
    return py_int(mbqm(PY, x, multiplier, shift))


def multiply_by_quantized_multiplier_smaller_than_one_exp(x: int, multiplier: int, left_shift: int) -> int:
    return py_int(mbqm_smaller_than_one_exp(PY, x, multiplier, left_shift))


def multiply_by_quantized_multiplier_greater_than_one(x: int, multiplier: int, left_shift: int) -> int:
    return py_int(mbqm_greater_than_one(PY, x, multiplier, left_shift))


# -- gemmlowp fixed-point exp / logistic / tanh (raw values) --------------------------------------
#
# A FixedPoint<int32, k> value is its raw int32: real = raw / 2^(31 - k)
# (FixedPoint<int16, k>: raw / 2^(15 - k), with ``ops`` an Int16Ops).
# Multiplying two fixed-point values is srdhm on the raws (integer bits add).


def _rescale(ops: Int32Ops, x: Val, src_bits: int, dst_bits: int) -> Val:
    return saturating_rounding_multiply_by_pot(ops, x, src_bits - dst_bits)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(ops: Int32Ops, a: Val) -> Val:
    constant_term = fixed_constant(ops, 1895147668)  # exp(-1/8) in Q0
    constant_1_over_3 = fixed_constant(ops, 715827883)
    x = ops.add(a, 1 << (ops.bits - 4))  # a + 1/8
    x2 = ops.srdhm(x, x)
    x3 = ops.srdhm(x2, x)
    x4 = ops.srdhm(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(ops, x4, -2)
    poly = saturating_rounding_multiply_by_pot(
        ops, ops.add(ops.srdhm(ops.add(x4_over_4, x3), constant_1_over_3), x2), -1
    )
    return ops.add_sat_if_16bit(constant_term, ops.srdhm(constant_term, ops.add(x, poly)))


_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))  # fmt: skip


def exp_on_negative_values(ops: Int32Ops, a: Val, integer_bits: int) -> Val:
    """gemmlowp ``exp_on_negative_values``: Q(integer_bits) input <= 0 -> Q0."""
    frac = ops.bits - 1 - integer_bits
    one_quarter = 1 << (frac - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = ops.sub(ops.and_(a, mask), one_quarter)
    result = _exp_on_interval_between_negative_one_quarter_and_0_excl(
        ops, _rescale(ops, a_mod_quarter_minus_one_quarter, integer_bits, 0)
    )
    remainder = ops.sub(a_mod_quarter_minus_one_quarter, a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = ops.and_(remainder, 1 << (frac + exponent))
            product = ops.srdhm(result, fixed_constant(ops, multiplier))
            result = ops.select(ops.cmp("ne", bit, 0), product, result)
    if integer_bits > 5:
        clamp = fixed_constant(ops, -(1 << (36 - integer_bits)))  # -32.0
        result = ops.select(ops.cmp("lt", a, clamp), 0, result)
    return ops.select(ops.cmp("eq", a, 0), raw_max(ops), result)


def _newton_reciprocal(ops: Int32Ops, a: Val) -> Val:
    """The Newton-Raphson loop shared by 1/(1+x) and (1-x)/(1+x): Q2 result
    ~ 1 / half_denominator with half_denominator = (a + 1) / 2."""
    f2_one = 1 << (ops.bits - 3)
    half_denominator = ops.rounding_half_sum(a, raw_max(ops))
    # 48/17 - 32/17 * d
    x = ops.add(fixed_constant(ops, 1515870810), ops.srdhm(half_denominator, fixed_constant(ops, -1010580540)))
    for _ in range(3):
        half_denominator_times_x = ops.srdhm(half_denominator, x)
        one_minus = ops.sub(f2_one, half_denominator_times_x)
        x = ops.add(x, _rescale(ops, ops.srdhm(x, one_minus), 4, 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(ops: Int32Ops, a: Val) -> Val:
    # Rescale<0>(ExactMulByPot<-1>(x)): Q2 -> Q1 (same raw) -> Q0
    return _rescale(ops, _newton_reciprocal(ops, a), 1, 0)


def one_minus_x_over_one_plus_x_for_x_in_0_1(ops: Int32Ops, a: Val) -> Val:
    return _rescale(ops, ops.sub(_newton_reciprocal(ops, a), 1 << (ops.bits - 3)), 2, 0)


def fixed_logistic(ops: Int32Ops, a: Val, integer_bits: int) -> Val:
    """gemmlowp ``logistic``: Q(integer_bits) -> Q0 (int32 or, with an
    :class:`Int16Ops`, int16 raws)."""
    positive = ops.cmp("gt", a, 0)
    abs_input = ops.select(positive, a, ops.neg(a))
    result_if_positive = one_over_one_plus_x_for_x_in_0_1(
        ops, exp_on_negative_values(ops, ops.neg(abs_input), integer_bits)
    )
    result_if_negative = ops.sub(raw_max(ops), result_if_positive)
    one_half = fixed_constant(ops, 1 << 30)
    return ops.select(
        ops.cmp("eq", a, 0), one_half, ops.select(positive, result_if_positive, result_if_negative)
    )


def fixed_tanh(ops: Int32Ops, a: Val, integer_bits: int) -> Val:
    """gemmlowp ``tanh``: Q(integer_bits) -> Q0 (int32 or int16 raws)."""
    negative = ops.cmp("lt", a, 0)
    n = ops.select(negative, a, ops.neg(a))
    # neg_tanh_on_negative_values: ExactMulByPot<1> reinterprets n with one
    # more integer bit (same raw), i.e. exp(2n).
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(ops, exp_on_negative_values(ops, n, integer_bits + 1))
    return ops.select(ops.cmp("eq", a, 0), 0, ops.select(negative, ops.neg(t), t))


# -- kernels: parameters (prepare) and element functions (compute) -------------------------------


@dataclass(frozen=True)
class AddParams:
    """``tflite::ArithmeticParams`` of ADD/SUB (Android's addQuant8/subQuant8)."""

    left_shift: int
    input1_offset: int
    input1_multiplier: int
    input1_shift: int
    input2_offset: int
    input2_multiplier: int
    input2_shift: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


def add_params(
    t: OperandType,
    in1: tuple[float, int],
    in2: tuple[float, int],
    out: tuple[float, int],
    activation: int,
    subtract: bool = False,
) -> AddParams:
    """Parameters of quantised ADD (SUB with ``subtract``): inputs rescaled to a
    common scale 2*max(s1, s2) with 20 bits of headroom, summed, rescaled."""
    (s1, z1), (s2, z2), (so, zo) = [(f32(s), int(z)) for s, z in (in1, in2, out)]
    left_shift = 20
    twice_max_input_scale = f32(2 * max(s1, s2))  # float arithmetic, stored as double
    real_input1_multiplier = s1 / twice_max_input_scale
    real_input2_multiplier = s2 / twice_max_input_scale
    real_output_multiplier = twice_max_input_scale / f32((1 << left_shift) * so)
    m1, sh1 = quantize_multiplier_smaller_than_one_exp(real_input1_multiplier)
    m2, sh2 = quantize_multiplier_smaller_than_one_exp(real_input2_multiplier)
    if subtract:
        m2 = -m2  # Android negates input 2's multiplier and uses the Add kernel
    mo, sho = quantize_multiplier_smaller_than_one_exp(real_output_multiplier)
    lo, hi = calculate_activation_range(t, activation, so, zo)
    return AddParams(left_shift, -z1, m1, sh1, -z2, m2, sh2, zo, mo, sho, lo, hi)


def add_element(ops: Int32Ops, p: AddParams, a: Val, b: Val) -> Val:
    """One output of ``AddElementwise`` / ``BroadcastAdd4DSlow`` (uint8 and
    int8 alike), already clamped to the activation range."""
    x1 = ops.shl(ops.add(a, p.input1_offset), p.left_shift)
    x2 = ops.shl(ops.add(b, p.input2_offset), p.left_shift)
    y1 = mbqm_smaller_than_one_exp(ops, x1, p.input1_multiplier, p.input1_shift)
    y2 = mbqm_smaller_than_one_exp(ops, x2, p.input2_multiplier, p.input2_shift)
    raw = mbqm_smaller_than_one_exp(ops, ops.add(y1, y2), p.output_multiplier, p.output_shift)
    return ops.clamp(ops.add(raw, p.output_offset), p.act_min, p.act_max)


def add_inputs_normal(p: AddParams) -> bool:
    """Whether both input multipliers of ``p`` are in [2^30, 2^31) (what
    QuantizeMultiplier gives for every positive scale ratio) and its left
    shift below 31: what the vector form of the ADD
    (:func:`~nnc.passes.kernels.q8.input_lanes`) takes."""
    return 0 <= p.left_shift < 31 and all((1 << 30) <= m < (1 << 31) for m in (p.input1_multiplier, p.input2_multiplier))


def with_inputs_swapped(p: AddParams) -> AddParams:
    """The parameters of the same ADD with its inputs exchanged: the same
    outputs (each input is rescaled alone, and the integer sum of the two
    commutes), for a caller that computes one particular input first."""
    return replace(
        p, input1_offset=p.input2_offset, input1_multiplier=p.input2_multiplier, input1_shift=p.input2_shift,
        input2_offset=p.input1_offset, input2_multiplier=p.input1_multiplier, input2_shift=p.input1_shift,
    )  # fmt: skip


def binary_stored(e, p: AddParams | MulParams, t: OperandType, a: SSAValue, b: SSAValue) -> SSAValue:
    """One stored output of a quantised ADD/SUB (``AddParams``) or MUL from
    two stored 8-bit elements of type ``t``."""
    ops = IR(e)
    x, y = load_q(e, a, t), load_q(e, b, t)
    r = add_element(ops, p, x, y) if isinstance(p, AddParams) else mul_element(ops, p, x, y)
    return store_q(e, r, t, saturate=False)  # already within the activation range


@dataclass(frozen=True)
class MulParams:
    """``tflite::ArithmeticParams`` of MUL (Android's mulQuant8)."""

    input1_offset: int
    input2_offset: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


def mul_params(
    t: OperandType, in1: tuple[float, int], in2: tuple[float, int], out: tuple[float, int], activation: int
) -> MulParams:
    """Parameters of quantised MUL: one multiplier s1 * s2 / so (must be < 1)."""
    (s1, z1), (s2, z2), (so, zo) = [(f32(s), int(z)) for s, z in (in1, in2, out)]
    input_product_scale = f32(s1 * s2)  # float * float
    real_multiplier = input_product_scale / so
    m, sh = quantize_multiplier_smaller_than_one_exp(real_multiplier)
    lo, hi = calculate_activation_range(t, activation, so, zo)
    return MulParams(-z1, -z2, zo, m, sh, lo, hi)


def mul_element(ops: Int32Ops, p: MulParams, a: Val, b: Val) -> Val:
    """One output of ``MulElementwise`` / ``BroadcastMul4DSlow``, clamped."""
    prod = ops.mul(ops.add(a, p.input1_offset), ops.add(b, p.input2_offset))
    raw = ops.add(mbqm_smaller_than_one_exp(ops, prod, p.output_multiplier, p.output_shift), p.output_offset)
    return ops.clamp(raw, p.act_min, p.act_max)


@dataclass(frozen=True)
class SigmoidParams:
    """Input rescaling of quantised LOGISTIC / TANH (4 integer bits)."""

    input_zero_point: int
    input_range_radius: int
    input_multiplier: int
    input_left_shift: int


def sigmoid_params(scale: float, zero_point: int) -> SigmoidParams:
    k_input_integer_bits = 4
    input_real_multiplier = f32(scale) * float(1 << (31 - k_input_integer_bits))
    m, left_shift = quantize_multiplier_greater_than_one(input_real_multiplier)
    radius = calculate_input_radius(k_input_integer_bits, left_shift)
    return SigmoidParams(int(zero_point), radius, m, left_shift)


def _sigmoid_element(ops: Int32Ops, t: OperandType, p: SigmoidParams, x: Val, tanh: bool) -> Val:
    c = ops.sub(x, p.input_zero_point)
    rescaled = mbqm(ops, c, p.input_multiplier, p.input_left_shift)
    if tanh:
        v = ops.rdbpot(fixed_tanh(ops, rescaled, 4), 24)  # Q0.31 -> Q24.7
        offset = 128 if t == T.TENSOR_QUANT8_ASYMM else 0
    else:
        v = ops.rdbpot(fixed_logistic(ops, rescaled, 4), 23)  # Q0.31 -> Q23.8
        offset = 0 if t == T.TENSOR_QUANT8_ASYMM else -128
    v = ops.add(v, offset)
    qmin, qmax = QRANGE[t]
    if t == T.TENSOR_QUANT8_ASYMM:
        # optimized_ops::Logistic / Tanh (uint8): saturate strictly outside
        # the radius; 256 (exactly 1.0) becomes 255
        v = ops.select(ops.cmp("eq", v, 256), 255, v)
        below, above = ops.cmp("lt", c, -p.input_range_radius), ops.cmp("gt", c, p.input_range_radius)
    else:
        # reference_integer_ops::Logistic / Tanh (int8): saturate from the radius on
        v = ops.clamp(v, qmin, qmax)
        below, above = ops.cmp("le", c, -p.input_range_radius), ops.cmp("ge", c, p.input_range_radius)
    return ops.select(below, qmin, ops.select(above, qmax, v))


def logistic_element(ops: Int32Ops, t: OperandType, p: SigmoidParams, x: Val) -> Val:
    """Quantised LOGISTIC of one loaded value (output scale 1/256, zero point 0
    for uint8, -128 for int8): uint8 as TFLite's ``optimized_ops::Logistic``,
    int8 as ``reference_integer_ops::Logistic`` (what Android 11 calls)."""
    return _sigmoid_element(ops, t, p, x, tanh=False)


def tanh_element(ops: Int32Ops, t: OperandType, p: SigmoidParams, x: Val) -> Val:
    """Quantised TANH of one loaded value (output scale 1/128, zero point 128
    for uint8, 0 for int8): uint8 as ``optimized_ops::Tanh``, int8 as
    ``reference_integer_ops::Tanh``."""
    return _sigmoid_element(ops, t, p, x, tanh=True)


def requantize_params(in_scale: float, out_scale: float) -> tuple[int, int]:
    """Multiplier and shift taking ``q - zp_in`` at ``in_scale`` to ``out_scale``."""
    return quantize_multiplier(f32(in_scale) / f32(out_scale))


def requantize(ops: Int32Ops, x: Val, in_zp: int, out_zp: int, multiplier: int, shift: int) -> Val:
    """``out_zp + round((x - in_zp) * in_scale / out_scale)`` (not clamped).

    The centred value is first clamped so that the left shift cannot overflow;
    such values saturate the 8/16-bit output anyway."""
    c = ops.sub(x, in_zp)
    if shift > 0:
        bound = (1 << (31 - shift)) - 1
        c = ops.clamp(c, -bound, bound)
    return ops.add(mbqm(ops, c, multiplier, shift), out_zp)


# -- code generation entry points ------------------------------------------------------------------


def emit_srdhm(e, a: Val, b: Val) -> Val:
    return IR(e).srdhm(a, b)


def emit_mbqm(e, x: Val, multiplier: int, shift: int) -> Val:
    return mbqm(IR(e), x, multiplier, shift)


def load_q(e, value: SSAValue, t: OperandType) -> SSAValue:
    """A loaded quantised element as i32: zero-extended for the unsigned types,
    sign-extended for the signed ones."""
    if value.type == i32:
        return value
    op = arith.ExtUIOp(value, i32) if is_unsigned(t) else arith.ExtSIOp(value, i32)
    return e.op(op)


def store_q(e, x: Val, t: OperandType, lo: int | None = None, hi: int | None = None,
            saturate: bool = True) -> SSAValue:  # fmt: skip
    """An i32 value as ``t``'s storage element, clamped to ``t``'s range (and to
    ``[lo, hi]`` when given); ``saturate=False`` when it is known to fit."""
    ops = IR(e)
    if saturate:
        qmin, qmax = QRANGE[t]
        x = ops.clamp(x, qmin if lo is None else max(lo, qmin), qmax if hi is None else min(hi, qmax))
    storage = STORAGE[t]
    if isinstance(x, int):
        x = wrap32(x)
        bits = storage.width.data
        x = ((x + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))  # same bits, signed
        return e.const(x, storage)
    return e.op(arith.TruncIOp(x, storage))


def storage_type(t: OperandType) -> Attribute:
    return STORAGE[t]

