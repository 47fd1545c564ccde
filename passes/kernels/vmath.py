"""Vector math: exp, log and tanh of float32 as branch-free polynomials.
:func:`exp` takes a scalar ``f32`` or a ``vector<N x f32>``; :func:`log` and
:func:`tanh` select between ranges with compares, which xDSL's arith defines
on scalars only, so they take scalars.

libm's ``expf``/``tanhf``/``logf`` are calls, one element at a time: a loop
that calls them cannot be vectorised, and the transcendental element-wise
operations (LOGISTIC, TANH, EXP, LOG, ELU, the swish and GELU chains, the
recurrent cells' gates) ran a call per element.  Built here from arith
operations only (multiply-adds, min/max, selects, integer bit operations), a
scalar loop body is vectorised by LLVM like any other arithmetic.
``nnc-expand-math`` (:mod:`nnc.passes.expand_math`) replaces every float32
``math.exp``, ``math.log`` and ``math.tanh`` by these functions; the vector
kernels (:mod:`nnc.passes.kernels.rows`) call them on vectors.

Each function states its maximum error in ulp against the correctly rounded
result; ``tests/test_vmath.py`` checks the bounds against numpy's float64
functions over every exponent of the float range, the saturation regions,
signed zeros, subnormal inputs, infinities and NaN.  As in XNNPACK, results
below the smallest normal float (2**-126) are flushed to zero (exp of inputs
below about -87.3): no subnormal results.

Multiply-adds are emitted as a multiply and an add that LLVM may contract
(``contract``): one FMA on targets with FMA, two operations on the others;
the stated bounds hold for both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    VectorType,
    f32,
    i1,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue

from nnc.passes.build import new_op, vector_type

Value = SSAValue


class Emitter(Protocol):
    """What the functions build with: operations inserted at one point, and
    constants (:class:`nnc.passes.lowering.base.Emitter` in the kernels,
    ``nnc-expand-math``'s builder in the pass)."""

    def op(self, op: Operation) -> Value: ...

    def constant(self, key: int | tuple[Attribute, str], make: Callable[[], Operation]) -> Value: ...

_CONTRACT = arith.FastMathFlagsAttr([arith.FastMathFlag.ALLOW_CONTRACT])
_NO_FASTMATH = arith.FastMathFlagsAttr("none")

# -- exp ------------------------------------------------------------------------------------------

#: exp(x) = 2**n * exp(t), n = round(x / ln 2), t = x - n * ln 2 in two
#: steps (Cody-Waite: ln 2's high part has zeros in its low bits, so n *
#: LN2_HI is exact, with or without FMA), exp(t) = 1 + t * p(t) with p of
#: degree 4, XNNPACK's minimax coefficients on [-ln2/2, ln2/2].
LOG2E = float.fromhex("0x1.715476p+0")
LN2_HI = float.fromhex("0x1.62ep-1")  # ln 2 to 12 bits: n * LN2_HI is exact for |n| < 2**12
LN2_LO = float.fromhex("0x1.0bfbe8p-15")  # float32(ln 2 - LN2_HI)
EXP_POLY = tuple(float.fromhex(c) for c in ("0x1.0F9F9Cp-7", "0x1.573A1Ap-5", "0x1.555A80p-3",
                                            "0x1.FFFDC6p-2", "0x1.FFFFF6p-1"))  # fmt: skip
#: 1.5 * 2**23: adding it rounds a float of magnitude below 2**22 to an
#: integer held in the low mantissa bits (round to nearest even, no
#: conversion instruction and no poison on NaN)
MAGIC = 12582912.0
MAGIC_BITS = 0x4B400000
#: MAGIC + 127: the sum's low mantissa bits are then the biased exponent
#: n + 127 of 2**n itself, which one shift moves into place
MAGIC_BIASED = MAGIC + 127.0
#: inputs are clamped to [EXP_FLOOR, EXP_CEIL] (NaN stays NaN): exp of the
#: floor is 0 in float32, of the ceiling +inf, and the 2**n of every clamped
#: input is built without wrapping the exponent
EXP_FLOOR = -104.0
EXP_CEIL = 88.8
#: maximum error of :func:`exp` in ulp, for results of at least 2**-126
#: (measured over 8M inputs: 1.97 with FMA, 2.24 without)
EXP_ULP = 3

# -- log ------------------------------------------------------------------------------------------

#: log(x) = k ln 2 + log(m), x = 2**k m with m in [sqrt(1/2), sqrt(2)); log(1 + f)
#: = f - f**2 / 2 + f**3 P(f), Cephes' logf coefficients; ln 2 = LOG_HI +
#: LOG_LO with LOG_HI exact in few bits.
LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
            -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)  # fmt: skip
