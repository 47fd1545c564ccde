"""The integer LSTM cells of the recurrent family: QUANTIZED_16BIT_LSTM
(Android's ``QuantizedLSTMCell``, TFLite's reference ``LstmCell`` on uint8
with gemmlowp's 16-bit fixed point) and QUANTIZED_LSTM (Android's ``QLSTM``
with the ``QuantUtils`` helpers it calls).  The lowerings that use them are
registered in :mod:`nnc.passes.lowering.recurrent`.

Both are bit-exact transcriptions of the reference's integer arithmetic:
every value is an ``i32`` in the generated code (``FixedPoint<int16_t, k>``
raws through :class:`~nnc.passes.lowering.quant.Int16Ops`, which wraps to 16
bits where the C code converts back to ``int16_t``), products accumulate in
wrapping int32 as the C code does, and each intermediate buffer holds what
the reference's buffer holds.  The tensors are small (one time step), so
the cells are plain ``linalg.generic`` nests; the multipliers are computed
at compile time from the operands' scales with the reference's float/double
expression types.

Deviations, where the reference reads memory it never wrote: Android's
QLSTM computes the input and forget gates' peephole terms from the cell
*output* buffer before writing it (and over ``outputSize`` elements);
nnc uses the previous cell state over ``numUnits``, which is what TFLite's
integer LSTM does.  A projection without a bias dereferences a null bias in
Android; nnc uses a zero bias.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i32, i64

from nnc.dialects.rules.recurrent import (
    QLSTM_CELL,
    QLSTM_CELL_CLIP,
    QLSTM_HIDDEN_SCALE,
    QLSTM_HIDDEN_ZP,
    QLSTM_INTERMEDIATE,
    QLSTM_PROJ_CLIP,
    checked_log2,
)
from nnc.enums import OperandType as T
from nnc.passes.kernels.vector import kernel
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.base import Emitter, LoweringContext, Value, affine_map
from nnc.passes.lowering.recurrent_cells import Slab, assign_rows

_BN = affine_map(2, lambda b, n: (b, n))
_N = affine_map(2, lambda b, n: (n,))
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1


def _f32(x: float | np.floating) -> np.float32:
    return np.float32(x)


def _load(e: Emitter, v: Value, t: T) -> Value:
    return q.load_q(e, v, t)


def int_matvec_acc(
    ctx: LoweringContext, acc: Value, x: Value, x_type: T, x_offset: int, w: Value, w_type: T, w_offset: int
) -> None:
    """acc[b, r] += sum_k (x[b, k] + x_offset) * (w[r, k] + w_offset), in
    wrapping int32: the reference's accumulation, whose zero-point terms
    (added up front or per product) give the same sum modulo 2^32."""
    batch, rows = ctx.shape(acc)
    depth = ctx.shape(w)[1]

    def body(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        ops = q.IR(e)
        xv = ops.add(_load(e, a[0], x_type), x_offset)
        wv = ops.add(_load(e, a[1], w_type), w_offset)
        return [ops.v(ops.add(a[2], ops.mul(xv, wv)))]

    ctx.generic(
        (batch, rows, depth),
        [(x, affine_map(3, lambda b, r, k: (b, k))), (w, affine_map(3, lambda b, r, k: (r, k)))],
        [(acc, affine_map(3, lambda b, r, k: (b, r)))],
        body,
        reduction_dims=(2,),
    )


def _update(
    ctx: LoweringContext,
    out: Value,
    ins: Sequence[tuple[Value, object]],
    fn: Callable[[q.Int32Ops, Value, list[Value]], q.Val],
) -> None:
    """out[b, n] = fn(ops, out[b, n], ins...) on a [batch, n] i32 buffer; each
    input is (buffer, map) with maps over (b, n)."""

    def body(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        ops = q.IR(e)
        return [ops.v(fn(ops, a[-1], list(a[:-1])))]

    ctx.generic(ctx.shape(out), list(ins), [(out, _BN)], body)  # type: ignore[arg-type]


def _clamp16(ops: q.Int32Ops, x: q.Val) -> q.Val:
    return ops.clamp(x, INT16_MIN, INT16_MAX)


# -- shared kernels: each function's code once per model ------------------------------------
#
# The fixed-point functions are a few hundred integer ops each, applied to
# several gates; as shared kernels (:func:`~nnc.passes.kernels.vector.kernel`)
# their code is emitted and compiled once per model, whatever the number of
# gates and operations using them.


def map_int16(ctx: LoweringContext, buf: Value, name: str, fn: Callable[[q.Int32Ops, q.Val], q.Val]) -> None:
    """buf[i] = fn(int16 ops, buf[i]) in place over an i32 buffer of int16
    values, as the shared kernel ``name`` (``fn`` must depend on nothing else)."""
    flat = ctx.flat(buf)
    n = ctx.shape(flat)[0]

    def body(e: Emitter, params: list[Value]) -> None:
        data, count = params

        def step(e: Emitter, i: Value, carried: Sequence[Value]) -> list[Value]:
            ops = q.Int16Ops(q.IR(e))
            e.store(ops.v(fn(ops, e.load(data, [i]))), data, [i])
            return []

        e.for_(0, count, step)

    kernel(ctx, ctx.e, name, [flat, n], body)


def logistic_q3(ctx: LoweringContext, buf: Value) -> None:
    """``ApplySigmoid``: gemmlowp logistic, Q3.12 -> Q0.15, in place."""
    map_int16(ctx, buf, "q16_logistic_3", lambda ops, v: q.fixed_logistic(ops, v, 3))


def tanh_q(ctx: LoweringContext, buf: Value, integer_bits: int) -> None:
    """``ApplyTanh<integer_bits>``: gemmlowp tanh, Q(integer_bits) -> Q0.15, in place."""
    map_int16(ctx, buf, f"q16_tanh_{integer_bits}", lambda ops, v: q.fixed_tanh(ops, v, integer_bits))


# -- QUANTIZED_16BIT_LSTM ---------------------------------------------------------------------

#: FixedPoint<int16, 3>: the gate pre-activations; the state has 4 integer bits.
_GATE_BITS, _STATE_BITS = 3, 4


def _concat_columns(ctx: LoweringContext, parts: Sequence[Value], elem) -> Value:
    """[rows, sum of widths]: the 2-D ``parts`` side by side (Android's
    ``Concatenation`` and ``assignWeightsSubmatrix``); each element is read
    from the part its column falls in (loads at clamped columns, selected)."""
    rows = ctx.shape(parts[0])[0]
    widths = [ctx.shape(p)[1] for p in parts]
    out = ctx.alloc([rows, sum(widths)], elem)

    def body(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        r, j = idx
        value, offset = None, 0
        for part, width in zip(parts, widths):
            col = e.op(arith.MinSIOp(e.op(arith.MaxSIOp(e.sub(j, e.index(offset)), e.index(0))), e.index(width - 1)))
            v = e.load(part, [r, col])
            value = v if value is None else e.select(e.cmp("ge", j, e.index(offset)), v, value)
            offset += width
        assert value is not None  # at least one part
        return [value]

    ctx.generic((rows, sum(widths)), [], [(out, _BN)], body)
    return out


def quantized_16bit_lstm_step(ctx: LoweringContext) -> None:
    """``quantizedLstmStep<4>``: the fully connected node over the
    concatenated [input, prev output] (uint8 - 128 times weights - zero
    point, plus bias, rescaled to Q3.12 and saturated to int16), then
    logistic/tanh gates, the new state (Q4.11) and the output in gemmlowp's
    int16 fixed point.

    As in Android's QuantizedLSTMCell::eval, the concatenated row is [input,
    prev output] while each gate's weight row is [recurrent weights, input
    weights] (``concatenateWeights``): columns meet by position, so the
    input meets the first inputSize recurrent weights (TFLite's own layout
    is [input weights, recurrent weights]).  The conformance tests' expected
    values are computed that way, and nnc matches them bit for bit."""
    x, h_in, c_in = ctx.input(0), ctx.input(14), ctx.input(13)
    c_out, out = ctx.output(0), ctx.output(1)
    batch, units = ctx.shape(c_in)
    w_zp = ctx.info(1).zero_point
    # realAccumMultiplier = 4096 * bias scale (double), QuantizeMultiplier
    m, shift = q.quantize_multiplier(4096 * float(_f32(ctx.info(9).scale)))
    u8 = T.TENSOR_QUANT8_ASYMM
    elem = q.storage_type(u8)
    row = _concat_columns(ctx, [x, h_in], elem)
    gates = []
    for g in range(4):  # input, forget, cell, output: weights 1+g, 5+g, bias 9+g
        weights = _concat_columns(ctx, [ctx.input(5 + g), ctx.input(1 + g)], elem)
        acc = ctx.alloc([batch, units], i32)
        assign_rows(ctx, Slab(acc), ctx.input(9 + g))
        int_matvec_acc(ctx, acc, row, u8, -128, weights, u8, -w_zp)
        _update(ctx, acc, [], lambda ops, v, a: _clamp16(ops, q.mbqm(ops, v, m, shift)))
        gates.append(acc)

    gi, gf, gc, go = gates
    for gate in (gi, gf, go):
        logistic_q3(ctx, gate)
    tanh_q(ctx, gc, _GATE_BITS)
    # The new state (Q4.11) goes to cell_state_out; its tanh input (Q3.12) to gc.

    def cell(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        ops = q.Int16Ops(q.IR(e))
        input_gate, forget, modulation, prev = a[0], a[1], a[2], _load(e, a[3], T.TENSOR_QUANT16_SYMM)
        new_state = ops.add_sat_if_16bit(
            q.saturating_rounding_multiply_by_pot(ops, ops.srdhm(input_gate, modulation), -_STATE_BITS),
            ops.srdhm(forget, prev),
        )
        rescaled = q.saturating_rounding_multiply_by_pot(ops, new_state, _STATE_BITS - _GATE_BITS)
        return [q.store_q(e, new_state, T.TENSOR_QUANT16_SYMM, saturate=False), ops.v(rescaled)]

    ctx.generic((batch, units), [(gi, _BN), (gf, _BN), (gc, _BN), (c_in, _BN)], [(c_out, _BN), (gc, _BN)], cell)
    tanh_q(ctx, gc, _GATE_BITS)

    def output(e: Emitter, a: Sequence[Value]) -> Value:
        ops = q.Int16Ops(q.IR(e))
        activ = ops.srdhm(a[0], a[1])
        return q.store_q(e, ops.add(ops.clamp(ops.rdbpot(activ, 8), -128, 127), 128), u8, saturate=False)

    ctx.elementwise(out, [go, gc], output)


# -- QUANTIZED_LSTM ---------------------------------------------------------------------------


def quantize_multiplier(real: float | np.floating) -> tuple[int, int]:
    """``QuantizeMultiplier`` of a float32 effective scale."""
    return q.quantize_multiplier(float(_f32(real)))


@dataclass(frozen=True)
class QlstmGate:
    """Where one gate's operands are and its multipliers (Android's
    ``*EffectiveScaleA/B``)."""

    input_weights: int
    recurrent_weights: int
    peephole: int | None  # cell-to-gate weights
    bias: int
    layer_norm: int | None
    input_scale: tuple[int, int]
    recurrent_scale: tuple[int, int]
    peephole_scale: tuple[int, int] | None
    layer_norm_scale: tuple[int, int] | None
    variance_limit: int


@dataclass(frozen=True)
class QlstmParams:
    """QLSTM's compile-time parameters (the first half of ``qlstm::execute``)."""

    cell_shift: int
    gates: dict[str, QlstmGate]
    hidden_scale: tuple[int, int]
    hidden_zp: int
    projection_scale: tuple[int, int] | None
    cell_clip: int
    projection_clip: int

    @staticmethod
    def from_call(ctx: LoweringContext) -> QlstmParams:
        info, has = ctx.info, ctx.has_input
        w = QLSTM_CELL.w
        x_scale = _f32(info(0).scale)
        h_info, c_info = (info(i) for i in QLSTM_CELL.states)
        h_scale = _f32(h_info.scale)
        cell_shift = checked_log2(c_info.scale)
        assert cell_shift is not None  # the rule checked it
        gates = {}
        ln_first = QLSTM_CELL.layer_norm
        assert ln_first is not None  # QUANTIZED_LSTM has layer-norm weights
        for k, name in enumerate(("input", "forget", "cell", "output")):
            if name == "input" and not has(w(0)):
                continue  # CIFG
            inter = _f32(ctx.scalar(QLSTM_INTERMEDIATE + k))
            peep = _PEEPHOLE.get(name)
            peep = w(peep) if peep is not None and has(w(peep)) else None
            ln = ln_first + k if has(ln_first + k) else None
            ln_scale = _f32(info(ln).scale) if ln is not None else _f32(0.0)
            gates[name] = QlstmGate(
                input_weights=w(k),
                recurrent_weights=w(4 + k),
                peephole=peep,
                bias=w(11 + k),
                layer_norm=ln,
                input_scale=quantize_multiplier(_f32(info(w(k)).scale) * x_scale / inter),
                recurrent_scale=quantize_multiplier(_f32(info(w(4 + k)).scale) * h_scale / inter),
                # std::pow(2, cellShift) is a double: the product is double, then float
                peephole_scale=None if peep is None else quantize_multiplier(
                    2.0**cell_shift * float(_f32(info(peep).scale)) / float(inter)),
                layer_norm_scale=None if ln is None else q.quantize_multiplier(float(ln_scale)),
                # std::min(1, static_cast<int32_t>(10000 * scale)), float product
                variance_limit=min(1, int(_f32(10000) * ln_scale)),
            )  # fmt: skip
        hidden_scale = _f32(ctx.scalar(QLSTM_HIDDEN_SCALE))
        proj = w(15) if has(w(15)) else None
        proj_scale = _f32(info(proj).scale) if proj is not None else None
        cell_clip = _f32(ctx.scalar(QLSTM_CELL_CLIP, 0.0))
        proj_clip = _f32(ctx.scalar(QLSTM_PROJ_CLIP, 0.0))
        return QlstmParams(
            cell_shift=cell_shift,
            gates=gates,
            hidden_scale=quantize_multiplier(2.0**-15 / float(hidden_scale) * 2.0**-15),
            # getInputValue<int8_t> of the INT32 scalar: its low byte
            hidden_zp=q.PY.wrap(int(ctx.scalar(QLSTM_HIDDEN_ZP)), 8),
            projection_scale=None if proj_scale is None else quantize_multiplier(proj_scale * hidden_scale / h_scale),
            cell_clip=_clip_value(cell_clip, _f32(c_info.scale), INT16_MIN, INT16_MAX),
            projection_clip=0 if proj_scale is None else _clip_value(proj_clip, proj_scale, -128, 127),
        )


