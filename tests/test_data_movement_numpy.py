"""Data-movement operations (REVERSE, MIRROR_PAD, PACK, SPLIT) where the conformance
corpus does not cover them, against numpy (np.flip, np.pad, np.stack); and
:func:`run_one`, which builds and runs a one-operation model."""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op


def run_one(op: Op, ins: list[tuple[T, np.ndarray | None, dict]], params: list[tuple[T, object]],
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
    y = run_one(Op.REVERSE, [(F, X, {})], [(T.TENSOR_INT32, [axis])], F, [2, 3, 4])
    np.testing.assert_array_equal(y, np.flip(X, axis))


def test_reverse_quant8_keeps_bytes() -> None:
    x = np.array([[0, 7, 255], [128, 1, 2]], np.uint8)
    q = {"scale": 0.5, "zero_point": 3}
    y = run_one(Op.REVERSE, [(T.TENSOR_QUANT8_ASYMM, x, q)], [(T.TENSOR_INT32, [1])],
             T.TENSOR_QUANT8_ASYMM, [2, 3], q)
    np.testing.assert_array_equal(y, x[:, ::-1])


@pytest.mark.parametrize("mode,np_mode", [(0, "reflect"), (1, "symmetric")])
def test_mirror_pad(mode: int, np_mode: str) -> None:
    pads = [[1, 0], [2, 2], [0, 3]]
    want = np.pad(X, pads, mode=np_mode)
    y = run_one(Op.MIRROR_PAD, [(F, X, {})], [(T.TENSOR_INT32, pads), (T.INT32, mode)], F, list(want.shape))
    np.testing.assert_array_equal(y, want)


def test_mirror_pad_reflect_too_wide_is_bad_data() -> None:
    with pytest.raises(nnc.BadDataError):
        run_one(Op.MIRROR_PAD, [(F, X, {})], [(T.TENSOR_INT32, [[0, 0], [3, 0], [0, 0]]), (T.INT32, 0)],
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


def test_split_with_wrong_output_count_is_bad_data() -> None:
    m = nnc.Model()
    x = m.add_operand(F, [4, 2])
    axis, n = m.add_operand(T.INT32), m.add_operand(T.INT32)
    m.set_operand_value(axis, 0)
    m.set_operand_value(n, 2)
    outs = [m.add_operand(F, [4, 2]) for _ in range(3)]
    with pytest.raises(nnc.BadDataError):
        m.add_operation(Op.SPLIT, [x, axis, n], outs)