LOG_HI = 0.693359375
LOG_LO = -2.12194440e-4
SQRT_HALF = 0.707106781186547524
#: maximum error of :func:`log` in ulp (measured: 0.82)
LOG_ULP = 1

# -- tanh -----------------------------------------------------------------------------------------

#: below TANH_SMALL, tanh(x) = x (1 + x**2 q(x**2)), q of degree 4 fitted by
#: least squares to the relative error over [0, TANH_SMALL]; above it,
#: 1 - 2 / (exp(2|x|) + 1), with the sign of x; beyond TANH_SATURATE, +-1.
TANH_SMALL = 0.625
TANH_POLY = tuple(float.fromhex(c) for c in ("-0x1.7ccd36p-8", "0x1.53aab0p-6", "-0x1.b87648p-5",
                                             "0x1.1108d4p-3", "-0x1.55553ap-2"))  # fmt: skip
TANH_SATURATE = 9.1
#: maximum error of :func:`tanh` in ulp (measured: 1.78)
TANH_ULP = 2
#: maximum error of LOGISTIC (:func:`logistic`) in ulp, for results of at
#: least 2**-126 (measured over 65M inputs: 3.47 without FMA, 3.45 with,
#: near x = -1.95; exp's error, the rounding of 1 + t and the division's)
LOGISTIC_ULP = 4


