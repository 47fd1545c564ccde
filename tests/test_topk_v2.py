"""TOPK_V2 against a transcription of Android's ``topk_v2::evalGeneric``
(sort the row's (value, index) pairs, reverse, take k): ties between equal
values put the larger index first; QUANT8_ASYMM compares its stored uint8.
The corpus covers rows of 2 to 8; these add rank 3, many ties, k = n and
every value type nnc implements."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op


def _reference(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    rows = x.reshape(-1, x.shape[-1])
    vals, idx = [], []
    for row in rows:
        pairs = sorted(((v, i) for i, v in enumerate(row.tolist())), reverse=True)[:k]
        vals.append([v for v, _ in pairs])
        idx.append([i for _, i in pairs])
    shape = (*x.shape[:-1], k)
    return np.array(vals, x.dtype).reshape(shape), np.array(idx, np.int32).reshape(shape)


def _topk(t: T, x: np.ndarray, k: int, quant: dict | None = None):
    m = nnc.Model()
    a = m.add_operand(t, list(x.shape), **(quant or {}))
    kk = m.add_operand(T.INT32)
    m.set_operand_value(kk, k)
    v = m.add_operand(t, [*x.shape[:-1], k], **(quant or {}))
    i = m.add_operand(T.TENSOR_INT32, [*x.shape[:-1], k])
    m.add_operation(Op.TOPK_V2, [a, kk], [v, i])
    m.identify_inputs_and_outputs([a], [v, i])
    m.finish()
    return nnc.compile(m).run(x)


RNG = np.random.default_rng(5)
CASES = [
    (T.TENSOR_FLOAT32, RNG.integers(-3, 4, (2, 3, 9)).astype(np.float32), None),  # many ties
    (T.TENSOR_INT32, RNG.integers(-(2**31), 2**31 - 1, (4, 17), dtype=np.int32), None),
    (T.TENSOR_QUANT8_ASYMM, RNG.integers(0, 256, (3, 12), dtype=np.uint8), {"scale": 0.5, "zero_point": 128}),
    (T.TENSOR_QUANT8_ASYMM_SIGNED, RNG.integers(-128, 128, (3, 12), dtype=np.int8), {"scale": 0.5, "zero_point": 0}),
]


@pytest.mark.parametrize("t,x,quant", CASES, ids=[c[0].name for c in CASES])
@pytest.mark.parametrize("which_k", ["one", "some", "all"])
def test_topk_v2(t: T, x: np.ndarray, quant, which_k: str) -> None:
    n = x.shape[-1]
    k = {"one": 1, "some": n // 2, "all": n}[which_k]
    values, indices = _topk(t, x, k, quant)
    want_v, want_i = _reference(x, k)
    np.testing.assert_array_equal(indices, want_i)
    np.testing.assert_array_equal(values, want_v)


@pytest.mark.parametrize("k", [0, 4])
def test_topk_v2_k_out_of_range_is_bad_data(k: int) -> None:
    with pytest.raises(nnc.BadDataError):
        _topk(T.TENSOR_FLOAT32, np.zeros((2, 3), np.float32), k)
