"""TENSOR_FLOAT16 and FLOAT16: stored as IEEE half, computed by the float32
lowerings (passes/lowering/float16.py).

Expected values come from numpy: the float32 result of the float16 inputs,
rounded once to float16, within the CTS's float16 tolerance (5 * 2**-10
absolute and relative, as tests/cts.py checks the corpus).  The corpus
covers most operations in float16; these cases pin what it covers thinly:
FLOAT16 scalar parameters, float16 weights laid out at compile time, float16
beside other types (CAST, DEQUANTIZE, comparisons, SELECT) and an IF whose
branches compute in float16.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnc
import nnc.operand_types
from nnc import OperandType as T
from nnc import OperationType as Op

H, F, I32, B8 = T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_BOOL8
TOL = 5 * 2**-10
RNG = np.random.default_rng(16)


def half(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float16)


def close(got: np.ndarray, want: np.ndarray) -> None:
    """float16 output within the CTS's float16 tolerance of ``want``."""
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), atol=TOL, rtol=TOL)


def run(op: Op, inputs: list[tuple[T, np.ndarray]], params: list[tuple[T, object]], out_type: T,
        out_dims: list[int], constants: list[tuple[T, np.ndarray]] = (), out_quant: dict | None = None,
        in_quant: dict | None = None) -> np.ndarray:
    """One operation: model inputs ``inputs`` (fed with their arrays), then
    constant tensors ``constants``, then constant scalars ``params``."""
    m = nnc.Model()
    ids, feeds = [], []
    for t, arr in inputs:
        ids.append(m.add_operand(t, list(arr.shape), **(in_quant or {})))
        feeds.append(arr)
    const_ids = []
    for t, arr in constants:
        k = m.add_operand(t, list(arr.shape))
        m.set_operand_value(k, arr)
        const_ids.append(k)
    param_ids = []
    for t, v in params:
        k = m.add_operand(t)
        m.set_operand_value(k, v)
        param_ids.append(k)
    out = m.add_operand(out_type, out_dims, **(out_quant or {}))
    m.add_operation(op, ids + const_ids + param_ids, [out])
    m.identify_inputs_and_outputs(ids, [out])
    m.finish()
    [y] = nnc.compile(m).run(*feeds)
    return y


def f32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


def test_add_broadcast_with_relu6() -> None:
    a, b = half(2, 3, 4), half(3, 1)
    y = run(Op.ADD, [(H, a), (H, b)], [(T.INT32, 3)], H, [2, 3, 4])
    close(y, np.clip(f32(a) + f32(b), 0, 6).astype(np.float16))


def test_conv_2d_with_constant_float16_weights() -> None:
    """The filter and bias are float16 constants: widened at compile time,
    so the float32 GEMM kernel packs them as it packs float32 weights."""
    x, w, bias = half(1, 5, 5, 3), half(4, 3, 3, 3, lo=-0.5, hi=0.5), half(4)
    y = run(Op.CONV_2D, [(H, x)], [(T.INT32, 1), (T.INT32, 1), (T.INT32, 1), (T.INT32, 0)], H, [1, 5, 5, 4],
            constants=[(H, w), (H, bias)])  # fmt: skip
    xp = np.pad(f32(x), [(0, 0), (1, 1), (1, 1), (0, 0)])
    want = np.zeros((1, 5, 5, 4), np.float32)
    for i in range(5):
        for j in range(5):
            want[0, i, j] = np.einsum("hwc,ohwc->o", xp[0, i : i + 3, j : j + 3], f32(w)) + f32(bias)
    close(y, want.astype(np.float16))


def test_softmax_float16_beta() -> None:
    x = half(2, 5)
    beta = np.float16(0.75)
    y = run(Op.SOFTMAX, [(H, x)], [(T.FLOAT16, beta)], H, [2, 5])
    z = f32(x) * np.float32(beta)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    close(y, e / e.sum(axis=1, keepdims=True))


