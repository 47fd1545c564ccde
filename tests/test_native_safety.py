"""Inputs that could trap or read out of bounds in native code are handled."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op


def binary_model(op: Op, t: T, n: int) -> nnc.Model:
    m = nnc.Model()
    a = m.add_operand(t, [n])
    b = m.add_operand(t, [n])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(t, [n])
    m.add_operation(op, [a, b, act], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    m.finish()
    return m


def test_int32_division_never_traps():
    imin, imax = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    a = np.array([7, -7, 5, imin, imin, 0, imax, -5], np.int32)
    b = np.array([0, 2, -2, -1, 1, 0, -1, 2], np.int32)
    [y] = nnc.compile(binary_model(Op.DIV, T.TENSOR_INT32, len(a))).run(a, b)
    expected = [0, -4, -3, imin, imin, 0, -imax, -3]  # floor division, x // 0 = 0
    assert y.tolist() == expected


def embedding_model() -> nnc.Model:
    m = nnc.Model()
    lookups = m.add_operand(T.TENSOR_INT32, [3])
    values = m.add_operand(T.TENSOR_FLOAT32, [4, 2])
    out = m.add_operand(T.TENSOR_FLOAT32, [3, 2])
    m.add_operation(Op.EMBEDDING_LOOKUP, [lookups, values], [out])
    m.identify_inputs_and_outputs([lookups, values], [out])
    m.finish()
    return m


@pytest.mark.parametrize("bad", [-1, 4, 2**31 - 1, -(2**31)])
def test_embedding_lookup_index_out_of_range_is_an_error(bad):
    compiled = nnc.compile(embedding_model())
    values = np.arange(8, dtype=np.float32).reshape(4, 2)
    [ok] = compiled.run(np.array([3, 0, 1], np.int32), values)
    assert ok.tolist() == [[6, 7], [0, 1], [2, 3]]
    with pytest.raises(nnc.OpFailedError, match=r"operation 0 \(EMBEDDING_LOOKUP\)"):
        compiled.run(np.array([0, bad, 1], np.int32), values)


def test_outputs_may_not_alias_inputs():
    c = nnc.Compilation(binary_model(Op.ADD, T.TENSOR_FLOAT32, 4))
    c.finish()
    ex = nnc.Execution(c)
    x = np.ones(4, np.float32)
    ex.set_input(0, x)
    ex.set_input(1, x)
    ex.set_output(0, x)
    with pytest.raises(nnc.BadDataError, match="overlaps input"):
        ex.compute()


def test_constant_embedding_lookup_out_of_range_fails_when_added():
    """Signatures (including constant indices) are checked at addOperation (C58)."""
    m = nnc.Model()
    lookups = m.add_operand(T.TENSOR_INT32, [2])
    m.set_operand_value(lookups, np.array([0, 7], np.int32))
    values = m.add_operand(T.TENSOR_FLOAT32, [4, 2])
    out = m.add_operand(T.TENSOR_FLOAT32, [2, 2])
    with pytest.raises(nnc.BadDataError, match=r"EMBEDDING_LOOKUP.*lookup value 7") as info:
        m.add_operation(Op.EMBEDDING_LOOKUP, [lookups, values], [out])
    assert info.value.function == "ANeuralNetworksModel_addOperation"