#: cell-to-gate (peephole) weights among the 17 cell tensors
_PEEPHOLE = {"input": 8, "forget": 9, "output": 10}


def _clip_value(clip: np.float32, scale: np.float32, lo: int, hi: int) -> int:
    """``static_cast<int32_t>(std::min(std::max(clip / scale, lo), hi))`` in
    float32 (0 when ``clip`` is not positive: no clipping)."""
    if not clip > 0:
        return 0
    with np.errstate(divide="ignore", over="ignore"):
        v = np.float32(clip / scale)
    return int(min(max(float(v), float(lo)), float(hi)))


def inv_sqrt_quantized_multiplier_exp(ops: q.Int32Ops, x: q.Val) -> tuple[q.Val, q.Val]:
    """``GetInvSqrtQuantizedMultiplierExp(x, reverse_shift=-1)`` of a run-time
    int32 ``x >= 0``: (multiplier, right shift) with 1/sqrt(x) ~ multiplier *
    2^-(31 + shift), by gemmlowp Newton-Raphson in Q3.28.  Returns the right
    shift (the negated exponent the reference returns), >= 0.

    The reference's loops are unrolled: ``x >= 2^29`` is divided by 4 at most
    once (x < 2^31), and the normalising left shift by bit pairs (from
    ``CountLeadingZeros``) is the count of j in 1..13 with x < 2^(29 - 2j)."""
    small = ops.cmp("le", x, 1)
    x = ops.max(x, 2)  # the small case's result is selected below
    big = ops.cmp("ge", x, 1 << 29)
    x = ops.select(big, ops.ashr(x, 2), x)
    shift = ops.select(big, 12, 11)
    pairs: q.Val = 0
    for j in range(1, 14):
        pairs = ops.add(pairs, ops.select(ops.cmp("lt", x, 1 << (29 - 2 * j)), 1, 0))
    shift = ops.sub(shift, pairs)
    x = ops.shl(x, ops.add(pairs, pairs))
    half_input = ops.rdbpot(ops.ashr(x, 1), 1)  # SaturatingRoundingMultiplyByPOT<-1>
    half_three = (1 << 28) + (1 << 27)
    y: q.Val = 1 << 28  # F3::One()
    for _ in range(5):
        y3 = q.saturating_rounding_multiply_by_pot(ops, ops.srdhm(ops.srdhm(y, y), y), 6)
        y = q.saturating_rounding_multiply_by_pot(
            ops, ops.sub(ops.srdhm(half_three, y), ops.srdhm(half_input, y3)), 3
        )
    y = ops.srdhm(y, 1518500250)  # * sqrt(2) / 2
    negative = ops.cmp("lt", shift, 0)
    y = ops.select(negative, ops.shl(y, ops.max(ops.neg(shift), 0)), y)
    shift = ops.select(negative, 0, shift)
    return ops.select(small, q.INT32_MAX, y), ops.select(small, 0, shift)


