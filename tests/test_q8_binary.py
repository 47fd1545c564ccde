"""The vector kernels of quantised ADD and MUL
(:mod:`nnc.passes.kernels.q8_binary`) against Android's reference
arithmetic (:func:`nnc.passes.lowering.quant.add_element` and
``mul_element`` on Python integers): every pair of 8-bit values, both
8-bit types, several scales and activations, whole and broadcast rows, and
a tensor split over the thread pool."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import driver
from nnc.enums import FuseCode
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering import quant as q

TYPES = {T.TENSOR_QUANT8_ASYMM_SIGNED: np.int8, T.TENSOR_QUANT8_ASYMM: np.uint8}
#: (scale, zero point) of input 1, input 2 and the output, by signedness
SCALES = [
    ((0.05, -3), (0.02, 7), (0.07, -1)),  # input 1 of the larger scale
    ((0.02, 5), (0.02, -9), (0.01, 0)),  # equal scales
    ((0.1, 0), (0.3, 20), (0.6, -100)),  # input 2 of the larger scale
]


def _model(op: Op, t: T, params: tuple, shape_a: list[int], shape_b: list[int], act: int) -> tuple[nnc.Model, list[int]]:
    (sa, za), (sb, zb), (so, zo) = params
    m = nnc.Model()
    a, b = m.add_operand(t, shape_a, sa, za), m.add_operand(t, shape_b, sb, zb)
    fuse = m.add_operand(T.INT32)
    m.set_operand_value(fuse, act)
    oshape = list(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    out = m.add_operand(t, oshape, so, zo)
    m.add_operation(op, [a, b, fuse], [out])
    m.identify_inputs_and_outputs([a, b], [out])
    m.finish()
    return m, oshape


def _unsigned_params(params: tuple) -> tuple:
    return tuple((s, z + 128) for s, z in params)


def _run(m: nnc.Model, oshape: list[int], dtype: type, x: np.ndarray, y: np.ndarray, threads: int = 1) -> np.ndarray:
    c = nnc.Compilation(m)
    c.finish()
    ex = nnc.Execution(c)
    ex.set_num_threads(threads)
    out = np.zeros(oshape, dtype)
    ex.set_input(0, x)
    ex.set_input(1, y)
    ex.set_output(0, out)
    ex.compute()
    return out


def _reference(op: Op, t: T, params: tuple, act: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if op == Op.ADD:
        p = q.add_params(t, *params, act)
        f = lambda u, v: q.add_element(q.PY, p, u, v)
    else:
        p = q.mul_params(t, *params, act)
        f = lambda u, v: q.mul_element(q.PY, p, u, v)
    xs, ys = np.broadcast_arrays(x, y)
    flat = [q.py_int(f(int(u), int(v))) for u, v in zip(xs.reshape(-1), ys.reshape(-1))]
    return np.array(flat).reshape(xs.shape).astype(x.dtype)


@pytest.mark.parametrize("op", [Op.ADD, Op.MUL])
@pytest.mark.parametrize("t", list(TYPES))
@pytest.mark.parametrize("k", range(len(SCALES)))
def test_every_pair_of_values(op: Op, t: T, k: int) -> None:
    """All 65,536 pairs of stored values, one row of 65,536 elements (cut
    into parallel pieces), with RELU6."""
    dtype = TYPES[t]
    params = SCALES[k] if dtype is np.int8 else _unsigned_params(SCALES[k])
    m, oshape = _model(op, t, params, [256, 256], [256, 256], FuseCode.RELU6)
    assert f"nnc_q8_{op.name.lower()}_" in driver.lower(m, driver.static_input_infos(m)).llvm_ir
    info = np.iinfo(dtype)
    x = np.repeat(np.arange(info.min, info.max + 1, dtype=dtype)[:, None], 256, axis=1)
    y = np.ascontiguousarray(x.T)
    np.testing.assert_array_equal(_run(m, oshape, dtype, x, y), _reference(op, t, params, FuseCode.RELU6, x, y))


@pytest.mark.parametrize("op", [Op.ADD, Op.MUL])
@pytest.mark.parametrize("t", list(TYPES))
@pytest.mark.parametrize("act", [FuseCode.NONE, FuseCode.RELU, FuseCode.RELU1])
def test_a_broadcast_row_and_the_row_tail(op: Op, t: T, act: int) -> None:
    """``[1, 9, 11, 37] op [1, 1, 1, 37]`` and the reverse: rows of 37, 37 mod
    lanes of them one lane at a time."""
    dtype = TYPES[t]
    params = SCALES[0] if dtype is np.int8 else _unsigned_params(SCALES[0])
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    for shape_a, shape_b in (([1, 9, 11, 37], [1, 1, 1, 37]), ([1, 1, 1, 37], [1, 9, 11, 37])):
        m, oshape = _model(op, t, params, shape_a, shape_b, act)
        assert f"nnc_q8_{op.name.lower()}_" in driver.lower(m, driver.static_input_infos(m)).llvm_ir
        x = rng.integers(info.min, info.max + 1, shape_a, dtype=dtype)
        y = rng.integers(info.min, info.max + 1, shape_b, dtype=dtype)
        np.testing.assert_array_equal(_run(m, oshape, dtype, x, y), _reference(op, t, params, act, x, y))


def test_thread_counts_and_a_remainder_piece() -> None:
    """50,700 elements: three parallel pieces and a remainder, the same at
    1, 2 and 3 threads, and the reference's."""
    t, dtype = T.TENSOR_QUANT8_ASYMM_SIGNED, np.int8
    m, oshape = _model(Op.ADD, t, SCALES[2], [1, 130, 130, 3], [1, 130, 130, 3], FuseCode.NONE)
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, oshape, dtype=dtype)
    y = rng.integers(-128, 128, oshape, dtype=dtype)
    outs = [_run(m, oshape, dtype, x, y, threads) for threads in (1, 2, 3)]
    for out in outs:
        np.testing.assert_array_equal(out, outs[0])
    np.testing.assert_array_equal(outs[0], _reference(Op.ADD, t, SCALES[2], FuseCode.NONE, x, y))


