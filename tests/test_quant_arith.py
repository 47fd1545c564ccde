"""Quantised integer arithmetic (passes/lowering/quant.py), in three layers:

1. the compile-time Python helpers against plain references written from the
   definitions (exact rationals: ``Fraction``), over the whole int32 range;
2. the generated code against the Python helpers: small functions built with
   the code generators, compiled and run natively on drawn inputs;
3. whole quantised models through nnc's public API against the Python
   kernels, bit for bit, and the Python kernels against float arithmetic
   (within one quantisation step).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.builder import Builder
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IntAttr, MemRefType, ModuleOp, i8, i32
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.dialects.rules import OpCall
from nnc.enums import FuseCode
from nnc.passes.lowering import LoweringContext, identity_map
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.elementwise_q8 import FLOAT_UNARY, float_unary_table
from nnc.passes.pipeline import DEFAULT_PIPELINE, run_passes, to_llvm_ir
from nnc.runtime import threadpool
from nnc.runtime.jit import NativeModule, Target, optimize

INT32_MIN, INT32_MAX = q.INT32_MIN, q.INT32_MAX
U8, S8 = T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED
HALF = Fraction(1, 2)

int32s = st.integers(INT32_MIN, INT32_MAX)
#: int32 values with the edges and powers of two well represented
edgy_int32s = st.one_of(
    int32s,
    st.sampled_from([INT32_MIN, INT32_MIN + 1, -(2**30), -1, 0, 1, 2**30, INT32_MAX - 1, INT32_MAX]),
    st.integers(0, 30).map(lambda k: 2**k),
    st.integers(0, 31).map(lambda k: -(2**k)),
    st.integers(1, 30).map(lambda k: 2**k + 2 ** (k - 1)),  # exact halves after shifts
    st.integers(1, 30).map(lambda k: -(2**k) - 2 ** (k - 1)),
)
multipliers = st.integers(2**30, INT32_MAX)  # normalised quantized multipliers

#: pure-Python properties: many examples, no per-example deadline (machines vary)
PURE = settings(deadline=None, max_examples=200)
#: properties that compile code: few examples
SLOW = settings(deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow])


# -- references from the definitions -----------------------------------------------------------


def ref_round_half_away(x: Fraction) -> int:
    n = math.floor(abs(x) + HALF)
    return n if x >= 0 else -n


def ref_srdhm(a: int, b: int) -> int:
    """ARM VQRDMULH: the high half of 2*a*b rounded to nearest, ties up; saturates."""
    if a == b == INT32_MIN:
        return INT32_MAX
    return math.floor(Fraction(a * b, 2**31) + HALF)


def ref_rdbpot(x: int, exponent: int) -> int:
    """x / 2^exponent rounded to nearest, ties away from zero."""
    return ref_round_half_away(Fraction(x, 2**exponent))


def ref_mbqm(x: int, m: int, shift: int) -> int:
    left, right = max(shift, 0), max(-shift, 0)
    return ref_rdbpot(ref_srdhm(x * 2**left, m), right)


# -- 1. Python helpers vs the definitions ----------------------------------------------------------


@PURE
@given(edgy_int32s, edgy_int32s)
def test_srdhm_matches_definition(a, b):
    assert q.saturating_rounding_doubling_high_mul(a, b) == ref_srdhm(a, b)


@PURE
@given(edgy_int32s, st.integers(0, 31))
def test_rdbpot_matches_definition(x, exponent):
    assert q.rounding_divide_by_pot(x, exponent) == ref_rdbpot(x, exponent)


@PURE
@given(edgy_int32s, st.one_of(multipliers, st.just(0)), st.integers(-31, 0))
def test_mbqm_right_shift_matches_definition(x, m, shift):
    got = q.multiply_by_quantized_multiplier(x, m, shift)
    assert got == ref_mbqm(x, m, shift)
    assert got == q.multiply_by_quantized_multiplier_smaller_than_one_exp(x, m, shift)
    # two roundings of half a unit at most
    assert abs(got - Fraction(x * m, 2 ** (31 - shift))) <= 1


@PURE
@given(st.data(), multipliers, st.integers(0, 30))
def test_mbqm_left_shift_matches_definition(data, m, shift):
    bound = 2 ** (31 - shift) - 1  # x << shift fits in int32
    x = data.draw(st.integers(-bound, bound))
    got = q.multiply_by_quantized_multiplier(x, m, shift)
    assert got == ref_mbqm(x, m, shift)
    assert got == q.multiply_by_quantized_multiplier_greater_than_one(x, m, shift)


@PURE
@given(st.floats(min_value=2**-31, max_value=2**30, allow_nan=False))
def test_quantize_multiplier_definition(d):
    m, shift = q.quantize_multiplier(d)
    assert 2**30 <= m <= INT32_MAX
    # m * 2^(shift-31) is d rounded to 31 significant bits
    assert abs(Fraction(m) * Fraction(2) ** (shift - 31) - Fraction(d)) <= Fraction(2) ** (shift - 32)
    if d < 1:
        assert q.quantize_multiplier_smaller_than_one_exp(d) == (m, shift)
        assert q.quantize_multiplier_smaller_than_one(d) == (m, -shift)
    elif d > 1:
        assert q.quantize_multiplier_greater_than_one(d) == (m, shift)


def test_quantize_multiplier_edges():
    assert q.quantize_multiplier(0.0) == (0, 0)
    assert q.quantize_multiplier(0.5) == (2**30, 0)
    assert q.quantize_multiplier(1.0) == (2**30, 1)
    # rounding up to 2^31 renormalises
    assert q.quantize_multiplier(1 - 2**-40) == (2**30, 1)
    assert q.quantize_multiplier(2**-40) == (0, 0)  # flushed
    with pytest.raises(q.QuantError):
        q.quantize_multiplier_smaller_than_one_exp(1.0)
    with pytest.raises(q.QuantError):
        q.quantize_multiplier_greater_than_one(1.0)
    assert q.calculate_input_radius(4, 27) == 15
    assert q.calculate_input_radius(4, 31) == 0


@pytest.mark.parametrize("t", [U8, S8])
@PURE
@given(scale=st.floats(1e-3, 10.0), data=st.data())
def test_activation_range(t, scale, data):
    qmin, qmax = q.QRANGE[t]
    zp = data.draw(st.integers(qmin, qmax))
    s = np.float32(scale)

    def deq(v):
        return float(s) * (v - zp)

    assert q.calculate_activation_range(t, FuseCode.NONE, scale, zp) == (qmin, qmax)
    lo, hi = q.calculate_activation_range(t, FuseCode.RELU, scale, zp)
    assert (lo, hi) == (max(qmin, zp), qmax)
    lo, hi = q.calculate_activation_range(t, FuseCode.RELU6, scale, zp)
    assert lo == max(qmin, zp) and (hi == qmax or abs(deq(hi) - 6.0) <= float(s) / 2 * 1.0001)
    lo, hi = q.calculate_activation_range(t, FuseCode.RELU1, scale, zp)
    assert lo == qmin or abs(deq(lo) + 1.0) <= float(s) / 2 * 1.0001
    assert hi == qmax or abs(deq(hi) - 1.0) <= float(s) / 2 * 1.0001


def test_fixed_point_constants_and_functions():
    # gemmlowp's documented examples
    assert q.fixed_logistic(q.PY, 0, 4) == 2**30
    assert q.fixed_tanh(q.PY, 0, 4) == 0
    assert q.exp_on_negative_values(q.PY, 0, 4) == INT32_MAX
    for raw in range(-(2**31) + 1, 2**31 - 1, 7919 * 2**10 + 1):
        x = raw / 2**27
        assert abs(q.fixed_logistic(q.PY, raw, 4) / 2**31 - 1 / (1 + math.exp(-x))) < 2e-6
        assert abs(q.fixed_tanh(q.PY, raw, 4) / 2**31 - math.tanh(x)) < 4e-6
        if raw <= 0:
            assert abs(q.exp_on_negative_values(q.PY, raw, 4) / 2**31 - math.exp(x)) < 2e-6


# -- float references of the kernels (within one step) ---------------------------------------------


def quant_params(t):
    qmin, qmax = q.QRANGE[t]
    return st.tuples(st.floats(0.004, 4.0).map(q.f32), st.integers(qmin, qmax))


def ref_clamped(real: float, out: tuple[float, int], lo: int, hi: int) -> float:
    return min(max(real / out[0] + out[1], lo), hi)


@pytest.mark.parametrize("t", [U8, S8])
@pytest.mark.parametrize("subtract", [False, True])
@PURE
@given(data=st.data(), act=st.sampled_from(list(FuseCode)))
def test_add_kernel_near_float(t, subtract, data, act):
    in1, in2, out = (data.draw(quant_params(t)) for _ in range(3))
    try:
        p = q.add_params(t, in1, in2, out, act, subtract)
    except q.QuantError:
        assume(False)
    qmin, qmax = q.QRANGE[t]
    a, b = data.draw(st.integers(qmin, qmax)), data.draw(st.integers(qmin, qmax))
    sign = -1 if subtract else 1
    real = in1[0] * (a - in1[1]) + sign * in2[0] * (b - in2[1])
    got = q.add_element(q.PY, p, a, b)
    assert p.act_min <= got <= p.act_max
    assert abs(got - ref_clamped(real, out, p.act_min, p.act_max)) <= 1


@pytest.mark.parametrize("t", [U8, S8])
@PURE
@given(data=st.data(), act=st.sampled_from(list(FuseCode)))
def test_mul_kernel_near_float(t, data, act):
    in1, in2, out = (data.draw(quant_params(t)) for _ in range(3))
    try:
        p = q.mul_params(t, in1, in2, out, act)
    except q.QuantError:
        assume(False)
    qmin, qmax = q.QRANGE[t]
    a, b = data.draw(st.integers(qmin, qmax)), data.draw(st.integers(qmin, qmax))
    real = in1[0] * (a - in1[1]) * in2[0] * (b - in2[1])
    got = q.mul_element(q.PY, p, a, b)
    assert abs(got - ref_clamped(real, out, p.act_min, p.act_max)) <= 1


@pytest.mark.parametrize("t", [U8, S8])
@pytest.mark.parametrize("op", ["logistic", "tanh"])
@settings(deadline=None, max_examples=30)
@given(data=st.data())
def test_sigmoid_kernels_near_float(t, op, data):
    """Within one step of the float function inside the input radius; outside it
    the reference saturates (uint8 strictly beyond the radius, int8 from it)."""
    scale, zp = data.draw(quant_params(t))
    p = q.sigmoid_params(scale, zp)
    out = (q.LOGISTIC_OUTPUT if op == "logistic" else q.TANH_OUTPUT)[t]
    qmin, qmax = q.QRANGE[t]
    fn = q.logistic_element if op == "logistic" else q.tanh_element
    f = (lambda x: 0.5 * (1 + math.tanh(x / 2))) if op == "logistic" else math.tanh
    radius = p.input_range_radius
    inside = (lambda c: abs(c) <= radius) if t == U8 else (lambda c: abs(c) < radius)
    for v in range(qmin, qmax + 1):
        got = fn(q.PY, t, p, v)
        if inside(v - zp):
            assert abs(got - ref_clamped(f(scale * (v - zp)), out, qmin, qmax)) <= 1
        else:
            assert got == (qmin if v < zp else qmax)


def test_sigmoid_kernels_known_values():
    # sigmoid_quant8 / tanh_quant8 of the NNAPI test specs
    p = q.sigmoid_params(0.5, 0)
    assert [q.logistic_element(q.PY, U8, p, v) for v in (0, 1, 2, 127)] == [128, 159, 187, 255]
    p = q.sigmoid_params(0.5, 128)
    assert [q.tanh_element(q.PY, U8, p, v) for v in (0, 128, 255)] == [0, 128, 255]


@pytest.mark.parametrize("t", [U8, S8])
@PURE
@given(
    x=st.one_of(st.floats(width=32, allow_nan=False), st.integers(-300, 300).map(lambda k: k / 2)),
    data=st.data(),
)
def test_quantize_value(t, x, data):
    scale, zp = data.draw(quant_params(t))
    qmin, qmax = q.QRANGE[t]
    got = q.quantize_value(x, t, scale, zp)
    with np.errstate(over="ignore"):
        v = float(np.float32(x) / np.float32(scale))
    if math.isfinite(v):
        expect = min(max(zp + ref_round_half_away(Fraction(v)), qmin), qmax)
        assert got == expect
    else:
        assert got == (qmax if v > 0 else qmin)


# -- 2. generated code vs the Python helpers --------------------------------------------------------


class NativeFn:
    """A function ``main(ins..., outs..., weights, status)`` built from a lowering
    body on plain memrefs, compiled through the rest of nnc's pipeline."""

    def __init__(self, ins: Sequence[MemRefType], outs: Sequence[MemRefType], build: Callable):
        weights, status = MemRefType(i8, [1]), MemRefType(i32, [1])
        arg_types = [*ins, *outs, weights, status]
        block = Block(arg_types=arg_types)
        builder = Builder(InsertPoint.at_end(block))

        def alloc(shape, elem):
            op = memref.AllocOp.get(elem, 64, list(shape))
            builder.insert(op)
            return op.memref

        n = len(ins)
        ctx = LoweringContext(builder, OpCall(Op.ADD, [], []), list(block.args[:n]),
                              list(block.args[n : n + len(outs)]), alloc, block.args[-1])  # fmt: skip
        build(ctx)
        builder.insert(func.ReturnOp())
        module = ModuleOp([func.FuncOp("main", (arg_types, []), Region(block))])
        module.attributes["nnc.num_inputs"] = IntAttr(len(ins))
        module.attributes["nnc.num_outputs"] = IntAttr(len(outs))
        run_passes(module, DEFAULT_PIPELINE[DEFAULT_PIPELINE.index("convert-nnapi-to-linalg") + 1 :])
        arena = module.attributes.get("nnc.arena_size")
        self.arena_size = arena.data if isinstance(arena, IntAttr) else 0
        target = Target.host()
        # The code may call the thread pool (nnc-parallelize-generics): its
        # symbols must exist before the module is loaded, as Executable
        # ensures for a model.  Without this the test crashed when it ran
        # before any other test had installed the pool.
        threadpool.install()
        self.native = NativeModule(optimize(to_llvm_ir(module), target), target)

    def __call__(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None:
        ins = (ctypes.c_void_p * len(inputs))(*[a.ctypes.data for a in inputs])
        outs = (ctypes.c_void_p * len(outputs))(*[a.ctypes.data for a in outputs])
        weights = np.zeros(64, np.uint8)
        arena = np.zeros(max(self.arena_size, 1) + 64, np.uint8)
        assert self.native.entry(ctypes.addressof(ins), ctypes.addressof(outs),
                                 weights.ctypes.data, arena.ctypes.data) == 0  # fmt: skip


N = 64


def _elementwise(fn: Callable, n_in: int, n_out: int = 1, ins_elem=i32, outs_elem=i32) -> NativeFn:
    """out_k[i] = fn(e, in_0[i], ...)[k] over N elements."""

    def build(ctx: LoweringContext) -> None:
        ctx.generic(
            (N,),
            [(b, identity_map(1)) for b in ctx.inputs],
            [(b, identity_map(1)) for b in ctx.outputs],
            lambda e, args, idx: fn(e, *args[:n_in]),
        )

    return NativeFn([MemRefType(ins_elem, [N])] * n_in, [MemRefType(outs_elem, [N])] * n_out, build)


@cache
def primitives_fn() -> NativeFn:
    """srdhm(a, b) with both operands at run time, rdbpot(a, k) for k in 0..31,
    and rounding_half_sum(a, b)."""

    def fn(e, a, b):
        ops = q.IR(e)
        return [ops.srdhm(a, b), ops.rounding_half_sum(a, b), *[ops.v(ops.rdbpot(a, k)) for k in range(32)]]

    return _elementwise(fn, 2, 34)


int32_arrays = st.lists(edgy_int32s, min_size=N, max_size=N).map(lambda v: np.array(v, np.int32))


@settings(deadline=None, max_examples=50)
@given(int32_arrays, int32_arrays)
def test_generated_primitives(a, b):
    outs = [np.zeros(N, np.int32) for _ in range(34)]
    primitives_fn()([a, b], outs)
    for i in range(N):
        x, y = int(a[i]), int(b[i])
        assert outs[0][i] == q.saturating_rounding_doubling_high_mul(x, y), (x, y)
        assert outs[1][i] == q.PY.rounding_half_sum(x, y), (x, y)
        for k in range(32):
            assert outs[2 + k][i] == q.rounding_divide_by_pot(x, k), (x, k)


@SLOW
@given(int32_arrays, st.sampled_from([INT32_MIN, -(2**30), -1, 0, 1, INT32_MAX]))
def test_generated_srdhm_constant_operand(a, k):
    """srdhm with a compile-time operand (the saturating case only for INT32_MIN)."""
    f = _elementwise(lambda e, x: [q.emit_srdhm(e, x, k)], 1)
    out = np.zeros(N, np.int32)
    f([a], [out])
    assert [int(v) for v in out] == [q.saturating_rounding_doubling_high_mul(int(x), k) for x in a]


@SLOW
@given(int32_arrays, st.one_of(multipliers, st.integers(INT32_MIN, -(2**30))), st.integers(-31, 8))
def test_generated_mbqm(a, m, shift):
    f = _elementwise(lambda e, x: [q.emit_mbqm(e, x, m, shift)], 1)
    out = np.zeros(N, np.int32)
    f([a], [out])
    assert [int(v) for v in out] == [q.multiply_by_quantized_multiplier(int(x), m, shift) for x in a]


@SLOW
@given(st.sampled_from([U8, S8]), st.sampled_from(["logistic", "tanh"]), st.data())
def test_generated_fixed_point_functions(t, op, data):
    """The inline gemmlowp logistic/tanh on every 8-bit input, exactly."""
    scale, zp = data.draw(quant_params(t))
    p = q.sigmoid_params(scale, zp)
    fn = q.logistic_element if op == "logistic" else q.tanh_element
    qmin, qmax = q.QRANGE[t]
    f = _elementwise(lambda e, x: [q.IR(e).v(fn(q.IR(e), t, p, x))], 1)
    values = np.arange(qmin, qmin + 256, dtype=np.int32)
    got = np.zeros(256, np.int32)
    for c in range(0, 256, N):
        out = np.zeros(N, np.int32)
        f([np.ascontiguousarray(values[c : c + N])], [out])
        got[c : c + N] = out
    assert [int(v) for v in got] == [fn(q.PY, t, p, int(v)) for v in values]
    assert qmin <= got.min() and got.max() <= qmax


@SLOW
@given(st.sampled_from([U8, S8, T.TENSOR_QUANT8_SYMM]), st.integers(-300, 300), st.integers(-300, 300))
def test_generated_load_store(t, lo, hi):
    """load_q extends by signedness, store_q saturates to [lo, hi] and the type."""
    unsigned = q.is_unsigned(t)
    f = _elementwise(lambda e, x: [q.store_q(e, e.add(q.load_q(e, x, t), e.i32(3)), t, lo, hi)], 1, 1, i8, i8)
    dtype = np.uint8 if unsigned else np.int8
    qmin, qmax = q.QRANGE[t]
    for c in range(0, 256, N):
        raw = np.arange(c, c + N, dtype=np.uint8).view(dtype)
        out = np.zeros(N, dtype)
        f([raw], [out])
        expect = [min(max(int(v) + 3, max(lo, qmin)), min(hi, qmax)) for v in raw]
        if max(lo, qmin) <= min(hi, qmax):
            assert [int(v) for v in out] == expect


# -- 3. whole models through the public API ----------------------------------------------------------


def run_model(op: Op, inputs: Sequence[tuple[T, np.ndarray, float, int]], out: tuple[T, float, int],
              scalars: Sequence[int] = ()) -> np.ndarray:  # fmt: skip
    m = nnc.Model()
    idx = [m.add_operand(t, list(v.shape), s, z) for t, v, s, z in inputs]
    for k in scalars:
        i = m.add_operand(T.INT32)
        m.set_operand_value(i, np.int32(k))
        idx.append(i)
    shape = np.broadcast_shapes(*[v.shape for _, v, _, _ in inputs])
    o = m.add_operand(out[0], list(shape), out[1], out[2])
    m.add_operation(op, idx, [o])
    m.identify_inputs_and_outputs(idx[: len(inputs)], [o])
    m.finish()
    comp = nnc.Compilation(m)
    comp.finish()
    ex = nnc.Execution(comp)
    for k, (_, v, _, _) in enumerate(inputs):
        ex.set_input(k, v)
    res = np.zeros(shape, dtype=nnc.model.dtype_of(out[0]))
    ex.set_output(0, res)
    ex.compute()
    return res


def q_array(t: T, data, shape) -> np.ndarray:
    qmin, qmax = q.QRANGE[t]
    n = int(np.prod(shape))
    vals = data.draw(st.lists(st.integers(qmin, qmax), min_size=n, max_size=n))
    return np.array(vals, dtype=nnc.model.dtype_of(t)).reshape(shape)


@SLOW
@given(st.sampled_from([Op.ADD, Op.SUB, Op.MUL]), st.sampled_from([U8, S8]),
       st.sampled_from(list(FuseCode)), st.data())  # fmt: skip
def test_model_binary_bit_exact(op, t, act, data):
    in1, in2, out = (data.draw(quant_params(t)) for _ in range(3))
    try:
        if op == Op.MUL:
            p = q.mul_params(t, in1, in2, out, act)
        else:
            p = q.add_params(t, in1, in2, out, act, op == Op.SUB)
    except q.QuantError:
        assume(False)
    if op == Op.MUL and t == U8:  # Android's validation
        assume(np.float32(out[0]) > np.float32(in1[0]) * np.float32(in2[0]))
    shapes = data.draw(
        st.sampled_from([((4, 8), (4, 8)), ((4, 8), (8,)), ((4, 1), (1, 8)), ((2, 1, 8), (4, 1))])
    )
    a, b = q_array(t, data, shapes[0]), q_array(t, data, shapes[1])
    got = run_model(op, [(t, a, *in1), (t, b, *in2)], (t, *out), [act])
    ab, bb = np.broadcast_arrays(a, b)
    elem = q.mul_element if op == Op.MUL else q.add_element
    expect = [elem(q.PY, p, int(x), int(y)) for x, y in zip(ab.ravel(), bb.ravel())]
    assert [int(v) for v in got.ravel()] == expect


@SLOW
@given(st.sampled_from([Op.RELU, Op.RELU1, Op.RELU6, Op.LOGISTIC, Op.TANH]),
       st.sampled_from([U8, S8]), st.data())  # fmt: skip
def test_model_unary_bit_exact(op, t, data):
    scale, zp = data.draw(quant_params(t))
    qmin, qmax = q.QRANGE[t]
    x = np.arange(qmin, qmax + 1).astype(nnc.model.dtype_of(t)).reshape(4, 64)
    if op == Op.LOGISTIC:
        out = q.LOGISTIC_OUTPUT[t]
    elif op == Op.TANH:
        out = q.TANH_OUTPUT[t]
    else:
        out = (scale, zp)
    got = run_model(op, [(t, x, scale, zp)], (t, *out))
    if op == Op.LOGISTIC:
        p = q.sigmoid_params(scale, zp)
        expect = [q.logistic_element(q.PY, t, p, int(v)) for v in x.ravel()]
    elif op == Op.TANH:
        p = q.sigmoid_params(scale, zp)
        expect = [q.tanh_element(q.PY, t, p, int(v)) for v in x.ravel()]
    else:
        code = {Op.RELU: FuseCode.RELU, Op.RELU1: FuseCode.RELU1, Op.RELU6: FuseCode.RELU6}[op]
        lo, hi = q.calculate_activation_range(t, code, scale, zp)
        expect = [min(max(int(v), lo), hi) for v in x.ravel()]
    assert [int(v) for v in got.ravel()] == expect


@SLOW
@given(st.sampled_from([U8, S8]), st.data())
def test_model_relu_requantizes_to_another_output_quantisation(t, data):
    (si, zi), (so, zo) = data.draw(quant_params(t)), data.draw(quant_params(t))
    assume((si, zi) != (so, zo))
    qmin, qmax = q.QRANGE[t]
    x = np.arange(qmin, qmax + 1).astype(nnc.model.dtype_of(t))
    got = run_model(Op.RELU, [(t, x, si, zi)], (t, so, zo))
    lo, hi = q.calculate_activation_range(t, FuseCode.RELU, so, zo)
    m, shift = q.requantize_params(si, so)
    expect = [min(max(q.requantize(q.PY, int(v), zi, zo, m, shift), lo), hi) for v in x]
    assert [int(v) for v in got] == expect
    real = np.maximum(si * (x.astype(np.float64) - zi), 0.0)
    assert np.all(np.abs(got - np.clip(real / so + zo, lo, hi)) <= 1)


@SLOW
@given(st.sampled_from([U8, S8, T.TENSOR_QUANT8_SYMM]), st.data())
def test_model_dequantize(t, data):
    scale, zp = data.draw(quant_params(t))
    if t == T.TENSOR_QUANT8_SYMM:
        zp = 0
    qmin, qmax = q.QRANGE[t]
    x = np.arange(qmin, qmax + 1).astype(nnc.model.dtype_of(t))
    got = run_model(Op.DEQUANTIZE, [(t, x, scale, zp)], (T.TENSOR_FLOAT32, 0.0, 0))
    assert [float(v) for v in got] == [q.dequantize_value(int(v), scale, zp) for v in x]


def test_model_dequantize_per_channel():
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [2, 3, 2])
    m.set_operand_symm_per_channel_quant_params(a, [0.5, 0.25, 2.0], 1)
    o = m.add_operand(T.TENSOR_FLOAT32, [2, 3, 2])
    m.add_operation(Op.DEQUANTIZE, [a], [o])
    m.identify_inputs_and_outputs([a], [o])
    m.finish()
    comp = nnc.Compilation(m)
    comp.finish()
    ex = nnc.Execution(comp)
    x = np.arange(-6, 6, dtype=np.int8).reshape(2, 3, 2) * 10
    ex.set_input(0, x)
    out = np.zeros((2, 3, 2), np.float32)
    ex.set_output(0, out)
    ex.compute()
    np.testing.assert_array_equal(out, x * np.array([0.5, 0.25, 2.0], np.float32)[None, :, None])