def mbqm_runtime(ops: q.Int32Ops, x: q.Val, multiplier: q.Val, shift: q.Val) -> q.Val:
    """``MultiplyByQuantizedMultiplier`` with a run-time multiplier and shift."""
    left = ops.max(shift, 0)
    right = ops.max(ops.neg(shift), 0)
    return q.rdbpot_runtime(ops, ops.srdhm(ops.shl(x, left), multiplier), right)


def _layer_norm_body(e: Emitter, params: list[Value]) -> None:
    """The shared kernel of :func:`apply_layer_norm`: (gate, weights, bias,
    [multiplier, shift, variance limit], batch, n)."""
    gate, weights, bias, scale, batch, n = params
    n64 = e.op(arith.IndexCastOp(n, i64))
    c64 = lambda v: e.const(v, i64)

    def row(e: Emitter, b: Value, carried: Sequence[Value]) -> list[Value]:
        ops = q.IR(e)
        base = e.mul(b, n)

        def stats(e: Emitter, j: Value, acc: Sequence[Value]) -> list[Value]:
            v = e.load(gate, [e.add(base, j)])
            sq = e.mul(v, v)  # int32: |v| <= 2^15
            return [e.add(acc[0], e.op(arith.ExtSIOp(v, i64))), e.add(acc[1], e.op(arith.ExtSIOp(sq, i64)))]

        total, total_sq = e.for_(0, n, stats, [c64(0), c64(0)])
        mean64 = e.op(arith.DivSIOp(e.mul(total, c64(1024)), n64))
        mean = e.op(arith.TruncIOp(mean64, i32))
        temp = e.op(arith.DivSIOp(c64(1 << 20), n64))  # kOverflowGuard / n_input (int)
        variance = e.sub(e.mul(total_sq, temp), e.mul(mean64, mean64))
        variance2 = e.op(arith.TruncIOp(e.op(arith.DivSIOp(variance, c64(1 << 20))), i32))
        variance2 = ops.select(ops.cmp("lt", variance2, 1), e.load(scale, [2]), variance2)
        mult, right = inv_sqrt_quantized_multiplier_exp(ops, variance2)
        m, shift = e.load(scale, [0]), e.load(scale, [1])

        def element(e: Emitter, j: Value, carried: Sequence[Value]) -> list[Value]:
            ops = q.IR(e)
            k = e.add(base, j)
            shifted = ops.sub(ops.mul(e.load(gate, [k]), 1024), mean)
            rescaled = q.rdbpot_runtime(ops, ops.srdhm(shifted, mult), right)
            w = _load(e, e.load(weights, [j]), T.TENSOR_QUANT16_SYMM)
            val3 = ops.add(ops.mul(rescaled, w), e.load(bias, [j]))  # int32, as the C++
            wide = e.op(arith.ExtSIOp(ops.v(val3), i64))
            wide = e.add(wide, e.select(e.cmp("gt", wide, c64(0)), c64(512), c64(-512)))
            val4 = e.op(arith.TruncIOp(e.op(arith.DivSIOp(wide, c64(1024))), i32))
            e.store(ops.v(_clamp16(ops, mbqm_runtime(ops, val4, m, shift))), gate, [k])
            return []

        e.for_(0, n, element)
        return []

    e.for_(0, batch, row)


