"""Element-wise operations where the conformance corpus does not cover them
(SQRT) or covers them only partly: CAST's saturation and truncation, int32
ABS and NEG at INT32_MIN, quantised MAXIMUM with differing scales, logical
operations on any non-zero byte.  Expected values come from numpy or, for
the quantised cases, from Android's reference formula written out in Python.
"""

from __future__ import annotations

import numpy as np

from nnc import OperandType as T
from nnc import OperationType as Op
from test_data_movement_numpy import F, run_one


def test_sqrt() -> None:
    x = np.array([0.0, 0.25, 2.0, 1e6], np.float32)
    y = run_one(Op.SQRT, [(F, x, {})], [], F, [4])
    np.testing.assert_allclose(y, np.sqrt(x), rtol=1e-7)


def test_cast_float_to_quant8_saturates_and_truncates() -> None:
    x = np.array([-3.5, 0.9, 1.9, 254.99, 300.0], np.float32)
    y = run_one(Op.CAST, [(F, x, {})], [], T.TENSOR_QUANT8_ASYMM, [5], {"scale": 1.0, "zero_point": 0})
    np.testing.assert_array_equal(y, np.array([0, 0, 1, 254, 255], np.uint8))


def test_cast_float_to_int32_truncates_toward_zero() -> None:
    x = np.array([-2.7, -0.5, 0.5, 2.7], np.float32)
    y = run_one(Op.CAST, [(F, x, {})], [], T.TENSOR_INT32, [4])
    np.testing.assert_array_equal(y, np.array([-2, 0, 0, 2], np.int32))


def test_abs_and_neg_int32_wrap_at_int32_min() -> None:
    x = np.array([-(2**31), -5, 0, 7], np.int32)
    np.testing.assert_array_equal(run_one(Op.ABS, [(T.TENSOR_INT32, x, {})], [], T.TENSOR_INT32, [4]),
                                  np.array([-(2**31), 5, 0, 7], np.int32))
    np.testing.assert_array_equal(run_one(Op.NEG, [(T.TENSOR_INT32, x, {})], [], T.TENSOR_INT32, [4]),
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
    y = run_one(Op.MAXIMUM, [(T.TENSOR_QUANT8_ASYMM, a, {"scale": qa[0], "zero_point": qa[1]}),
                          (T.TENSOR_QUANT8_ASYMM, b, {"scale": qb[0], "zero_point": qb[1]})],
             [], T.TENSOR_QUANT8_ASYMM, [5], {"scale": qo[0], "zero_point": qo[1]})
    want = [max(_requantize(int(x), *qa, *qo), _requantize(int(z), *qb, *qo)) for x, z in zip(a, b)]
    np.testing.assert_array_equal(y, np.array(want, np.uint8))


def test_logical_ops_treat_any_nonzero_byte_as_true() -> None:
    a = np.array([0, 1, 1, 0], np.bool_)
    b = np.array([0, 0, 1, 1], np.bool_)
    both = [(T.TENSOR_BOOL8, a, {}), (T.TENSOR_BOOL8, b, {})]
    np.testing.assert_array_equal(run_one(Op.LOGICAL_AND, both, [], T.TENSOR_BOOL8, [4]), a & b)
    np.testing.assert_array_equal(run_one(Op.LOGICAL_OR, both, [], T.TENSOR_BOOL8, [4]), a | b)
