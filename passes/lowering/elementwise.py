"""Element-wise operations: broadcasting binary arithmetic with a fused
activation, and unary activations / math; the NNAPI 1.2/1.3 unary math and
logic ops, MAXIMUM / MINIMUM / POW / PRELU / LOGICAL_AND / LOGICAL_OR, the
comparisons, SELECT and CAST (one table row per op, shared builders);
DEQUANTIZE and QUANTIZE.

Quantised operands (TENSOR_QUANT8_ASYMM / _SIGNED) of ADD, SUB, MUL, RELU*,
LOGISTIC and TANH go to :mod:`nnc.passes.lowering.elementwise_q8`; the
float and int32 paths are below."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32, i8, i32

from nnc.dialects.rules.base import OpCall
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering import elementwise_q8 as quant
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import Emitter, LoweringContext, Value, activation, affine_map, identity_map, lowering

_BINARY = {
    Op.ADD: Emitter.add,
    Op.SUB: Emitter.sub,
    Op.MUL: Emitter.mul,
    Op.DIV: Emitter.div,
}


@lowering(Op.ADD, Op.SUB, Op.MUL, Op.DIV, check=quant.check_binary)
def binary(ctx: LoweringContext) -> None:
    if ctx.info(0).type in quant.QUANT8:
        quant.binary(ctx)
        return
    fn = _BINARY[ctx.call.type]
    act = ctx.scalar(2)

    def body(e: Emitter, a: list[Value]) -> Value:
        return activation(e, fn(e, a[0], a[1]), act)

    ctx.elementwise(ctx.output(), [ctx.input(0), ctx.input(1)], body)


_UNARY = {
    Op.RELU: lambda e, x: e.clamp(x, 0.0, None),
    Op.RELU1: lambda e, x: e.clamp(x, -1.0, 1.0),
    Op.RELU6: lambda e, x: e.clamp(x, 0.0, 6.0),
    Op.LOGISTIC: Emitter.sigmoid,
    Op.TANH: Emitter.tanh,
    Op.FLOOR: Emitter.floor,
}


@lowering(*_UNARY, check=quant.check_unary)
def unary(ctx: LoweringContext) -> None:
    if ctx.info(0).type in quant.QUANT8:
        quant.unary(ctx)
        return
    fn = _UNARY[ctx.call.type]
    ctx.elementwise(ctx.output(), [ctx.input(0)], lambda e, a: fn(e, a[0]))


# -- parameterless unary math, comparisons, min/max and logical operations -----------------------
#
# Float bodies follow Android's reference expressions (std::exp, 1.f / std::sqrt,
# tflite's HardSwish ``x * min(6, max(0, x + 3)) / 6``); int32 ABS and NEG wrap
# at INT32_MIN like the C++.  TENSOR_BOOL8 elements are stored as i8 0/1.


def _abs(e: Emitter, x: Value) -> Value:
    if e.is_float(x):
        return e.abs(x)
    return e.select(e.cmp("lt", x, e.like(0, x)), e.neg(x), x)


def _hard_swish(e: Emitter, x: Value) -> Value:
    relu6 = e.clamp(e.add(x, e.f32(3.0)), 0.0, 6.0)
    return e.div(e.mul(x, relu6), e.f32(6.0))


def _is_true(e: Emitter, b: Value) -> Value:
    """An i8 TENSOR_BOOL8 element as i1 (any nonzero byte is true)."""
    return e.cmp("ne", b, e.like(0, b))


def _bool8(e: Emitter, c: Value) -> Value:
    """An i1 as a stored TENSOR_BOOL8 element (0 or 1)."""
    return e.op(arith.ExtUIOp(c, i8))


_PLAIN_UNARY: dict[Op, Callable[[Emitter, Value], Value]] = {
    Op.ABS: _abs,
    Op.NEG: Emitter.neg,
    Op.EXP: Emitter.exp,
    Op.LOG: Emitter.log,
    Op.RSQRT: Emitter.rsqrt,
    Op.SIN: lambda e, x: e.op(math.SinOp(x)),
    Op.SQRT: Emitter.sqrt,
    Op.HARD_SWISH: _hard_swish,
    Op.LOGICAL_NOT: lambda e, x: _bool8(e, e.cmp("eq", x, e.like(0, x))),
}


@lowering(*_PLAIN_UNARY, check=quant.check_plain_unary)
def plain_unary(ctx: LoweringContext) -> None:
    if ctx.info(0).type in quant.QUANT8:
        (quant.float_unary if ctx.call.type in quant.FLOAT_UNARY else quant.hard_swish)(ctx)
        return
    fn = _PLAIN_UNARY[ctx.call.type]
    ctx.elementwise(ctx.output(), [ctx.input(0)], lambda e, a: fn(e, a[0]))


@lowering(Op.ELU)
def elu(ctx: LoweringContext) -> None:
    """``max(0, x) + min(0, alpha * (exp(x) - 1))``, the spec's formula."""
    alpha = ctx.scalar(1)

    def body(e: Emitter, a: list[Value]) -> Value:
        x = a[0]
        neg = e.mul(e.f32(alpha), e.sub(e.exp(x), e.f32(1.0)))
        return e.add(e.max(x, e.f32(0.0)), e.min(neg, e.f32(0.0)))

    ctx.elementwise(ctx.output(), [ctx.input(0)], body)