def apply_layer_norm(ctx: LoweringContext, gate: Value, weights: Value, bias: Value,
                     scale: tuple[int, int], variance_limit: int) -> None:  # fmt: skip
    """``ApplyLayerNorm`` in place on a [batch, n] i32 buffer of int16 values:
    each row's mean and variance in int64 (x1024), its inverse square root
    as a run-time multiplier (:func:`inv_sqrt_quantized_multiplier_exp`),
    then the weights (int16), the bias (int32) and the gate's layer-norm
    scale (with Android's extra 12 bits of right shift).  One shared kernel
    for every gate: the scale and variance limit are a small constant."""
    batch, n = ctx.shape(gate)
    m, shift = scale
    params = ctx.packed_constant(np.array([m, shift + 12, variance_limit], np.int32), i32)
    kernel(ctx, ctx.e, "qlstm_layer_norm", [ctx.flat(gate), weights, bias, params, batch, n], _layer_norm_body)


def _gate(ctx: LoweringContext, p: QlstmParams, g: QlstmGate, cell: Value,
          act: Callable[[LoweringContext, Value], None]) -> Value:  # fmt: skip
    """One gate's [batch, units] int16 values (in an i32 buffer): the input and
    recurrent products, each rescaled and accumulated with saturation
    (``MatrixBatchVectorMultiplyAccumulate``), the peephole term
    (``VectorBatchVectorCwiseProductAccumulate`` with ``cell``), layer
    normalisation and the activation ``act(ctx, buffer)`` in place."""
    x, h = ctx.input(0), ctx.input(QLSTM_CELL.states[0])
    x_zp, h_zp = ctx.info(0).zero_point, ctx.info(QLSTM_CELL.states[0]).zero_point
    batch, units = ctx.shape(cell)
    gate = ctx.alloc([batch, units], i32)
    acc = ctx.alloc([batch, units], i32)
    s8, w8 = T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM
    for k, (src, zp, weights, (m, shift)) in enumerate(
        ((x, x_zp, g.input_weights, g.input_scale), (h, h_zp, g.recurrent_weights, g.recurrent_scale))
    ):
        ctx.fill(acc, 0)
        int_matvec_acc(ctx, acc, src, s8, -zp, ctx.input(weights), w8, 0)
        if k == 0:

            def first(e: Emitter, a: list[Value], m: int = m, shift: int = shift) -> Value:
                return q.IR(e).v(_clamp16(q.IR(e), q.mbqm(q.IR(e), a[0], m, shift)))

            ctx.elementwise(gate, [acc], first)
        else:

            def add(ops: q.Int32Ops, v: Value, a: list[Value], m: int = m, shift: int = shift) -> q.Val:
                return _clamp16(ops, ops.add(q.mbqm(ops, a[0], m, shift), v))

            _update(ctx, gate, [(acc, _BN)], add)
    if g.peephole is not None and g.peephole_scale is not None:
        pm, ps = g.peephole_scale

        def peephole(ops: q.Int32Ops, v: Value, a: list[Value]) -> q.Val:
            e = ops.e  # type: ignore[attr-defined]
            prod = ops.mul(_load(e, a[0], T.TENSOR_QUANT16_SYMM), _load(e, a[1], T.TENSOR_QUANT16_SYMM))
            return _clamp16(ops, ops.add(q.mbqm(ops, prod, pm, ps), v))

        _update(ctx, gate, [(ctx.input(g.peephole), _N), (cell, _BN)], peephole)
    if g.layer_norm is not None and g.layer_norm_scale is not None:
        apply_layer_norm(ctx, gate, ctx.input(g.layer_norm), ctx.input(g.bias), g.layer_norm_scale, g.variance_limit)
    act(ctx, gate)
    return gate