def test_elu_float16_alpha() -> None:
    x = half(3, 4)
    y = run(Op.ELU, [(H, x)], [(T.FLOAT16, np.float16(0.5))], H, [3, 4])
    close(y, np.where(x > 0, f32(x), 0.5 * np.expm1(f32(x))))


def test_pad_v2_float16_pad_value() -> None:
    x = half(2, 3)
    pads = np.array([[1, 0], [0, 2]], np.int32)
    y = run(Op.PAD_V2, [(H, x)], [(T.FLOAT16, np.float16(-1.5))], H, [3, 5], constants=[(I32, pads)])
    np.testing.assert_array_equal(y, np.pad(x, pads, constant_values=np.float16(-1.5)))


def test_instance_normalization_float16_parameters() -> None:
    x = half(1, 2, 2, 3)
    gamma, beta, eps = np.float16(1.5), np.float16(0.25), np.float16(0.01)
    y = run(Op.INSTANCE_NORMALIZATION, [(H, x)],
            [(T.FLOAT16, gamma), (T.FLOAT16, beta), (T.FLOAT16, eps), (T.BOOL, False)], H, [1, 2, 2, 3])  # fmt: skip
    xf = f32(x)
    mean = xf.mean(axis=(1, 2), keepdims=True)
    var = xf.var(axis=(1, 2), keepdims=True)
    close(y, (xf - mean) / np.sqrt(var + np.float32(eps)) * np.float32(gamma) + np.float32(beta))


def test_result_is_rounded_to_nearest_half() -> None:
    """The float32 result is rounded once to the nearest half (ties to even),
    not truncated: 1 + 1.5 * 2**-11 lies between two halves."""
    a = np.array([1.0, 1.0, 2048.0], np.float16)
    b = np.array([1.5 * 2**-11, 0.5 * 2**-11, 3.0], np.float16)
    y = run(Op.ADD, [(H, a), (H, b)], [(T.INT32, 0)], H, [3])
    np.testing.assert_array_equal(y, (f32(a) + f32(b)).astype(np.float16))


# -- float16 beside other types -------------------------------------------------------------------


def test_cast_float16_to_int32_and_back() -> None:
    x = np.array([-3.75, -0.5, 0.0, 2.5, 1000.0, 65504.0], np.float16)
    np.testing.assert_array_equal(run(Op.CAST, [(H, x)], [], I32, [6]), x.astype(np.float32).astype(np.int32))
    i = np.array([-70000, -3, 0, 7, 2049, 70000], np.int32)
    with np.errstate(over="ignore"):  # +-70000 round to +-inf
        want = i.astype(np.float16)
    np.testing.assert_array_equal(run(Op.CAST, [(I32, i)], [], H, [6]), want)


def test_dequantize_to_float16() -> None:
    q = np.array([0, 1, 128, 200, 255], np.uint8)
    y = run(Op.DEQUANTIZE, [(T.TENSOR_QUANT8_ASYMM, q)], [], H, [5], in_quant={"scale": 0.1, "zero_point": 128})
    close(y, (np.float32(0.1) * (q.astype(np.float32) - 128)).astype(np.float16))


def test_quantize_from_float16() -> None:
    x = half(6, lo=-1, hi=1)
    y = run(Op.QUANTIZE, [(H, x)], [], T.TENSOR_QUANT8_ASYMM, [6], out_quant={"scale": 0.01, "zero_point": 100})
    want = np.clip(np.round(f32(x) / np.float32(0.01)) + 100, 0, 255)
    assert np.abs(y.astype(np.int32) - want).max() <= 1


def test_comparison_and_select() -> None:
    a, b = half(7), half(7)
    b[0] = a[0]
    got = run(Op.GREATER_EQUAL, [(H, a), (H, b)], [], B8, [7])
    np.testing.assert_array_equal(got, a >= b)
    m = nnc.Model()
    c, x, y = m.add_operand(B8, [7]), m.add_operand(H, [7]), m.add_operand(H, [7])
    o = m.add_operand(H, [7])
    m.add_operation(Op.SELECT, [c, x, y], [o])
    m.identify_inputs_and_outputs([c, x, y], [o])
    m.finish()
    [sel] = nnc.compile(m).run(a >= b, a, b)
    np.testing.assert_array_equal(sel, np.where(a >= b, a, b))