class _Lanes:
    """Constants and operations of the float32 type of one value (scalar or
    vector), and of the int32 type of the same shape."""

    def __init__(self, e: Emitter, like: Value):
        self.e = e
        t = like.type
        self.width = t.get_shape()[0] if isinstance(t, VectorType) else 0
        self.ft: Attribute = vector_type(f32, self.width) if self.width else f32
        self.it: Attribute = vector_type(i32, self.width) if self.width else i32
        self.bt: Attribute = vector_type(i1, self.width) if self.width else i1

    def _const(self, value: float | int, t: Attribute, elem: Attribute) -> Value:
        if isinstance(t, VectorType):
            vals = [float(value) if elem == f32 else int(value)] * self.width
            make = lambda: arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, vals), t)
        elif elem == f32:
            make = lambda: arith.ConstantOp(FloatAttr(float(value), f32))
        else:
            make = lambda: arith.ConstantOp(IntegerAttr(int(value), i32))
        key = (t, repr(float(value) if elem == f32 else int(value)))
        return self.e.constant(key, make)

    def f(self, value: float) -> Value:
        return self._const(value, self.ft, f32)

    def i(self, value: int) -> Value:
        return self._const(value, self.it, i32)

    def op(self, cls: type, *operands: Value, t: Attribute | None = None, props: dict | None = None) -> Value:
        return self.e.op(new_op(cls, operands, (t or operands[0].type,), props or {}))

    def add(self, a: Value, b: Value) -> Value:
        return self.op(arith.AddfOp, a, b, props={"fastmath": _NO_FASTMATH})

    def sub(self, a: Value, b: Value) -> Value:
        return self.op(arith.SubfOp, a, b, props={"fastmath": _NO_FASTMATH})

    def mul(self, a: Value, b: Value) -> Value:
        return self.op(arith.MulfOp, a, b, props={"fastmath": _NO_FASTMATH})

    def div(self, a: Value, b: Value) -> Value:
        return self.op(arith.DivfOp, a, b, props={"fastmath": _NO_FASTMATH})

    def fma(self, a: Value, b: Value, acc: Value) -> Value:
        """``acc + a * b``, contractible into one fused multiply-add."""
        prod = self.op(arith.MulfOp, a, b, props={"fastmath": _CONTRACT})
        return self.op(arith.AddfOp, acc, prod, props={"fastmath": _CONTRACT})

    def horner(self, coeffs: tuple[float, ...], x: Value) -> Value:
        """``coeffs[0] x**(n-1) + ... + coeffs[-1]``."""
        p = self.f(coeffs[0])
        for c in coeffs[1:]:
            p = self.fma(p, x, self.f(c))
        return p

    def maximum(self, a: Value, b: Value) -> Value:
        """max that keeps NaN (``maxnum`` would return the other operand)."""
        return self.op(arith.MaximumfOp, a, b, props={"fastmath": _NO_FASTMATH})

    def minimum(self, a: Value, b: Value) -> Value:
        return self.op(arith.MinimumfOp, a, b, props={"fastmath": _NO_FASTMATH})

    def clamp(self, x: Value, lo: float, hi: float) -> Value:
        """``x`` clamped to [lo, hi], NaN kept: on scalars compares and
        selects, which LLVM turns into one max and one min instruction each
        (x86's maxps returns its second operand on NaN), on vectors the
        NaN-propagating maximum/minimum (several instructions on x86)."""
        if self.width:
            return self.minimum(self.maximum(x, self.f(lo)), self.f(hi))
        low, high = self.f(lo), self.f(hi)
        x = self.select(self.cmp("olt", x, low), low, x)
        return self.select(self.cmp("ogt", x, high), high, x)

    def at_least(self, x: Value, lo: float) -> Value:
        """``max(x, lo)``, NaN kept: the lower half of :meth:`clamp`."""
        if self.width:
            return self.maximum(x, self.f(lo))
        low = self.f(lo)
        return self.select(self.cmp("olt", x, low), low, x)

    def cmp(self, pred: str, a: Value, b: Value) -> Value:
        code = {"oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "une": 13, "uno": 14}[pred]
        props = {"predicate": IntegerAttr(code, 64), "fastmath": _NO_FASTMATH}
        return self.op(arith.CmpfOp, a, b, t=self.bt, props=props)

    def icmp(self, pred: str, a: Value, b: Value) -> Value:
        code = {"eq": 0, "slt": 2, "sgt": 4}[pred]
        return self.op(arith.CmpiOp, a, b, t=self.bt, props={"predicate": IntegerAttr(code, 64)})

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return self.e.op(new_op(arith.SelectOp, (cond, a, b), (a.type,)))

    def bits(self, x: Value) -> Value:
        return self.op(arith.BitcastOp, x, t=self.it)

    def float_of_bits(self, x: Value) -> Value:
        return self.op(arith.BitcastOp, x, t=self.ft)

    def iop(self, cls: type, a: Value, b: Value) -> Value:
        if cls in (arith.AddiOp, arith.SubiOp, arith.ShLIOp):
            return self.op(cls, a, b, props={"overflowFlags": arith.IntegerOverflowAttr("none")})
        return self.op(cls, a, b)

    def to_float(self, k: Value) -> Value:
        return self.op(arith.SIToFPOp, k, t=self.ft)

    def copysign(self, magnitude: Value, sign_of: Value) -> Value:
        """``magnitude`` (non-negative) with the sign bit of ``sign_of``."""
        sign = self.iop(arith.AndIOp, self.bits(sign_of), self.i(-0x80000000))
        return self.float_of_bits(self.iop(arith.OrIOp, self.bits(magnitude), sign))


def exp(e: Emitter, x: Value) -> Value:
    """``exp(x)``: within :data:`EXP_ULP` ulp for results of at least 2**-126,
    0 below, +inf from about 88.72 up, exactly 1 at +-0, NaN at NaN."""
    v = _Lanes(e, x)
    x = v.clamp(x, EXP_FLOOR, EXP_CEIL)
    biased = v.fma(x, v.f(LOG2E), v.f(MAGIC))
    n = v.sub(biased, v.f(MAGIC))  # round(x * log2 e), exact
    t = v.fma(n, v.f(-LN2_HI), x)
    t = v.fma(n, v.f(-LN2_LO), t)
    # 2**n from the exponent bits k = n + 127, in [-23, 256] after the clamp:
    # below 1 the scale is 0 (a flushed result); above 254 (n = 128, 129)
    # the scale stops at 2**127 and the result is multiplied by the rest,
    # 2**(k - 254), which overflows to +inf exactly when exp(x) does (integer
    # min/max, no compare: the same code serves vectors)
    k = v.iop(arith.SubiOp, v.bits(biased), v.i(MAGIC_BITS - 127))
    extra = v.iop(arith.MaxSIOp, v.iop(arith.SubiOp, k, v.i(254)), v.i(0))  # 0, 1 or 2
    k = v.iop(arith.MinSIOp, v.iop(arith.MaxSIOp, k, v.i(0)), v.i(254))
    s = v.float_of_bits(v.iop(arith.ShLIOp, k, v.i(23)))
    p = v.horner(EXP_POLY, t)
    r = v.fma(v.mul(t, s), p, s)  # s * (1 + t * p(t))
    return v.mul(r, v.float_of_bits(v.iop(arith.ShLIOp, v.iop(arith.AddiOp, extra, v.i(127)), v.i(23))))


def exp_nonpositive(e: Emitter, x: Value) -> Value:
    """``exp(x)`` of lanes that are <= 0, -inf or NaN (SOFTMAX's
    ``(x - max) * beta``): :func:`exp` without the overflow handling."""
    v = _Lanes(e, x)
    x = v.at_least(x, EXP_FLOOR)
    biased = v.fma(x, v.f(LOG2E), v.f(MAGIC_BIASED))
    n = v.sub(biased, v.f(MAGIC_BIASED))
    t = v.fma(n, v.f(-LN2_HI), x)
    t = v.fma(n, v.f(-LN2_LO), t)
    # the bits of biased are MAGIC_BITS + k, k = n + 127 in [-23, 127] after
    # the floor: raising them to MAGIC_BITS flushes k <= 0 to a zero scale,
    # and the shift drops MAGIC_BITS (its low 9 bits are 0), leaving k << 23
    k = v.iop(arith.MaxSIOp, v.bits(biased), v.i(MAGIC_BITS))
    s = v.float_of_bits(v.iop(arith.ShLIOp, k, v.i(23)))
    p = v.horner(EXP_POLY, t)
    return v.fma(v.mul(t, s), p, s)


def logistic(e: Emitter, x: Value) -> Value:
    """``1 / (1 + exp(-x))`` of a scalar or vector: within
    :data:`LOGISTIC_ULP` ulp for results of at least 2**-126, 0 below,
    exactly 1/2 at +-0, 1 at +inf, NaN at NaN.

    Only ``t = exp(-|x|)`` is computed, which is at most 1 (the overflow
    handling of :func:`exp` is not needed: :func:`exp_nonpositive`); the
    result is ``t / (1 + t)`` for negative ``x`` and ``1 / (1 + t)`` for
    positive, one division either way.  The numerator is chosen by the
    sign bit of ``x``: on scalars an integer sign test, which LLVM
    vectorises to one blend reading the sign bits of ``x`` itself (a float
    compare would be one more instruction), on vectors a mask of the sign
    (xDSL's selects take a scalar condition only).  At +-0 either numerator
    gives 1/2, and a NaN propagates through the division."""
    v = _Lanes(e, x)
    bits = v.bits(x)
    t = exp_nonpositive(e, v.float_of_bits(v.iop(arith.OrIOp, bits, v.i(-0x80000000))))  # exp(-|x|), NaN kept
    if not v.width:
        negative = v.icmp("slt", bits, v.i(0))
        numerator = v.select(negative, t, v.f(1.0))
    else:
        negative = v.iop(arith.ShRSIOp, bits, v.i(31))  # all ones where the sign bit is set
        keep_t = v.iop(arith.AndIOp, v.bits(t), negative)
        one = v.iop(arith.AndIOp, v.bits(v.f(1.0)), v.iop(arith.XOrIOp, negative, v.i(-1)))
        numerator = v.float_of_bits(v.iop(arith.OrIOp, keep_t, one))
    return v.div(numerator, v.add(t, v.f(1.0)))


def log(e: Emitter, x: Value) -> Value:
    """``log(x)``: within :data:`LOG_ULP` ulp; -inf at +-0, NaN below 0 and
    at NaN, +inf at +inf; subnormal inputs are exact in the exponent."""
    v = _Lanes(e, x)
    # subnormal inputs are scaled by 2**23 first (their exponent field is 0)
    tiny = v.cmp("olt", x, v.f(2.0**-126))
    xs = v.select(tiny, v.mul(x, v.f(2.0**23)), x)
    bits = v.bits(xs)
    k = v.iop(arith.SubiOp, v.iop(arith.ShRUIOp, bits, v.i(23)), v.i(126))
    k = v.iop(arith.SubiOp, k, v.select(tiny, v.i(23), v.i(0)))
    # the mantissa in [0.5, 1), then in [sqrt(1/2), sqrt(2)) with k adjusted
    m = v.float_of_bits(v.iop(arith.OrIOp, v.iop(arith.AndIOp, bits, v.i(0x007FFFFF)), v.i(0x3F000000)))
    low = v.cmp("olt", m, v.f(SQRT_HALF))
    k = v.iop(arith.SubiOp, k, v.select(low, v.i(1), v.i(0)))
    f = v.sub(v.select(low, v.add(m, m), m), v.f(1.0))
    z = v.mul(f, f)
    y = v.mul(v.mul(v.horner(LOG_POLY, f), f), z)
    kf = v.to_float(k)
    y = v.fma(kf, v.f(LOG_LO), y)
    y = v.fma(z, v.f(-0.5), y)
    r = v.fma(kf, v.f(LOG_HI), v.add(f, y))
    r = v.select(v.cmp("oeq", x, v.f(float("inf"))), x, r)
    r = v.select(v.cmp("olt", x, v.f(0.0)), v.f(float("nan")), r)
    r = v.select(v.cmp("oeq", x, v.f(0.0)), v.f(float("-inf")), r)
    return v.select(v.cmp("uno", x, x), x, r)


def tanh(e: Emitter, x: Value) -> Value:
    """``tanh(x)``: within :data:`TANH_ULP` ulp; +-1 beyond about 9.1, the
    sign of zero kept, NaN at NaN."""
    v = _Lanes(e, x)
    a = v.op(arith.MaximumfOp, x, v.sub(v.f(0.0), x), props={"fastmath": _NO_FASTMATH})  # |x|, NaN kept
    # small: x (1 + x**2 q(x**2)), a product so that -0 stays -0
    u = v.mul(x, x)
    small = v.mul(x, v.fma(u, v.horner(TANH_POLY, u), v.f(1.0)))
    # large: 1 - 2 / (exp(2|x|) + 1), sign of x
    big = v.minimum(a, v.f(TANH_SATURATE))
    ex = exp(e, v.add(big, big))
    large = v.sub(v.f(1.0), v.div(v.f(2.0), v.add(ex, v.f(1.0))))
    large = v.copysign(large, x)
    return v.select(v.cmp("olt", a, v.f(TANH_SMALL)), small, large)