def _std_max(e: Emitter, a: Value, b: Value) -> Value:
    """``std::max(a, b)``: ``(a < b) ? b : a`` (a NaN ``a`` is kept)."""
    return e.select(e.cmp("lt", a, b), b, a)


def _std_min(e: Emitter, a: Value, b: Value) -> Value:
    """``std::min(a, b)``: ``(b < a) ? b : a``."""
    return e.select(e.cmp("lt", b, a), b, a)


def _prelu(e: Emitter, x: Value, alpha: Value) -> Value:
    return e.select(e.cmp("ge", x, e.f32(0.0)), x, e.mul(x, alpha))


_PLAIN_BINARY: dict[Op, Callable[[Emitter, Value, Value], Value]] = {
    Op.MAXIMUM: _std_max,
    Op.MINIMUM: _std_min,
    Op.POW: Emitter.pow,
    Op.PRELU: _prelu,
    Op.LOGICAL_AND: lambda e, a, b: _bool8(e, e.and_(_is_true(e, a), _is_true(e, b))),
    Op.LOGICAL_OR: lambda e, a, b: _bool8(e, e.or_(_is_true(e, a), _is_true(e, b))),
}

_COMPARE_PRED = {
    Op.EQUAL: "eq", Op.NOT_EQUAL: "ne", Op.GREATER: "gt",
    Op.GREATER_EQUAL: "ge", Op.LESS: "lt", Op.LESS_EQUAL: "le",
}  # fmt: skip


@lowering(*_PLAIN_BINARY, check=quant.check_plain_binary)
def plain_binary(ctx: LoweringContext) -> None:
    if ctx.info(0).type in quant.QUANT8:
        quant.plain_binary(ctx)
        return
    fn = _PLAIN_BINARY[ctx.call.type]
    ctx.elementwise(ctx.output(), [ctx.input(0), ctx.input(1)], lambda e, a: fn(e, a[0], a[1]))


@lowering(*_COMPARE_PRED)
def comparison(ctx: LoweringContext) -> None:
    """Float and int32 compare the values; TENSOR_BOOL8 the stored bytes as
    unsigned (Android compares ``uint8_t``); quantised operands compare their
    float32 real values ``(q - zero_point) * scale`` (see elementwise_q8)."""
    t = ctx.info(0).type
    pred = _COMPARE_PRED[ctx.call.type]
    if t in quant.QUANT8:
        a_real, b_real = quant.dequantizer(ctx.info(0)), quant.dequantizer(ctx.info(1))

        def body(e: Emitter, a: list[Value]) -> Value:
            return _bool8(e, e.cmp(pred, a_real(e, a[0]), b_real(e, a[1])))

    else:
        if t == T.TENSOR_BOOL8 and pred not in ("eq", "ne"):
            pred = "u" + pred

        def body(e: Emitter, a: list[Value]) -> Value:
            return _bool8(e, e.cmp(pred, a[0], a[1]))

    ctx.elementwise(ctx.output(), [ctx.input(0), ctx.input(1)], body)


@lowering(Op.SELECT)
def select(ctx: LoweringContext) -> None:
    """``out = c ? x : y``; quantised inputs are requantised to the output's
    scale and zero point first when theirs differ (Android's requantize)."""
    t = ctx.info(1).type
    if t in quant.QUANT8:
        fx, fy = quant.requantizer(ctx.info(1), ctx.out_info()), quant.requantizer(ctx.info(2), ctx.out_info())
    else:
        fx = fy = lambda e, v: v

    def body(e: Emitter, a: list[Value]) -> Value:
        return e.select(_is_true(e, a[0]), fx(e, a[1]), fy(e, a[2]))

    ctx.elementwise(ctx.output(), [ctx.input(0), ctx.input(1), ctx.input(2)], body)


# -- CAST ---------------------------------------------------------------------------------------------


