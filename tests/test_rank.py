"""RANK: the input's rank as an INT32 scalar, returned as a model output (a
rank-0 buffer) and read inside the model as a compile-time constant (FILL's
value here), for operand types the corpus does not cover."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

CASES = [
    (T.TENSOR_BOOL8, np.zeros((2, 1, 3, 1), np.bool_), {}),
    (T.TENSOR_QUANT16_SYMM, np.zeros((5,), np.int16), {"scale": 0.5}),
    (T.TENSOR_QUANT8_SYMM, np.zeros((1, 2, 3), np.int8), {"scale": 0.25}),
]


@pytest.mark.parametrize("t,x,quant", CASES, ids=[c[0].name for c in CASES])
def test_rank_output(t: T, x: np.ndarray, quant: dict) -> None:
    m = nnc.Model()
    a = m.add_operand(t, list(x.shape), **quant)
    r = m.add_operand(T.INT32)
    m.add_operation(Op.RANK, [a], [r])
    m.identify_inputs_and_outputs([a], [r])
    m.finish()
    comp = nnc.Compilation(m)
    comp.finish()
    ex = nnc.Execution(comp)
    out = np.full((), -7, np.int32)
    ex.set_input(0, x)
    ex.set_output(0, out)
    ex.compute()
    assert int(out) == x.ndim


def test_rank_read_inside_the_model() -> None:
    """FILL(dims, RANK(x)): the scalar FILL reads is the folded rank; the
    RANK output is returned too."""
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [2, 3, 4])
    r = m.add_operand(T.INT32)
    dims = m.add_operand(T.TENSOR_INT32, [2])
    m.set_operand_value(dims, np.array([2, 2], np.int32))
    f = m.add_operand(T.TENSOR_INT32, [2, 2])
    m.add_operation(Op.RANK, [x], [r])
    m.add_operation(Op.FILL, [dims, r], [f])
    m.identify_inputs_and_outputs([x], [f, r])
    m.finish()
    filled, rank = nnc.compile(m).run(np.zeros((2, 3, 4), np.float32))
    np.testing.assert_array_equal(filled, np.full((2, 2), 3, np.int32))
    assert int(rank) == 3