def test_other_operations_keep_the_scalar_loop() -> None:
    """A SUB (its second multiplier negated), a broadcast that is not a row
    (``[4, 8, 1]``: one value per row) and a small tensor are lowered as
    before."""
    t = T.TENSOR_QUANT8_ASYMM_SIGNED
    cases = [
        (Op.SUB, [32, 64], [32, 64]),
        (Op.ADD, [16, 8, 32], [16, 8, 1]),
        (Op.MUL, [8, 16], [8, 16]),
    ]
    for op, sa, sb in cases:
        m, _ = _model(op, t, SCALES[0], sa, sb, FuseCode.NONE)
        ir = driver.lower(m, driver.static_input_infos(m)).llvm_ir
        assert "nnc_q8_add_" not in ir and "nnc_q8_mul_" not in ir and "nnc_q8_sub" not in ir, op


# -- quantised SOFTMAX of short rows ----------------------------------------------------------------


@pytest.mark.parametrize("t", list(TYPES))
@pytest.mark.parametrize("shape", [[1, 16, 16, 4], [3, 7], [5, 2], [6, 8]])
def test_short_softmax_rows_match_the_reduction_loops(t: T, shape: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Quantised SOFTMAX along rows of at most ``SHORT_ROW`` elements is one
    loop over the rows (``normalization._softmax_q8_short_rows``): the same
    bits as the reduction loops it replaces (``SHORT_ROW`` 0), on random
    values and on rows of one repeated value and of the extremes."""
    from nnc.passes.lowering import normalization

    dtype = TYPES[t]
    info = np.iinfo(dtype)
    m = nnc.Model()
    x = m.add_operand(t, shape, 0.07, 3 if dtype is np.int8 else 131)
    beta = m.add_operand(T.FLOAT32)
    m.set_operand_value(beta, np.float32(1.3))
    out = m.add_operand(t, shape, 1 / 256, -128 if dtype is np.int8 else 0)
    m.add_operation(Op.SOFTMAX, [x, beta], [out])
    m.identify_inputs_and_outputs([x], [out])
    m.finish()
    rng = np.random.default_rng(11)
    data = rng.integers(info.min, info.max + 1, shape, dtype=dtype)
    flat = data.reshape(-1, shape[-1])
    flat[0] = info.min
    flat[1 % len(flat)] = info.max
    flat[-1, ::2] = info.min
    flat[-1, 1::2] = info.max
    lowered = driver.lower(m, driver.static_input_infos(m)).llvm_ir
    short = _run_one(m, data, dtype)
    monkeypatch.setattr(normalization, "SHORT_ROW", 0)
    driver._CACHE.clear()
    assert driver.lower(m, driver.static_input_infos(m)).llvm_ir != lowered  # the other path
    np.testing.assert_array_equal(short, _run_one(m, data, dtype))
    driver._CACHE.clear()


def _run_one(m: nnc.Model, x: np.ndarray, dtype: type) -> np.ndarray:
    c = nnc.Compilation(m)
    c.finish()
    ex = nnc.Execution(c)
    out = np.zeros(x.shape, dtype)
    ex.set_input(0, x)
    ex.set_output(0, out)
    ex.compute()
    return out
