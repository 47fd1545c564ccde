"""int64 TFLite tensors: NNAPI has no 64-bit integer operands, so the
importer narrows them to TENSOR_INT32 (constants when every value fits,
else refused naming the tensor)."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc.tflite import UnsupportedOperatorsError, import_tflite
from test_tflite_mapping import litert
from tflite_builder import FLOAT32, INT32, INT64, TFLiteBuilder


def _argmax_gather(indices: np.ndarray) -> bytes:
    """ARG_MAX of x [3, 5] over axis 1 (int64 output), and GATHER of x's
    rows by int64 constant ``indices``."""
    b = TFLiteBuilder()
    x = b.tensor("x", [3, 5], FLOAT32)
    axis = b.tensor("axis", [], INT32, np.array(1, np.int32))
    arg = b.tensor("arg", [3], INT64)
    b.op("ARG_MAX", [x, axis], [arg], ("ArgMaxOptions", {"OutputType": INT64}))
    idx = b.tensor("idx", [len(indices)], INT64, indices)
    rows = b.tensor("rows", [len(indices), 5], FLOAT32)
    b.op("GATHER", [x, idx], [rows], ("GatherOptions", {"Axis": 0}))
    return b.build([x], [arg, rows])


def test_int64_tensors_are_narrowed_to_int32():
    data = _argmax_gather(np.array([2, 0, 2], np.int64))
    m = import_tflite(data)
    out = m.operands[m.outputs[0]]
    assert out.type == nnc.OperandType.TENSOR_INT32
    x = np.random.default_rng(1).normal(size=(3, 5)).astype(np.float32)
    arg, rows = nnc.compile(m).run(x)
    assert arg.dtype == np.int32
    np.testing.assert_array_equal(arg, x.argmax(1))
    np.testing.assert_array_equal(rows, x[[2, 0, 2]])
    lite = litert(data, [x])
    if lite is not None:
        np.testing.assert_array_equal(arg, lite[0])
        np.testing.assert_array_equal(rows, lite[1])


def test_an_int64_constant_beyond_int32_is_refused():
    with pytest.raises(UnsupportedOperatorsError) as e:
        import_tflite(_argmax_gather(np.array([2, 1 << 40, 0], np.int64)))
    [(index, name, why)] = e.value.problems
    assert (index, name) == (1, "GATHER") and "int64 tensor 'idx'" in why and "beyond int32" in why
