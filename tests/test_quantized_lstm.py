"""The integer builders of QUANTIZED_16BIT_LSTM and QUANTIZED_LSTM
(passes/lowering/quant.py's int16 fixed point, recurrent_q8.py's
run-time helpers), against Python transcriptions of the reference code:

* gemmlowp's ``FixedPoint<std::int16_t, k>`` exp / logistic / tanh
  (``fixedpoint.h``), transcribed below with numpy, against the compile-time
  backend on a sample and the generated code on every int16 input;
* ``RoundingDivideByPOT`` by a run-time exponent and Android's
  ``GetInvSqrtQuantizedMultiplierExp`` (``QuantUtils.h``, with its loop and
  ``CountLeadingZeros``) against the unrolled builders.

The operations themselves are checked bit for bit by the conformance
corpus (``--cts-filter quantized_lstm``, ``--cts-filter qlstm``).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, i32

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.passes.lowering import LoweringContext, identity_map
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.recurrent_q8 import inv_sqrt_quantized_multiplier_exp
from test_quant_arith import NativeFn

# -- gemmlowp int16 fixed point, transcribed (numpy int64 arrays holding int16) ---------------

_MIN, _MAX = -(1 << 15), (1 << 15) - 1


def _i16(x):
    """C's conversion to int16_t (wraps)."""
    return ((x + (1 << 15)) & 0xFFFF) - (1 << 15)


def _srdhm(a, b):
    ab = a * b
    n = ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    truncated = np.abs(n) // (1 << 15) * np.sign(n)  # C division truncates
    return np.where((a == b) & (a == _MIN), _MAX, _i16(truncated))


def _rdbpot(x, exponent):
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def _srmpot(x, exponent):
    if exponent == 0:
        return x
    if exponent < 0:
        return _rdbpot(x, -exponent)
    threshold = (1 << (15 - exponent)) - 1
    return np.where(x > threshold, _MAX, np.where(x < -threshold, _MIN, _i16(x * (1 << exponent))))


def _const(raw32: int) -> int:
    """RescaleConstantInitializer<int16>: the int32 constant rounding-shifted by 16."""
    return int(_rdbpot(np.int64(raw32), 16))


def _exp_quarter(a):
    constant_term, one_third = _const(1895147668), _const(715827883)
    x = _i16(a + (1 << 12))  # + ConstantPOT<-3>
    x2 = _srdhm(x, x)
    x3 = _srdhm(x2, x)
    x4 = _srdhm(x2, x2)
    poly = _srmpot(_i16(_srdhm(_i16(_srmpot(x4, -2) + x3), one_third) + x2), -1)
    return np.clip(constant_term + _srdhm(constant_term, _i16(x + poly)), _MIN, _MAX)  # SaturatingAdd


def _exp_on_negative_values(a, k):
    frac = 15 - k
    quarter = 1 << (frac - 2)
    amq = _i16((a & (quarter - 1)) - quarter)
    result = _exp_quarter(_srmpot(amq, k))
    remainder = _i16(amq - a)
    barrel = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
              (2, 39332535), (3, 720401), (4, 242))  # fmt: skip
    for exponent, multiplier in barrel:
        if k > exponent:
            hit = (remainder & (1 << (frac + exponent))) != 0
            result = np.where(hit, _srdhm(result, _const(multiplier)), result)
    if k > 5:
        result = np.where(a < _const(-(1 << (36 - k))), 0, result)
    return np.where(a == 0, _MAX, result)


