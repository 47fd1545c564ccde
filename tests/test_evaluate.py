"""The compile-time evaluator (nnc.passes.evaluate): each operation it computes
against numpy written out here, NNAPI's integer semantics (floor division,
32-bit wrap-around, broadcasting), and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from nnc.dialects.rules import OpCall
from nnc.enums import FuseCode
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.operand_types import OperandInfo
from nnc.passes.evaluate import EVALUATORS, NotEvaluable, evaluate

I32 = np.int32


def _t(value, t: T = T.TENSOR_INT32, **kw) -> OperandInfo:
    v = np.asarray(value)
    return OperandInfo(t, tuple(v.shape), value=v, **kw)


def _fuse(code: int = FuseCode.NONE) -> OperandInfo:
    return OperandInfo(T.INT32, (), value=np.asarray(code, I32))


def _out(t: T, dims) -> OperandInfo:
    return OperandInfo(t, tuple(dims))


def _run(op: Op, *inputs: OperandInfo, out: T = T.TENSOR_INT32, dims=None) -> np.ndarray:
    shape = dims if dims is not None else np.broadcast_shapes(*(i.value.shape for i in inputs if i.type.is_tensor))
    (result,) = evaluate(OpCall(op, list(inputs), [_out(out, shape)]))
    return result


A = np.array([[7, -7, 5], [0, 2, -1]], I32)
B = np.array([2, 3, -4], I32)


@pytest.mark.parametrize(
    "op,expected",
    [
        (Op.ADD, A + B),
        (Op.SUB, A - B),
        (Op.MUL, A * B),
        (Op.DIV, np.array([[3, -3, -2], [0, 0, 0]], I32)),  # floor division, as "//"
    ],
)
def test_integer_arithmetic_broadcasts(op, expected):
    result = _run(op, _t(A), _t(B), _fuse())
    assert result.dtype == I32 and result.shape == (2, 3)
    np.testing.assert_array_equal(result, expected)


def test_int32_wraps():
    big = np.array([2**31 - 1], I32)
    np.testing.assert_array_equal(_run(Op.ADD, _t(big), _t(np.array([1], I32)), _fuse()), [-(2**31)])
    np.testing.assert_array_equal(_run(Op.MUL, _t(big), _t(np.array([2], I32)), _fuse()), [-2])


@pytest.mark.parametrize(
    "op,fn",
    [(Op.LESS, np.less), (Op.LESS_EQUAL, np.less_equal), (Op.GREATER, np.greater),
     (Op.GREATER_EQUAL, np.greater_equal), (Op.EQUAL, np.equal), (Op.NOT_EQUAL, np.not_equal)],
)  # fmt: skip
def test_comparisons_give_bool8(op, fn):
    result = _run(op, _t(A), _t(B), out=T.TENSOR_BOOL8)
    assert result.dtype == np.bool_
    np.testing.assert_array_equal(result, fn(A, B))


def test_float_comparison_and_minmax():
    x = np.float32([0.5, -1.0, 3.0])
    y = np.float32([0.5, 2.0, -3.0])
    np.testing.assert_array_equal(_run(Op.LESS, _t(x, T.TENSOR_FLOAT32), _t(y, T.TENSOR_FLOAT32), out=T.TENSOR_BOOL8),
                                  x < y)  # fmt: skip
    np.testing.assert_array_equal(_run(Op.MAXIMUM, _t(A), _t(B)), np.maximum(A, B))
    np.testing.assert_array_equal(_run(Op.MINIMUM, _t(A), _t(B)), np.minimum(A, B))


def test_logic_and_unary():
    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    b8 = T.TENSOR_BOOL8
    np.testing.assert_array_equal(_run(Op.LOGICAL_AND, _t(p, b8), _t(q, b8), out=b8), p & q)
    np.testing.assert_array_equal(_run(Op.LOGICAL_OR, _t(p, b8), _t(q, b8), out=b8), p | q)
    np.testing.assert_array_equal(_run(Op.LOGICAL_NOT, _t(p, b8), out=b8), ~p)
    np.testing.assert_array_equal(_run(Op.NEG, _t(A)), -A)
    np.testing.assert_array_equal(_run(Op.ABS, _t(A)), np.abs(A))


@pytest.mark.parametrize("code,expected", [(FuseCode.NONE, [-2.5, 0.5, 7.0]), (FuseCode.RELU, [0.0, 0.5, 7.0]),
                                           (FuseCode.RELU1, [-1.0, 0.5, 1.0]), (FuseCode.RELU6, [0.0, 0.5, 6.0])])  # fmt: skip
def test_float_activation(code, expected):
    f = T.TENSOR_FLOAT32
    result = _run(Op.ADD, _t(np.float32([-3.0, 0.0, 6.5]), f), _t(np.float32([0.5]), f), _fuse(code), out=f)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.float32(expected))


def _refused(op: Op, *inputs: OperandInfo, out: OperandInfo | None = None) -> str:
    with pytest.raises(NotEvaluable) as info:
        evaluate(OpCall(op, list(inputs), [out or _out(T.TENSOR_INT32, (1,))]))
    return str(info.value)


def test_refusals():
    one = _t(np.array([1], I32))
    assert "CONCATENATION is not evaluated" in _refused(Op.CONCATENATION, one, one, _fuse())
    assert "input 1 of ADD is not known" in _refused(Op.ADD, one, OperandInfo(T.TENSOR_INT32, (1,)), _fuse())
    assert "division by zero" in _refused(Op.DIV, one, _t(np.array([0], I32)), _fuse())
    assert "activation on an integer" in _refused(Op.ADD, one, one, _fuse(FuseCode.RELU))
    q = _t(np.array([3], np.uint8), T.TENSOR_QUANT8_ASYMM, scale=0.5, zero_point=1)
    assert "TENSOR_QUANT8_ASYMM" in _refused(Op.ADD, q, q, _fuse(), out=_out(T.TENSOR_QUANT8_ASYMM, (1,)))
    scaled = _t(np.array([3], I32), scale=0.5)
    assert "with a scale" in _refused(Op.ADD, scaled, scaled, _fuse())
    assert "declared [2]" in _refused(Op.ADD, one, one, _fuse(), out=_out(T.TENSOR_INT32, (2,)))


def test_every_evaluated_operation_is_an_nnapi_operation_with_a_rule():
    from nnc.dialects.rules import RULES

    assert set(EVALUATORS) <= set(RULES)