def _cast_element(e: Emitter, x: Value, src: T, dst: T) -> Value:
    """Android's ``copyCast``: ``static_cast<To>(from)`` (float -> int
    truncates toward zero, saturating here where C++ is undefined), except that
    a TENSOR_QUANT8_ASYMM destination saturates to [0, 255] first.  Quantised
    values are the stored integers (scale and zero point are ignored)."""
    if src == T.TENSOR_QUANT8_ASYMM:
        x = e.op(arith.ExtUIOp(x, i32))
    if dst == T.TENSOR_QUANT8_ASYMM:
        x = e.clamp(x, 0, 255)
        if e.is_float(x):
            x = e.to_int(x, i32)
        return e.op(arith.TruncIOp(x, i8))
    if dst == T.TENSOR_FLOAT32:
        return x if e.is_float(x) else e.to_float(x, f32)
    return e.to_int(x, i32) if e.is_float(x) else x


@lowering(Op.CAST)
def cast(ctx: LoweringContext) -> None:
    src, dst = ctx.info(0).type, ctx.out_info().type
    if src == dst:
        ctx.copy(ctx.input(0), ctx.output())
        return
    ctx.elementwise(ctx.output(), [ctx.input(0)], lambda e, a: _cast_element(e, a[0], src, dst))


# -- DEQUANTIZE / QUANTIZE ----------------------------------------------------------------------


def _check_dequantize(call: OpCall) -> str | None:
    if call.outputs[0].type != T.TENSOR_FLOAT32:
        return f"{call.outputs[0].type.name} output not implemented"
    return None


@lowering(Op.DEQUANTIZE, check=_check_dequantize)
def dequantize(ctx: LoweringContext) -> None:
    """``out = scale * (q - zero_point)`` in float32; per-channel scales are
    read from a small table indexed by the channel coordinate."""
    info = ctx.info(0)
    t = info.type
    x, out = ctx.input(0), ctx.output()
    shape = ctx.shape(out)
    rank = len(shape)

    if t != T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        scale, zp = q.f32(info.scale), info.zero_point

        def body(e: Emitter, a: list[Value]) -> Value:
            v = e.sub(q.load_q(e, a[0], t), e.i32(zp)) if zp else q.load_q(e, a[0], t)
            return e.mul(e.f32(scale), e.to_float(v))

        ctx.elementwise(out, [x], body)
        return

    assert info.channel_quant is not None
    scales, dim = info.channel_quant
    table = ctx.alloc([len(scales)], f32)
    top = ctx.e
    for k, s in enumerate(scales):
        top.store(top.f32(q.f32(s)), table, [k])
    ctx.generic(
        shape,
        [(x, identity_map(rank)), (table, affine_map(rank, lambda *d: (d[dim],)))],
        [(out, identity_map(rank))],
        lambda e, a, idx: [e.mul(a[1], e.to_float(q.load_q(e, a[0], t)))],
    )


@lowering(Op.QUANTIZE)
def quantize(ctx: LoweringContext) -> None:
    """``clamp(zero_point + round(x / scale))`` in float32, as Android's
    Quantize.cpp: std::round (half away from zero), then std::min/std::max
    against the type's range (NaN becomes the maximum)."""
    out = ctx.out_info(0)
    t = out.type
    qmin, qmax = q.QRANGE[t]
    scale = q.f32(out.scale)

    def body(e: Emitter, a: list[Value]) -> Value:
        v = e.op(math.RoundOp(e.div(a[0], e.f32(scale))))
        v = e.add(e.f32(float(out.zero_point)), v)
        hi = e.f32(float(qmax))
        v = e.select(e.cmp("lt", v, hi), v, hi)  # std::min<float>(qmax, v)
        lo = e.f32(float(qmin))
        v = e.select(e.cmp("lt", lo, v), v, lo)  # std::max<float>(qmin, v)
        return e.op(arith.TruncIOp(e.to_int(v, i32), q.STORAGE[t]))

    ctx.elementwise(ctx.output(), [ctx.input(0)], body)


def requantize(ctx: LoweringContext) -> None:
    """QUANTIZE of a quantised input with the output's scale (only
    ``nnc-fold-quantize-pairs`` writes one, from a DEQUANTIZE -> QUANTIZE
    pair whose float round trip it proves exact): ``clamp(q - zp_in +
    zp_out)`` on the stored integers, a copy when nothing changes."""
    src, out = ctx.info(0), ctx.out_info(0)
    shift = out.zero_point - src.zero_point
    if shift == 0 and src.type == out.type:
        ctx.copy(ctx.input(0), ctx.output())
        return

    def body(e: Emitter, a: list[Value]) -> Value:
        return q.store_q(e, e.add(q.load_q(e, a[0], src.type), e.i32(shift)), out.type)

    ctx.elementwise(ctx.output(), [ctx.input(0)], body)
