"""NNAPI 1.2+ operations the conformance corpus does not cover (REVERSE,
MIRROR_PAD, PACK, SQRT) or covers only partly (CAST saturation, int32 ABS at
INT32_MIN, quantised MAXIMUM with differing scales, the shape rules).

Expected values come from numpy (np.flip, np.pad, np.stack, np.sqrt) or, for
the quantised cases, from Android's reference formula written out in Python.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op


def _run(op: Op, ins: list[tuple[T, np.ndarray | None, dict]], params: list[tuple[T, object]],
         out_type: T, out_dims: list[int], out_quant: dict | None = None, params_first: bool = False):
    """Build a one-operation model: tensor inputs ``ins`` (value None = a model
    input fed with the array), constant ``params``; return the output."""
    m = nnc.Model()
    tensor_ids, feeds = [], []
    for t, arr, quant in ins:
        i = m.add_operand(t, list(arr.shape), **quant)
        tensor_ids.append(i)
        feeds.append(arr)
    param_ids = []
    for t, v in params:
        if t.is_tensor:
            v = np.asarray(v, np.int32)
            i = m.add_operand(t, list(v.shape))
        else:
            i = m.add_operand(t)
        m.set_operand_value(i, v)
        param_ids.append(i)
    out = m.add_operand(out_type, out_dims, **(out_quant or {}))
    m.add_operation(op, param_ids + tensor_ids if params_first else tensor_ids + param_ids, [out])
    m.identify_inputs_and_outputs(tensor_ids, [out])
    m.finish()
    [y] = nnc.compile(m).run(*feeds)
    return y


F = T.TENSOR_FLOAT32
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 5.5


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_reverse(axis: int) -> None:
    y = _run(Op.REVERSE, [(F, X, {})], [(T.TENSOR_INT32, [axis])], F, [2, 3, 4])
    np.testing.assert_array_equal(y, np.flip(X, axis))


def test_reverse_quant8_keeps_bytes() -> None:
    x = np.array([[0, 7, 255], [128, 1, 2]], np.uint8)
    q = {"scale": 0.5, "zero_point": 3}
    y = _run(Op.REVERSE, [(T.TENSOR_QUANT8_ASYMM, x, q)], [(T.TENSOR_INT32, [1])],
             T.TENSOR_QUANT8_ASYMM, [2, 3], q)
    np.testing.assert_array_equal(y, x[:, ::-1])


@pytest.mark.parametrize("mode,np_mode", [(0, "reflect"), (1, "symmetric")])
def test_mirror_pad(mode: int, np_mode: str) -> None:
    pads = [[1, 0], [2, 2], [0, 3]]
    want = np.pad(X, pads, mode=np_mode)
    y = _run(Op.MIRROR_PAD, [(F, X, {})], [(T.TENSOR_INT32, pads), (T.INT32, mode)], F, list(want.shape))
    np.testing.assert_array_equal(y, want)


def test_mirror_pad_reflect_too_wide_is_bad_data() -> None:
    with pytest.raises(nnc.BadDataError):
        _run(Op.MIRROR_PAD, [(F, X, {})], [(T.TENSOR_INT32, [[0, 0], [3, 0], [0, 0]]), (T.INT32, 0)],
             F, [2, 6, 4])


@pytest.mark.parametrize("axis", [0, 1, 3, -1])
def test_pack(axis: int) -> None:
    a, b = X, -X * 2
    want = np.stack([a, b], axis=axis)
    m = nnc.Model()
    ia, ib = m.add_operand(F, [2, 3, 4]), m.add_operand(F, [2, 3, 4])
    ax = m.add_operand(T.INT32)
    m.set_operand_value(ax, axis)
    out = m.add_operand(F, list(want.shape))
    m.add_operation(Op.PACK, [ax, ia, ib], [out])
    m.identify_inputs_and_outputs([ia, ib], [out])
    m.finish()
    [y] = nnc.compile(m).run(a, b)
    np.testing.assert_array_equal(y, want)


def test_sqrt() -> None:
    x = np.array([0.0, 0.25, 2.0, 1e6], np.float32)
    y = _run(Op.SQRT, [(F, x, {})], [], F, [4])
    np.testing.assert_allclose(y, np.sqrt(x), rtol=1e-7)


def test_cast_float_to_quant8_saturates_and_truncates() -> None:
    x = np.array([-3.5, 0.9, 1.9, 254.99, 300.0], np.float32)
    y = _run(Op.CAST, [(F, x, {})], [], T.TENSOR_QUANT8_ASYMM, [5], {"scale": 1.0, "zero_point": 0})
    np.testing.assert_array_equal(y, np.array([0, 0, 1, 254, 255], np.uint8))


def test_cast_float_to_int32_truncates_toward_zero() -> None:
    x = np.array([-2.7, -0.5, 0.5, 2.7], np.float32)
    y = _run(Op.CAST, [(F, x, {})], [], T.TENSOR_INT32, [4])
    np.testing.assert_array_equal(y, np.array([-2, 0, 0, 2], np.int32))


def test_abs_and_neg_int32_wrap_at_int32_min() -> None:
    x = np.array([-(2**31), -5, 0, 7], np.int32)
    np.testing.assert_array_equal(_run(Op.ABS, [(T.TENSOR_INT32, x, {})], [], T.TENSOR_INT32, [4]),
                                  np.array([-(2**31), 5, 0, 7], np.int32))
    np.testing.assert_array_equal(_run(Op.NEG, [(T.TENSOR_INT32, x, {})], [], T.TENSOR_INT32, [4]),
                                  np.array([-(2**31), 5, 0, -7], np.int32))


def _requantize(v: int, s_old: float, zp_old: int, s_new: float, zp_new: int) -> int:
    """Android's requantize<uint8_t> (float product widened to double, std::round)."""
    d = float(np.float32(v - zp_old) * np.float32(s_old)) / float(np.float32(s_new)) + zp_new
    if d < 0:
        return 0
    if d > 255:
        return 255
    return int(np.sign(d) * np.floor(abs(d) + 0.5))