def quantized_lstm_step(ctx: LoweringContext) -> None:
    """``qlstm::execute``: forget, cell (tanh, Q3.12), input (or 1 - forget
    with CIFG) and output gates, the new cell state, the hidden state
    (int8 at the hidden scale) and the optional projection."""
    p = QlstmParams.from_call(ctx)
    c_in = ctx.input(QLSTM_CELL.states[1])
    h_out, c_out, out = (ctx.output(i) for i in range(3))
    s16 = T.TENSOR_QUANT16_SYMM
    forget = _gate(ctx, p, p.gates["forget"], c_in, logistic_q3)
    cell_gate = _gate(ctx, p, p.gates["cell"], c_in, lambda ctx, buf: tanh_q(ctx, buf, 3))
    if "input" in p.gates:
        input_gate = _gate(ctx, p, p.gates["input"], c_in, logistic_q3)
    else:  # Sub1Vector
        input_gate = ctx.alloc(ctx.shape(forget), i32)
        ctx.elementwise(input_gate, [forget], lambda e, a: q.IR(e).v(q.Int16Ops(q.IR(e)).sub(INT16_MAX, a[0])))
    mul_shift = 30 + p.cell_shift

    def new_cell(e: Emitter, a: Sequence[Value]) -> Value:
        ops = q.IR(e)
        f, c, i, g = a[0], _load(e, a[1], s16), a[2], a[3]
        kept = ops.wrap(ops.rdbpot(ops.mul(f, c), 15), 16)  # CwiseMul(.., 15), stored as int16
        added = ops.wrap(ops.rdbpot(ops.mul(i, g), mul_shift), 16)
        v = _clamp16(ops, ops.add(kept, added))  # CwiseAdd
        if p.cell_clip > 0:
            v = ops.clamp(v, -p.cell_clip, p.cell_clip)
        return q.store_q(e, v, s16, saturate=False)

    ctx.elementwise(c_out, [forget, c_in, input_gate, cell_gate], new_cell)
    output_gate = _gate(ctx, p, p.gates["output"], c_out, logistic_q3)

    # Hidden: ApplyTanh(cellShift + 15) dispatches integer bits 0..6 only; for
    # others it leaves its output buffer (the input gate's) untouched.
    tanh_bits = p.cell_shift + 15
    hm, hs = p.hidden_scale
    hidden = ctx.alloc(ctx.shape(c_out), i32)
    if 0 <= tanh_bits <= 6:
        ctx.elementwise(hidden, [c_out], lambda e, a: _load(e, a[0], s16))
        tanh_q(ctx, hidden, tanh_bits)
        tanh_c = hidden
    else:
        tanh_c = input_gate

    def hidden_state(e: Emitter, a: Sequence[Value]) -> Value:
        ops = q.IR(e)
        v = ops.sub(q.mbqm(ops, ops.mul(a[0], a[1]), hm, hs), p.hidden_zp)  # CwiseMul subtracts the zero point
        return ops.v(ops.clamp(v, -128, 127))

    ctx.elementwise(hidden, [output_gate, tanh_c], hidden_state)
    s8 = T.TENSOR_QUANT8_ASYMM_SIGNED
    proj = QLSTM_CELL.w(15)
    if p.projection_scale is not None:
        pm, ps = p.projection_scale
        out_zp = ctx.info(QLSTM_CELL.states[0]).zero_point
        acc = ctx.alloc(ctx.shape(out), i32)
        proj_b = QLSTM_CELL.w(16)
        assign_rows(ctx, Slab(acc), ctx.input(proj_b) if ctx.has_input(proj_b) else None)
        # PrecomputeZeroPointTimesWeightWithBias(hiddenStateZeroPoint, ...)
        int_matvec_acc(ctx, acc, hidden, T.TENSOR_INT32, p.hidden_zp, ctx.input(proj), T.TENSOR_QUANT8_SYMM, 0)
        clip = p.projection_clip

        def project(e: Emitter, a: Sequence[Value]) -> Value:
            ops = q.IR(e)
            v = ops.clamp(ops.add(q.mbqm(ops, a[0], pm, ps), out_zp), -128, 127)
            if clip > 0:
                v = ops.clamp(v, -clip, clip)
            return q.store_q(e, v, s8, saturate=False)

        ctx.elementwise(out, [acc], project)
    else:
        ctx.elementwise(out, [hidden], lambda e, a: q.store_q(e, a[0], s8, saturate=False))
    ctx.copy(out, h_out)