def _newton(a):
    s = a + _MAX  # RoundingHalfSum(a, One): (sum + sign) / 2, truncated
    n = s + np.where(s >= 0, 1, -1)
    half_denominator = _i16(np.abs(n) // 2 * np.sign(n))
    x = _i16(_const(1515870810) + _srdhm(half_denominator, _const(-1010580540)))
    for _ in range(3):
        one_minus = _i16((1 << 13) - _srdhm(half_denominator, x))
        x = _i16(x + _srmpot(_srdhm(x, one_minus), 2))
    return x


def ref_logistic(a, k):
    positive = a > 0
    abs_a = np.where(positive, a, _i16(-a))
    if_positive = _srmpot(_newton(_exp_on_negative_values(_i16(-abs_a), k)), 1)
    return np.where(a == 0, _const(1 << 30), np.where(positive, if_positive, _i16(_MAX - if_positive)))


def ref_tanh(a, k):
    negative = a < 0
    n = np.where(negative, a, _i16(-a))
    t = _srmpot(_i16(_newton(_exp_on_negative_values(n, k + 1)) - (1 << 13)), 2)
    return np.where(a == 0, 0, np.where(negative, _i16(-t), t))


ALL_INT16 = np.arange(_MIN, _MAX + 1, dtype=np.int64)
#: the edges, small magnitudes and a stride through the rest
SAMPLE = np.unique(np.concatenate([ALL_INT16[:40], ALL_INT16[-40:], np.arange(-300, 300, 7), ALL_INT16[::331]]))

FUNCTIONS = {
    "logistic_3": (lambda ops, v: q.fixed_logistic(ops, v, 3), lambda a: ref_logistic(a, 3)),
    **{f"tanh_{k}": (lambda ops, v, k=k: q.fixed_tanh(ops, v, k), lambda a, k=k: ref_tanh(a, k)) for k in (0, 3, 6)},
    "exp_7": (lambda ops, v: q.exp_on_negative_values(ops, v, 7), lambda a: _exp_on_negative_values(a, 7)),
}


def test_transcription_near_float():
    """The transcription is the real function (within int16 rounding)."""
    x = ALL_INT16 / 2.0**12
    assert np.abs(ref_logistic(ALL_INT16, 3) / 2.0**15 - 1 / (1 + np.exp(-x))).max() < 5e-4
    assert np.abs(ref_tanh(ALL_INT16, 3) / 2.0**15 - np.tanh(x)).max() < 5e-4
    neg = ALL_INT16[ALL_INT16 <= 0]
    assert np.abs(_exp_on_negative_values(neg, 7) / 2.0**15 - np.exp(neg / 2.0**8)).max() < 5e-4


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_int16_backend_matches_gemmlowp(name):
    build, ref = FUNCTIONS[name]
    got = [build(q.PY16, int(v)) for v in SAMPLE]
    assert got == [int(v) for v in ref(SAMPLE)]


def test_int16_primitives():
    rows, cols = SAMPLE, SAMPLE[::5]
    want = _srdhm(rows[:, None], cols[None, :])
    got = [[q.PY16.srdhm(int(x), int(y)) for y in cols] for x in rows]
    assert (np.array(got) == want).all()
    assert q.PY16.add_sat_if_16bit(30000, 30000) == _MAX and q.PY16.add(30000, 30000) == _i16(60000)
    assert q.PY16.neg(_MIN) == _MIN


N = len(ALL_INT16)


@cache
def int16_functions_fn() -> NativeFn:
    """Every function of FUNCTIONS over N int16 inputs (as i32), generated code."""
    names = sorted(FUNCTIONS)

    def build(ctx: LoweringContext) -> None:
        def body(e, args, idx):
            ops = q.Int16Ops(q.IR(e))
            return [ops.v(FUNCTIONS[n][0](ops, args[0])) for n in names]

        ctx.generic((N,), [(ctx.inputs[0], identity_map(1))], [(o, identity_map(1)) for o in ctx.outputs], body)

    return NativeFn([MemRefType(i32, [N])], [MemRefType(i32, [N])] * len(names), build)


def test_generated_int16_functions_on_every_input():
    names = sorted(FUNCTIONS)
    outs = [np.zeros(N, np.int32) for _ in names]
    int16_functions_fn()([ALL_INT16.astype(np.int32)], outs)
    for name, out in zip(names, outs):
        want = FUNCTIONS[name][1](ALL_INT16)
        bad = np.flatnonzero(out != want)
        first = bad[0] if bad.size else 0
        assert bad.size == 0, f"{name}: {bad.size} differ, first at {ALL_INT16[first]}: {out[first]} != {want[first]}"


# -- run-time shifts and the inverse square root (QuantUtils.h) -----------------------------------


def ref_inv_sqrt(x: int) -> tuple[int, int]:
    """GetInvSqrtQuantizedMultiplierExp(x, reverse_shift=-1), transcribed;
    returns (multiplier, right shift) like the builder."""
    if x <= 1:
        return q.INT32_MAX, 0
    shift = 11
    while x >= 1 << 29:
        x //= 4
        shift += 1
    clz = 32 - x.bit_length()
    pairs = (clz - 1) // 2 - 1
    shift -= pairs
    x <<= 2 * pairs
    assert (1 << 27) <= x < (1 << 29)
    srdhm = q.saturating_rounding_doubling_high_mul
    half_input = q.rounding_divide_by_pot(x >> 1, 1)
    half_three = (1 << 28) + (1 << 27)
    y = 1 << 28

    def rescale3(v: int, from_bits: int) -> int:  # SaturatingRoundingMultiplyByPOT<from - 3>
        e = from_bits - 3
        threshold = (1 << (31 - e)) - 1
        return q.INT32_MAX if v > threshold else q.INT32_MIN if v < -threshold else q.wrap32(v << e)

    for _ in range(5):
        y3 = rescale3(srdhm(srdhm(y, y), y), 9)
        y = rescale3(q.wrap32(srdhm(half_three, y) - srdhm(half_input, y3)), 6)
    y = srdhm(y, 1518500250)
    if shift < 0:
        y = q.wrap32(y << -shift)
        shift = 0
    return y, shift


INV_SQRT_INPUTS = [0, 1, 2, 3, 4, 5, 7, 8, 100, 1023, 1024, 4095, 65536, 123457, (1 << 27) - 1, 1 << 27,
                   (1 << 29) - 1, 1 << 29, (1 << 29) + 12345, (1 << 31) - 1, -5]  # fmt: skip


def test_inv_sqrt_builder_matches_reference():
    rng = np.random.default_rng(7)
    xs = INV_SQRT_INPUTS[:-1] + [int(v) for v in rng.integers(2, 2**31 - 1, 300)]
    for x in xs:
        assert inv_sqrt_quantized_multiplier_exp(q.PY, x) == ref_inv_sqrt(x), x


def _inv_sqrt_and_shifts_fn(n: int) -> NativeFn:
    def build(ctx: LoweringContext) -> None:
        def body(e, args, idx):
            ops = q.IR(e)
            m, s = inv_sqrt_quantized_multiplier_exp(ops, args[0])
            return [ops.v(m), ops.v(s), ops.v(q.rdbpot_runtime(ops, args[0], args[1]))]

        ctx.generic((n,), [(b, identity_map(1)) for b in ctx.inputs], [(o, identity_map(1)) for o in ctx.outputs], body)

    return NativeFn([MemRefType(i32, [n])] * 2, [MemRefType(i32, [n])] * 3, build)


def test_generated_inv_sqrt_and_runtime_rdbpot():
    rng = np.random.default_rng(11)
    x = np.array(INV_SQRT_INPUTS + [int(v) for v in rng.integers(-(2**31), 2**31 - 1, 64)], np.int32)
    exponents = rng.integers(0, 32, len(x)).astype(np.int32)
    outs = [np.zeros(len(x), np.int32) for _ in range(3)]
    _inv_sqrt_and_shifts_fn(len(x))([x, exponents], outs)
    for i, v in enumerate(x.tolist()):
        if v >= 0:
            assert (int(outs[0][i]), int(outs[1][i])) == ref_inv_sqrt(v), v
        assert outs[2][i] == q.rounding_divide_by_pot(v, int(exponents[i])), (v, exponents[i])


# -- QUANTIZED_LSTM configurations the corpus does not test ------------------------------------
#
# The corpus runs QLSTM with layer normalisation, CIFG or not, projection or
# not, no peephole, no clipping, hidden zero point 0 and cell scale 2^-15.
# ``ref_qlstm`` transcribes ``qlstm::execute`` (with the peephole read from
# the previous cell state: see recurrent_q8.py) on Python ints.

S8, W8, S16, I32 = T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM, T.TENSOR_QUANT16_SYMM, T.TENSOR_INT32
f32 = np.float32


def _qm(real) -> tuple[int, int]:
    return q.quantize_multiplier(float(f32(real)))


def _mbvma(x, zp, w, m, s, acc):
    """MatrixBatchVectorMultiplyAccumulate into int16 ``acc`` (input offset -zp)."""
    out = acc.copy()
    for b in range(x.shape[0]):
        for r in range(w.shape[0]):
            a = q.wrap32(sum((int(x[b, k]) - zp) * int(w[r, k]) for k in range(w.shape[1])))
            out[b, r] = min(max(q.multiply_by_quantized_multiplier(a, m, s) + int(acc[b, r]), _MIN), _MAX)
    return out


def _cdiv(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


def _layer_norm(g, w, bias, m, s, limit):
    """ApplyLayerNorm (int64 sums, int32 elsewhere)."""
    out = g.copy()
    n = g.shape[1]
    for b in range(g.shape[0]):
        vals = [int(v) for v in g[b]]
        mean = _cdiv(sum(vals) * 1024, n)
        var2 = _cdiv(sum(v * v for v in vals) * _cdiv(1 << 20, n) - mean * mean, 1 << 20)
        if var2 < 1:
            var2 = limit
        inv, right = ref_inv_sqrt(var2)
        for j in range(n):
            shifted = q.wrap32(1024 * vals[j] - mean)
            r = q.rounding_divide_by_pot(q.saturating_rounding_doubling_high_mul(shifted, inv), right)
            v3 = q.wrap32(r * int(w[j]) + int(bias[j]))
            v4 = _cdiv(v3 + (512 if v3 > 0 else -512), 1024)
            out[b, j] = min(max(q.multiply_by_quantized_multiplier(v4, m, s + 12), _MIN), _MAX)
    return out


def ref_qlstm(ins: dict, info: dict, sc: dict) -> tuple[np.ndarray, np.ndarray]:
    """(output, cell state) of qlstm::execute; ``ins`` by input index (None:
    omitted), ``info`` (scale, zero point) by input index, ``sc`` the scalars."""
    x, h, c = ins[0], ins[18], ins[19]
    cell_shift = int(round(np.log2(info[19][0])))
    batch, units = c.shape
    gates = {}
    for k, name in enumerate(("input", "forget", "cell", "output")):
        if ins[1 + k] is None:
            continue
        inter = f32(sc[26 + k])
        g = np.zeros((batch, units), np.int64)
        g = _mbvma(x, info[0][1], ins[1 + k], *_qm(f32(info[1 + k][0]) * f32(info[0][0]) / inter), g)
        g = _mbvma(h, info[18][1], ins[5 + k], *_qm(f32(info[5 + k][0]) * f32(info[18][0]) / inter), g)
        gates[name] = (g, inter)
    peep = {"input": 9, "forget": 10, "output": 11}

    def finish(name, g, inter, cell):
        k = ("input", "forget", "cell", "output").index(name)
        if name in peep and ins[peep[name]] is not None:
            m, s = _qm(2.0**cell_shift * float(f32(info[peep[name]][0])) / float(inter))
            for b in range(batch):
                for u in range(units):
                    p = q.multiply_by_quantized_multiplier(int(ins[peep[name]][u]) * int(cell[b, u]), m, s)
                    g[b, u] = min(max(p + int(g[b, u]), _MIN), _MAX)
        if ins[20 + k] is not None:
            ln_scale = f32(info[20 + k][0])
            m, s = q.quantize_multiplier(float(ln_scale))
            g = _layer_norm(g, ins[20 + k], ins[12 + k], m, s, min(1, int(f32(10000) * ln_scale)))
        return ref_tanh(g, 3) if name == "cell" else ref_logistic(g, 3)

    f = finish("forget", *gates["forget"], c)
    cg = finish("cell", *gates["cell"], c)
    i = finish("input", *gates["input"], c) if "input" in gates else _i16(32767 - f)
    kept = _i16(_rdbpot(f * c, 15))
    added = _i16(_rdbpot(i * cg, 30 + cell_shift))
    c_out = np.clip(kept + added, _MIN, _MAX)
    qcc = int(min(max(float(f32(f32(sc[24]) / f32(info[19][0]))), -32768.0), 32767.0)) if sc[24] > 0 else 0
    if qcc > 0:
        c_out = np.clip(c_out, -qcc, qcc)
    o = finish("output", *gates["output"], c_out)
    t = ref_tanh(c_out, cell_shift + 15)
    hm, hs = _qm(2.0**-15 / float(f32(sc[31])) * 2.0**-15)
    hzp = sc[30]
    # CwiseMul subtracts the output zero point
    scaled = [[q.multiply_by_quantized_multiplier(int(o[b, u]) * int(t[b, u]), hm, hs) - hzp for u in range(units)]
              for b in range(batch)]  # fmt: skip
    hidden = np.clip(np.array(scaled), -128, 127)
    if ins[16] is None:
        return hidden, c_out
    pw = ins[16]
    pm, ps = _qm(f32(info[16][0]) * f32(sc[31]) / f32(info[18][0]))
    bias = ins[17] if ins[17] is not None else np.zeros(pw.shape[0], np.int64)
    out = np.zeros((batch, pw.shape[0]), np.int64)
    for b in range(batch):
        for r in range(pw.shape[0]):
            a = q.wrap32(int(bias[r]) + sum((int(hidden[b, k]) + hzp) * int(pw[r, k]) for k in range(units)))
            out[b, r] = min(max(q.multiply_by_quantized_multiplier(a, pm, ps) + info[18][1], -128), 127)
    qpc = int(min(max(float(f32(f32(sc[25]) / f32(info[16][0]))), -128.0), 127.0)) if sc[25] > 0 else 0
    if qpc > 0:
        out = np.clip(out, -qpc, qpc)
    return out, c_out


def _qlstm_case(rng, cifg: bool, peephole: bool, layer_norm: bool, projection: bool, cell_shift: int):
    batch, n_in, units = 2, 3, 4
    n_out = 3 if projection else units
    ins: dict = dict.fromkeys(range(24))
    info: dict = {}
    ins[0], info[0] = rng.integers(-128, 128, (batch, n_in)), (0.02, 3)
    for k in range(4):
        if k == 0 and cifg:
            continue
        ins[1 + k], info[1 + k] = rng.integers(-127, 128, (units, n_in)), (0.01 + 0.002 * k, 0)
        ins[5 + k], info[5 + k] = rng.integers(-127, 128, (units, n_out)), (0.008 + 0.001 * k, 0)
        ins[12 + k], info[12 + k] = rng.integers(-20000, 20000, units), (0.0, 0)
        if layer_norm:
            ins[20 + k], info[20 + k] = rng.integers(5000, 30000, units), (2.0**-14 * (1 + k / 8), 0)
        if peephole and k != 2:
            p = (9, 10, None, 11)[k]
            ins[p], info[p] = rng.integers(-300, 300, units), (0.05, 0)
    if projection:
        ins[16], info[16] = rng.integers(-127, 128, (n_out, units)), (0.004, 0)
        ins[17], info[17] = rng.integers(-500, 500, n_out), (0.0, 0)
    ins[18], info[18] = rng.integers(-128, 128, (batch, n_out)), (0.015, -2)
    ins[19], info[19] = rng.integers(-20000, 20000, (batch, units)), (2.0**cell_shift, 0)
    sc = {24: 4.0, 25: 0.1, 26: 0.004, 27: 0.005, 28: 0.006, 29: 0.007, 30: 5, 31: 0.01}
    return ins, info, sc


_TYPES = {0: S8, **dict.fromkeys((*range(1, 9), 16), W8), **dict.fromkeys((9, 10, 11, 19, 20, 21, 22, 23), S16),
          **dict.fromkeys((12, 13, 14, 15, 17), I32), 18: S8}  # fmt: skip
_DTYPES = {S8: np.int8, W8: np.int8, S16: np.int16, I32: np.int32}


def run_qlstm(ins: dict, info: dict, sc: dict) -> tuple[np.ndarray, np.ndarray]:
    """QUANTIZED_LSTM through the public API; every present tensor a model input."""
    m = nnc.Model()
    for i in range(24):
        t = _TYPES[i]
        dims = list(ins[i].shape) if ins[i] is not None else [0]
        m.add_operand(t, dims, *(info.get(i, (0.0 if t == I32 else 1.0, 0))))
        if ins[i] is None:
            m.set_operand_value(i, None)
    for i in range(24, 32):
        t = T.INT32 if i == 30 else T.FLOAT32
        m.add_operand(t)
        m.set_operand_value(i, np.array(sc[i], _DTYPES[I32] if i == 30 else np.float32))
    h, c = ins[18], ins[19]
    outs = [m.add_operand(S8, list(h.shape), *info[18]), m.add_operand(S16, list(c.shape), *info[19]),
            m.add_operand(S8, list(h.shape), *info[18])]  # fmt: skip
    m.add_operation(Op.QUANTIZED_LSTM, list(range(32)), outs)
    present = [i for i in range(24) if ins[i] is not None]
    m.identify_inputs_and_outputs(present, outs)
    m.finish()
    h_out, c_out, out = nnc.compile(m).run(*[np.asarray(ins[i], _DTYPES[_TYPES[i]]) for i in present])
    assert (h_out == out).all()
    return out, c_out


@pytest.mark.parametrize(
    "cifg, peephole, layer_norm, projection, cell_shift",
    [(False, True, False, False, -12), (True, True, True, True, -11)],
    ids=["peephole-no-layer-norm-cell-2^-12", "cifg-peephole-layer-norm-projection-cell-2^-11"],
)
def test_quantized_lstm_matches_transcription(cifg, peephole, layer_norm, projection, cell_shift):
    """Clips, a nonzero hidden zero point, peepholes, other cell scales (tanh
    with 3 or 4 integer bits) and, without layer norm, gate biases ignored
    (as in Android)."""
    ins, info, sc = _qlstm_case(np.random.default_rng(5), cifg, peephole, layer_norm, projection, cell_shift)
    out, c_out = run_qlstm(ins, info, sc)
    want_out, want_c = ref_qlstm(ins, info, sc)
    assert c_out.tolist() == want_c.tolist()
    assert out.tolist() == want_out.tolist()


# -- QUANTIZED_16BIT_LSTM with another shape than the corpus's --------------------------------


def ref_quantized_16bit_lstm(ins: list[np.ndarray], w_zp: int, m: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """quantizedLstmStep<4> as Android calls it: row [input, prev output]
    against weight rows [recurrent, input] (concatenateWeights)."""
    x, c, h = ins[0], ins[13], ins[14]
    row = np.concatenate([x, h], axis=1).astype(np.int64) - 128
    gates = []
    for g in range(4):
        w = np.concatenate([ins[5 + g], ins[1 + g]], axis=1).astype(np.int64) - w_zp
        acc = [[q.multiply_by_quantized_multiplier(q.wrap32(int(ins[9 + g][u]) + int(row[b] @ w[u])), m, s)
                for u in range(w.shape[0])] for b in range(row.shape[0])]  # fmt: skip
        gates.append(np.clip(np.array(acc, np.int64), _MIN, _MAX))
    i, f, cg, o = ref_logistic(gates[0], 3), ref_logistic(gates[1], 3), ref_tanh(gates[2], 3), ref_logistic(gates[3], 3)
    new = np.clip(_srmpot(_srdhm(i, cg), -4) + _srdhm(f, c.astype(np.int64)), _MIN, _MAX)
    out = np.clip(_rdbpot(_srdhm(o, ref_tanh(_srmpot(new, 1), 3)), 8), -128, 127) + 128
    return new, out


def test_quantized_16bit_lstm_matches_transcription():
    """Input size 3, output size 2 (the corpus has 2 and 4), batch 2, random data."""
    rng = np.random.default_rng(3)
    batch, n_in, n_out = 2, 3, 2
    w_scale, w_zp = 0.005, 120
    u8, i32t = T.TENSOR_QUANT8_ASYMM, T.TENSOR_INT32
    specs = [(u8, (batch, n_in), 1 / 128, 128)]
    specs += [(u8, (n_out, n_in), w_scale, w_zp)] * 4 + [(u8, (n_out, n_out), w_scale, w_zp)] * 4
    specs += [(i32t, (n_out,), w_scale / 128, 0)] * 4
    specs += [(S16, (batch, n_out), 2.0**-11, 0), (u8, (batch, n_out), 1 / 128, 128)]
    ins = [rng.integers(-3000, 3000, d) if t == i32t else rng.integers(-4000, 4000, d) if t == S16
           else rng.integers(0, 256, d) for t, d, _, _ in specs]  # fmt: skip
    m = nnc.Model()
    for t, d, scale, zp in specs:
        m.add_operand(t, list(d), scale, zp)
    outs = [m.add_operand(S16, [batch, n_out], 2.0**-11, 0), m.add_operand(u8, [batch, n_out], 1 / 128, 128)]
    m.add_operation(Op.QUANTIZED_16BIT_LSTM, list(range(15)), outs)
    m.identify_inputs_and_outputs(list(range(15)), outs)
    m.finish()
    dtypes = {u8: np.uint8, i32t: np.int32, S16: np.int16}
    c_out, out = nnc.compile(m).run(*[np.asarray(v, dtypes[t]) for v, (t, *_) in zip(ins, specs)])
    mult, shift = q.quantize_multiplier(4096 * float(f32(w_scale / 128)))
    want_c, want_out = ref_quantized_16bit_lstm(ins, w_zp, mult, shift)
    assert c_out.tolist() == want_c.tolist()
    assert out.tolist() == want_out.tolist()