def test_maximum_quant8_requantises_both_inputs() -> None:
    a = np.array([0, 10, 100, 200, 255], np.uint8)
    b = np.array([50, 50, 50, 50, 50], np.uint8)
    qa, qb, qo = (0.5, 10), (0.25, 3), (0.3, 20)
    y = _run(Op.MAXIMUM, [(T.TENSOR_QUANT8_ASYMM, a, {"scale": qa[0], "zero_point": qa[1]}),
                          (T.TENSOR_QUANT8_ASYMM, b, {"scale": qb[0], "zero_point": qb[1]})],
             [], T.TENSOR_QUANT8_ASYMM, [5], {"scale": qo[0], "zero_point": qo[1]})
    want = [max(_requantize(int(x), *qa, *qo), _requantize(int(z), *qb, *qo)) for x, z in zip(a, b)]
    np.testing.assert_array_equal(y, np.array(want, np.uint8))


def test_logical_ops_treat_any_nonzero_byte_as_true() -> None:
    a = np.array([0, 1, 1, 0], np.bool_)
    b = np.array([0, 0, 1, 1], np.bool_)
    both = [(T.TENSOR_BOOL8, a, {}), (T.TENSOR_BOOL8, b, {})]
    np.testing.assert_array_equal(_run(Op.LOGICAL_AND, both, [], T.TENSOR_BOOL8, [4]), a & b)
    np.testing.assert_array_equal(_run(Op.LOGICAL_OR, both, [], T.TENSOR_BOOL8, [4]), a | b)


def test_split_with_wrong_output_count_is_bad_data() -> None:
    m = nnc.Model()
    x = m.add_operand(F, [4, 2])
    axis, n = m.add_operand(T.INT32), m.add_operand(T.INT32)
    m.set_operand_value(axis, 0)
    m.set_operand_value(n, 2)
    outs = [m.add_operand(F, [4, 2]) for _ in range(3)]
    with pytest.raises(nnc.BadDataError):
        m.add_operation(Op.SPLIT, [x, axis, n], outs)