@SLOW
@given(st.sampled_from([U8, S8]), st.data())
def test_model_quantize(t, data):
    scale, zp = data.draw(quant_params(t))
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30]
    halves = [(k + 0.5) * scale for k in range(-20, 20)]
    rnd = data.draw(st.lists(st.floats(width=32, allow_nan=False, min_value=-1e3, max_value=1e3),
                             min_size=17, max_size=17))  # fmt: skip
    x = np.array(special + halves + rnd, np.float32)
    got = run_model(Op.QUANTIZE, [(T.TENSOR_FLOAT32, x, 0.0, 0)], (t, scale, zp))
    assert [int(v) for v in got] == [q.quantize_value(float(v), t, scale, zp) for v in x]


# -- quantised RSQRT (feature level 7): Android's makeQuantized, per element ------------------


def _rsqrt_reference(v: int, t: T, in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> int:
    """Elementwise.cpp's makeQuantized(1.f / std::sqrt) for one stored value,
    written with Python floats rounded to float32 at each C++ float operation."""
    lo, hi = q.QRANGE[t]
    real = q.f32((v - in_zp) * q.f32(in_scale))
    if real < 0 or math.isnan(real):
        return hi  # NaN: std::min(hi, NaN) is hi
    y = math.inf if real == 0 else q.f32(1.0 / q.f32(math.sqrt(real)))
    y = q.f32(y / q.f32(out_scale))
    if math.isinf(y):
        return hi
    return int(min(max(out_zp + q.round_half_away(y), lo), hi))


@pytest.mark.parametrize("t", [T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED])
@pytest.mark.parametrize("params", [(0.25, 0, 0.25, 0), (0.125, 10, 0.01, 75), (0.5, -3, 0.003, -100)])
def test_rsqrt_table_matches_reference(t: T, params: tuple[float, int, float, int]) -> None:
    in_scale, in_zp, out_scale, out_zp = params
    lo, hi = q.QRANGE[t]
    in_zp, out_zp = min(max(in_zp, lo), hi), min(max(out_zp, lo), hi)
    table = float_unary_table(FLOAT_UNARY[Op.RSQRT], t, in_scale, in_zp, out_scale, out_zp)
    for v in range(lo, hi + 1):
        got = int(table[v & 0xFF]) & 0xFF
        want = _rsqrt_reference(v, t, in_scale, in_zp, out_scale, out_zp) & 0xFF
        assert got == want, (v, got, want)