# -- control flow ---------------------------------------------------------------------------------


def _branch(op: Op, c: float) -> nnc.Model:
    """x -> x (op) c, in float16."""
    m = nnc.Model()
    x = m.add_operand(H, [3])
    k = m.add_operand(H, [1])
    act = m.add_operand(T.INT32)
    y = m.add_operand(H, [3])
    m.set_operand_value(k, np.array([c], np.float16))
    m.set_operand_value(act, 0)
    m.add_operation(op, [x, k, act], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m


@pytest.fixture(scope="module")
def if_float16() -> nnc.Compilation:
    m = nnc.Model()
    cond = m.add_operand(B8, [1])
    x = m.add_operand(H, [3])
    then, other = m.add_operand(T.MODEL), m.add_operand(T.MODEL)
    y = m.add_operand(H, [3])
    m.set_operand_value_from_model(then, _branch(Op.ADD, 0.5))
    m.set_operand_value_from_model(other, _branch(Op.MUL, -3.0))
    m.add_operation(Op.IF, [cond, then, other, x], [y])
    m.identify_inputs_and_outputs([cond, x], [y])
    m.finish()
    return nnc.compile(m)


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_float16_branches(if_float16, cond: bool) -> None:
    x = np.array([1.0, -2.25, 1000.0], np.float16)
    [y] = if_float16.run(np.array([cond]), x)
    close(y, f32(x) + 0.5 if cond else f32(x) * -3.0)


# -- binding ----------------------------------------------------------------------------------------


def test_execution_takes_only_float16_arrays() -> None:
    """A float16 operand is bound to np.float16 arrays (2 bytes per element):
    float32 data of the same shape is refused before native code runs."""
    m = nnc.Model()
    x, y = m.add_operand(H, [4]), m.add_operand(H, [4])
    m.add_operation(Op.ABS, [x], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    comp = nnc.Compilation(m)
    comp.finish()
    ex = nnc.Execution(comp)
    with pytest.raises(nnc.NNError):
        ex.set_input(0, np.zeros(4, np.float32))
    ex.set_input(0, np.array([-1.5, 2.0, -0.0, -65504.0], np.float16))
    out = np.zeros(4, np.float16)
    ex.set_output(0, out)
    ex.compute()
    np.testing.assert_array_equal(out, np.array([1.5, 2.0, 0.0, 65504.0], np.float16))


# -- conversions without F16C ---------------------------------------------------------------------


def _cast_for_cpu(cpu: str, src: T, dst: T, x: np.ndarray) -> np.ndarray:
    from nnc.driver import compile_model
    from nnc.runtime.jit import Target

    m = nnc.Model()
    a, o = m.add_operand(src, list(x.shape)), m.add_operand(dst, list(x.shape))
    m.add_operation(Op.CAST, [a], [o])
    m.identify_inputs_and_outputs([a], [o])
    m.finish()
    exe = compile_model(m, [nnc.operand_types.OperandInfo(src, x.shape)], Target.for_cpu(cpu))
    out = np.zeros(x.shape, np.float16 if dst == H else np.float32)
    exe.run([x], [out])
    return out


def test_integer_conversions_without_f16c_are_exact() -> None:
    """For a CPU without F16C (x86-64) the lowering converts with integer
    arithmetic instead of calling compiler-rt: every half widens exactly, and
    float32 values (halfway cases, subnormals, overflow, infinities) round to
    nearest even as numpy does."""
    every_half = np.arange(2**16, dtype=np.uint16).view(np.float16)
    wide = _cast_for_cpu("x86-64", H, F, every_half)
    finite = ~np.isnan(every_half)
    np.testing.assert_array_equal(wide[finite].view(np.uint32), every_half[finite].astype(np.float32).view(np.uint32))
    assert np.isnan(wide[~finite]).all()
    ulp = np.float32(2**-11)
    x = np.concatenate([
        RNG.normal(scale=100, size=4000).astype(np.float32),
        np.float32(1) + ulp * np.arange(-8, 9, dtype=np.float32) / 2,  # ties at 1 +- half ulps
        np.float32(2**-24) * np.arange(0, 9, dtype=np.float32) / 4,  # around the smallest subnormal
        np.array([65504, 65519.99, 65520, 1e6, -1e6, np.inf, -np.inf, -0.0, 6.1e-5, 6.104e-5], np.float32),
    ]).astype(np.float32)  # fmt: skip
    with np.errstate(over="ignore"):  # numpy warns where the rounding overflows to infinity
        want = x.astype(np.float16)
    np.testing.assert_array_equal(_cast_for_cpu("x86-64", F, H, x).view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("seed,nchw,filter_as_input", [(1, False, False), (4, True, True)])
def test_grouped_conv_2d_float16(seed: int, nchw: bool, filter_as_input: bool) -> None:
    """GROUPED_CONV_2D (no float16 model in the corpus) through the same
    float32 lowering, against test_grouped_conv_2d's numpy reference."""
    from test_grouped_conv_2d import _build, _case, _grouped_sums

    rng, p = _case(seed, F, False)
    G, cig, cog = p["groups"], p["cig"], p["cog"]
    x = rng.uniform(-1, 1, (p["n"], p["h"], p["w"], G * cig)).astype(np.float16)
    w = rng.uniform(-1, 1, (G * cog, p["fh"], p["fw"], cig)).astype(np.float16)
    b = rng.uniform(-1, 1, G * cog).astype(np.float16)
    y = _build(p, x, w, b, H, H, {}, {}, {}, {}, nchw, filter_as_input)
    want = _grouped_sums(f32(x).astype(np.float64), f32(w).astype(np.float64), p["pads"], (p["sw"], p["sh"]), G)
    lo, hi = {0: (-np.inf, np.inf), 1: (0, np.inf), 2: (-1, 1), 3: (0, 6)}[p["act"]]
    close(y, np.clip(want + f32(b), lo, hi))


@pytest.mark.parametrize("kind", [1, 2, 3])  # sparse (deprecated), dense, sparse
@pytest.mark.parametrize("weighted", [False, True])
def test_lsh_projection_hashes_float16_input_bytes(kind: int, weighted: bool) -> None:
    """LSH_PROJECTION hashes each input row's bytes (Android's runningSignBit
    copies them into the key), so a float16 input [3, 4] must give exactly the
    signatures of a TENSOR_INT32 input [3, 2] holding the same bytes: the
    float16 input is not widened (lowering/float16.py RAW_INPUTS); a float32
    view of the bytes [3, 2] agrees too."""
    x = half(3, 4, lo=-100.0, hi=100.0)
    hashes = RNG.uniform(-1.0, 1.0, size=(4, 3)).astype(np.float32)
    weights = [(F, np.array([0.5, -1.25, 2.0], np.float32))] if weighted else []

    def lsh(t: T, data: np.ndarray) -> np.ndarray:
        m = nnc.Model()
        h = m.add_operand(F, [4, 3])
        m.set_operand_value(h, hashes)
        inp = m.add_operand(t, list(data.shape))
        w = m.add_operand(F, [3])
        if weighted:
            m.set_operand_value(w, weights[0][1])
        else:
            m.set_operand_value(w, None)
        k = m.add_operand(T.INT32)
        m.set_operand_value(k, kind)
        out = m.add_operand(I32, [4 * 3 if kind == 2 else 4])
        m.add_operation(Op.LSH_PROJECTION, [h, inp, w, k], [out])
        m.identify_inputs_and_outputs([inp], [out])
        m.finish()
        return nnc.compile(m).run(data)[0]

    got = lsh(H, x)
    np.testing.assert_array_equal(got, lsh(I32, x.view(np.int32)))
    np.testing.assert_array_equal(got, lsh(F, x.view(np.float32)))
