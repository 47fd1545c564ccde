"""Rules of BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, TRANSPOSE (family rearrange),
PAD (pad), SQUEEZE (reshape), STRIDED_SLICE (slice) and MEAN (reduce) --
inferred shapes for every signature, tolerance of unknown
dimensions, RuleError for invalid parameters, Unsupported for shape inputs
that are not known yet, and a replay of the conformance corpus.  The last
section runs small models end to end against numpy references of Android's
kernels (passes/lowering/<family>.py)."""

from __future__ import annotations

import dataclasses
import functools
import glob
import itertools
import json
import os
import random
import re
from pathlib import Path

import numpy as np
import pytest

import nnc
from nnc.dialects.rules import OpCall, OperandInfo, RuleError, Unsupported, infer
from nnc.dialects.rules.slice import clamped_index
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op

F32, F16, I32T = T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_INT32
Q8, Q8S = T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED
LAYOUT_OPS = {
    Op.BATCH_TO_SPACE_ND, Op.SPACE_TO_BATCH_ND, Op.PAD, Op.SQUEEZE, Op.STRIDED_SLICE,
    Op.TRANSPOSE, Op.MEAN,
}  # fmt: skip


# -- operand builders ----------------------------------------------------------------------


def ten(t: T, dims, scale: float = 0.0, zp: int = 0, value=None) -> OperandInfo:
    dims = None if dims is None else tuple(dims)
    if value is not None:
        value = np.asarray(value)
    return OperandInfo(t, dims, scale, zp, None, value)


def ints(values, dims=None) -> OperandInfo:
    """A constant TENSOR_INT32 (shape from the values unless given)."""
    v = np.asarray(values, np.int32)
    return OperandInfo(I32T, tuple(v.shape) if dims is None else tuple(dims), value=v)


def runtime_ints(dims) -> OperandInfo:
    """A TENSOR_INT32 whose value is not known yet (a model input)."""
    return OperandInfo(I32T, tuple(dims))


def omit(t: T = I32T, dims=(0,)) -> OperandInfo:
    return OperandInfo(t, tuple(dims), omitted=True)


def i32(v: int) -> OperandInfo:
    return OperandInfo(T.INT32, (), value=np.array(v, np.int32))


def b8(v: bool) -> OperandInfo:
    return OperandInfo(T.BOOL, (), value=np.array(v, np.bool_))


def run(op: Op, ins, outs=()) -> list[OperandInfo]:
    return infer(OpCall(op, list(ins), list(outs)))


def dims(op: Op, ins, outs=()):
    (out,) = run(op, ins, outs)
    return out.dims


def fails(op: Op, ins, outs=(), match: str | None = None) -> None:
    with pytest.raises(RuleError, match=match):
        run(op, ins, outs)


def unsupported(op: Op, ins, outs=()) -> None:
    with pytest.raises(Unsupported):
        run(op, ins, outs)


# -- BATCH_TO_SPACE_ND ---------------------------------------------------------------------------


def test_batch_to_space_nhwc_and_nchw():
    assert dims(Op.BATCH_TO_SPACE_ND, [ten(F32, (4, 2, 2, 1)), ints([2, 2])]) == (1, 4, 4, 1)
    assert dims(Op.BATCH_TO_SPACE_ND, [ten(F32, (4, 2, 2, 1)), ints([2, 2]), b8(False)]) == (1, 4, 4, 1)
    assert dims(Op.BATCH_TO_SPACE_ND, [ten(F32, (6, 3, 2, 2)), ints([3, 1]), b8(True)]) == (2, 3, 6, 2)
    out = run(Op.BATCH_TO_SPACE_ND, [ten(Q8, (4, 1, 1, 2), 0.5, 3), ints([2, 2])])[0]
    assert (out.type, out.dims, out.scale, out.zero_point) == (Q8, (1, 2, 2, 2), 0.5, 3)
    assert dims(Op.BATCH_TO_SPACE_ND, [ten(Q8S, (4, 1, 1, 2), 0.5, -3), ints([2, 2])]) == (1, 2, 2, 2)
    assert dims(Op.BATCH_TO_SPACE_ND, [ten(F16, (4, 1, 1, 2)), ints([2, 2])]) == (1, 2, 2, 2)


def test_batch_to_space_unknown_dims():
    assert dims(Op.BATCH_TO_SPACE_ND, [ten(F32, (0, 2, 0, 3)), ints([2, 2])]) == (0, 4, 0, 3)
    assert dims(Op.BATCH_TO_SPACE_ND, [ten(F32, None), ints([2, 1])]) == (0, 0, 0, 0)
    unsupported(Op.BATCH_TO_SPACE_ND, [ten(F32, (4, 2, 2, 1)), runtime_ints((2,))])


def test_batch_to_space_invalid():
    x = ten(F32, (4, 2, 2, 1))
    fails(Op.BATCH_TO_SPACE_ND, [x, ints([0, 2])], match=">= 1")
    fails(Op.BATCH_TO_SPACE_ND, [x, ints([-1, 2])], match=">= 1")
    fails(Op.BATCH_TO_SPACE_ND, [ten(F32, (3, 2, 2, 1)), ints([2, 2])], match="not divisible")
    fails(Op.BATCH_TO_SPACE_ND, [x, ints([2, 2, 1])], match="block_shape")
    fails(Op.BATCH_TO_SPACE_ND, [x, ints([[2, 2]])], match="rank")
    fails(Op.BATCH_TO_SPACE_ND, [ten(F32, (4, 2, 2)), ints([2, 2])], match="rank")
    fails(Op.BATCH_TO_SPACE_ND, [ten(I32T, (4, 2, 2, 1)), ints([2, 2])])
    fails(Op.BATCH_TO_SPACE_ND, [x, ints([2, 2]), i32(1)], match="BOOL")
    fails(Op.BATCH_TO_SPACE_ND, [x], match="inputs")
    fails(Op.BATCH_TO_SPACE_ND, [x, omit()], match="omitted")
    # a quantised output must keep the input's quantisation
    q = ten(Q8, (4, 1, 1, 2), 0.5, 3)
    fails(Op.BATCH_TO_SPACE_ND, [q, ints([2, 2])], [ten(Q8, (1, 2, 2, 2), 0.5, 4)], match="zero point")


# -- SPACE_TO_BATCH_ND ---------------------------------------------------------------------------


def test_space_to_batch_signatures():
    assert dims(Op.SPACE_TO_BATCH_ND, [ten(F32, (1, 4, 4, 1)), ints([2, 2]), ints([[0, 0], [0, 0]])]) == (4, 2, 2, 1)
    assert dims(Op.SPACE_TO_BATCH_ND, [ten(F32, (1, 5, 2, 1)), ints([3, 2]), ints([[1, 0], [2, 0]])]) == (6, 2, 2, 1)
    assert dims(Op.SPACE_TO_BATCH_ND, [ten(F32, (1, 4, 2, 1)), ints([3, 2]), ints([[1, 1], [2, 4]])]) == (6, 2, 4, 1)
    nchw = [ten(F32, (1, 1, 5, 2)), ints([3, 2]), ints([[1, 0], [2, 0]]), b8(True)]
    assert dims(Op.SPACE_TO_BATCH_ND, nchw) == (6, 1, 2, 2)
    out = run(Op.SPACE_TO_BATCH_ND, [ten(Q8, (1, 5, 2, 1), 1.0, 9), ints([3, 2]), ints([[1, 0], [2, 0]]), b8(False)])[0]
    assert (out.dims, out.zero_point) == ((6, 2, 2, 1), 9)


def test_space_to_batch_unknown_dims():
    assert dims(Op.SPACE_TO_BATCH_ND, [ten(F32, (0, 0, 4, 3)), ints([2, 2]), ints([[0, 0], [0, 0]])]) == (0, 0, 2, 3)
    assert dims(Op.SPACE_TO_BATCH_ND, [ten(F32, None), ints([2, 2]), ints([[0, 0], [0, 0]])]) == (0, 0, 0, 0)
    unsupported(Op.SPACE_TO_BATCH_ND, [ten(F32, (1, 4, 4, 1)), ints([2, 2]), runtime_ints((2, 2))])


def test_space_to_batch_invalid():
    x = ten(F32, (1, 4, 4, 1))
    zero = ints([[0, 0], [0, 0]])
    fails(Op.SPACE_TO_BATCH_ND, [x, ints([0, 2]), zero], match=">= 1")
    fails(Op.SPACE_TO_BATCH_ND, [x, ints([3, 2]), zero], match="not divisible")
    fails(Op.SPACE_TO_BATCH_ND, [x, ints([2, 2]), ints([[0, -1], [0, 1]])], match=">= 0")
    fails(Op.SPACE_TO_BATCH_ND, [x, ints([2, 2]), ints([0, 0, 0, 0])], match="rank")
    fails(Op.SPACE_TO_BATCH_ND, [x, ints([2, 2]), ints([[0, 0], [0, 0], [0, 0]])], match="shape")
    fails(Op.SPACE_TO_BATCH_ND, [x, ints([2, 2]), ints([[0, 0, 0], [0, 0, 0]])], match="shape")
    fails(Op.SPACE_TO_BATCH_ND, [ten(F32, (4, 4, 1)), ints([2, 2]), zero], match="rank")
    fails(Op.SPACE_TO_BATCH_ND, [x, ints([2, 2])], match="inputs")


# -- PAD -------------------------------------------------------------------------------------------


def test_pad_every_rank():
    assert dims(Op.PAD, [ten(F32, (3,)), ints([[1, 2]])]) == (6,)
    assert dims(Op.PAD, [ten(F32, (1, 2, 3)), ints([[0, 0], [1, 1], [2, 0]])]) == (1, 4, 5)
    assert dims(Op.PAD, [ten(F32, (1, 2, 2, 1)), ints([[0, 0], [1, 1], [1, 1], [0, 0]])]) == (1, 4, 4, 1)
    out = run(Op.PAD, [ten(Q8S, (2, 3), 0.25, -5), ints([[1, 1], [0, 2]])])[0]
    assert (out.type, out.dims, out.scale, out.zero_point) == (Q8S, (4, 5), 0.25, -5)


def test_pad_unknown_dims():
    assert dims(Op.PAD, [ten(F32, (0, 2)), ints([[1, 1], [0, 2]])]) == (0, 4)
    assert dims(Op.PAD, [ten(F32, None), ints([[1, 1], [0, 2]])]) == (0, 0)
    unsupported(Op.PAD, [ten(F32, (2, 2)), runtime_ints((2, 2))])


def test_pad_invalid():
    x = ten(F32, (2, 3))
    fails(Op.PAD, [x, ints([[1, -1], [0, 0]])], match=">= 0")
    fails(Op.PAD, [x, ints([[1, 1]])], match="shape")
    fails(Op.PAD, [x, ints([1, 1, 0, 0])], match="rank")
    fails(Op.PAD, [x, ints([[1, 1, 1], [0, 0, 0]])], match="shape")
    fails(Op.PAD, [ten(F32, (1, 1, 1, 1, 1)), ints([[0, 0]] * 5)], match="rank")
    fails(Op.PAD, [ten(I32T, (2, 3)), ints([[0, 0], [0, 0]])])
    fails(Op.PAD, [ten(Q8, (2, 3), 0.5, 1), ints([[0, 0], [0, 0]])], [ten(Q8, (2, 3), 0.25, 1)], match="scale")


# -- SQUEEZE -----------------------------------------------------------------------------------------


def test_squeeze_axes_and_default():
    assert dims(Op.SQUEEZE, [ten(F32, (4, 1, 1, 2)), ints([1, 2])]) == (4, 2)
    assert dims(Op.SQUEEZE, [ten(F32, (1, 24, 1)), ints([2])]) == (1, 24)
    assert dims(Op.SQUEEZE, [ten(F32, (1, 24, 1)), ints([-1, 2, -3])]) == (24,)
    assert dims(Op.SQUEEZE, [ten(F32, (1, 3, 1, 2)), omit()]) == (3, 2)
    # squeezing every dimension leaves shape [1] (Android's Squeeze.cpp)
    assert dims(Op.SQUEEZE, [ten(F32, (1, 1, 1)), omit()]) == (1,)
    assert dims(Op.SQUEEZE, [ten(F32, (1, 1)), ints([0, 1])]) == (1,)
    # present but empty axes squeeze nothing
    assert dims(Op.SQUEEZE, [ten(F32, (1, 2)), ints(np.zeros(0, np.int32))]) == (1, 2)
    out = run(Op.SQUEEZE, [ten(Q8, (1, 2), 0.5, 7), omit()])[0]
    assert (out.dims, out.scale, out.zero_point) == ((2,), 0.5, 7)


def test_squeeze_unknown_dims():
    assert dims(Op.SQUEEZE, [ten(F32, (0, 1, 3)), ints([1])]) == (0, 3)
    assert dims(Op.SQUEEZE, [ten(F32, (0, 1, 3)), ints([0])]) == (1, 3)  # size 0 = unknown: may be 1
    assert dims(Op.SQUEEZE, [ten(F32, (0, 1, 3)), omit()]) is None
    assert dims(Op.SQUEEZE, [ten(F32, None), ints([0])]) is None
    unsupported(Op.SQUEEZE, [ten(F32, (1, 2)), runtime_ints((1,))])


def test_squeeze_invalid():
    fails(Op.SQUEEZE, [ten(F32, (1, 2, 1)), ints([1])], match="size 2")
    fails(Op.SQUEEZE, [ten(F32, (1, 2, 1)), ints([3])], match="out of range")
    fails(Op.SQUEEZE, [ten(F32, (1, 2, 1)), ints([-4])], match="out of range")
    fails(Op.SQUEEZE, [ten(F32, (1, 2, 1)), ints([[0]])], match="rank")
    fails(Op.SQUEEZE, [ten(F32, (1, 1, 1, 1, 1)), omit()], match="rank")
    fails(Op.SQUEEZE, [ten(F32, (1, 2)), omit(), ints([0])], match="inputs")
    fails(Op.SQUEEZE, [omit(F32, (1, 2)), ints([0])], match="omitted")


# -- STRIDED_SLICE ------------------------------------------------------------------------------------


def slice_call(shape, begin, end, strides, bm=0, em=0, sm=0, t=F32):
    return [ten(t, shape), ints(begin), ints(end), ints(strides), i32(bm), i32(em), i32(sm)]


def test_strided_slice_corpus_like():
    assert dims(Op.STRIDED_SLICE, slice_call((4,), [1], [3], [1])) == (2,)
    assert dims(Op.STRIDED_SLICE, slice_call((4,), [-3], [3], [1])) == (2,)
    assert dims(Op.STRIDED_SLICE, slice_call((4,), [-5], [3], [1])) == (3,)
    assert dims(Op.STRIDED_SLICE, slice_call((4,), [1], [-2], [1])) == (1,)
    assert dims(Op.STRIDED_SLICE, slice_call((4,), [1], [3], [1], bm=1)) == (3,)
    assert dims(Op.STRIDED_SLICE, slice_call((4,), [1], [3], [1], em=1)) == (3,)
    assert dims(Op.STRIDED_SLICE, slice_call((3,), [-1], [-4], [-1])) == (3,)
    assert dims(Op.STRIDED_SLICE, slice_call((2, 3), [1, 0], [2, 2], [1, 1], em=2)) == (1, 3)
    assert dims(Op.STRIDED_SLICE, slice_call((2, 3), [0, 0], [1, 3], [1, 1], sm=1)) == (3,)


def test_strided_slice_negative_strides_and_masks():
    # end -1 with a negative stride is position d - 1 (ClampedIndex), not "before 0"
    assert dims(Op.STRIDED_SLICE, slice_call((5,), [4], [-1], [-1])) == (0,)
    assert dims(Op.STRIDED_SLICE, slice_call((5,), [4], [0], [-1], em=1)) == (5,)
    assert dims(Op.STRIDED_SLICE, slice_call((5,), [0], [0], [-2], bm=1, em=1)) == (3,)
    assert dims(Op.STRIDED_SLICE, slice_call((2, 4, 5), [1, 0, -4], [2, 0, 4], [1, -2, 1], 2, 2, 1)) == (2, 3)
    # out-of-range indices clamp; reversed ranges are empty
    assert dims(Op.STRIDED_SLICE, slice_call((3,), [-9], [9], [1])) == (3,)
    assert dims(Op.STRIDED_SLICE, slice_call((3,), [2], [1], [1])) == (0,)


def test_strided_slice_all_axes_shrunk_gives_shape_1():
    assert dims(Op.STRIDED_SLICE, slice_call((1,), [0], [1], [1], sm=1)) == (1,)
    assert dims(Op.STRIDED_SLICE, slice_call((2, 3), [1, -1], [2, 3], [1, 1], sm=3)) == (1,)
    # bits beyond the rank are ignored
    assert dims(Op.STRIDED_SLICE, slice_call((2, 3), [0, 0], [2, 3], [1, 1], 0xF0, 0xF0, 0xF0)) == (2, 3)


def test_strided_slice_quant_and_unknown():
    out = run(Op.STRIDED_SLICE, slice_call((2, 3), [0, 0], [1, 3], [1, 1], sm=1, t=Q8S))[0]
    assert (out.type, out.dims) == (Q8S, (3,))
    assert dims(Op.STRIDED_SLICE, slice_call((0, 3), [0, 0], [1, 3], [1, 2])) == (0, 2)
    assert dims(Op.STRIDED_SLICE, slice_call((0, 3), [0, 0], [1, 3], [1, 1], sm=1)) == (3,)
    assert dims(Op.STRIDED_SLICE, slice_call(None, [0, 0, 0], [1, 3, 1], [1, 1, 1], sm=4)) == (0, 0)
    ins = slice_call((2, 3), [0, 0], [1, 3], [1, 1])
    ins[2] = runtime_ints((2,))
    unsupported(Op.STRIDED_SLICE, ins)


def test_strided_slice_invalid():
    fails(Op.STRIDED_SLICE, slice_call((2, 3), [0, 0], [2, 3], [1, 1], sm=1), match="shrunk")
    fails(Op.STRIDED_SLICE, slice_call((2, 3), [1, 0], [0, 3], [-1, 1], sm=1), match="negative stride")
    fails(Op.STRIDED_SLICE, slice_call((2, 3), [0, 0], [2, 3], [1, 0]), match="non-zero")
    fails(Op.STRIDED_SLICE, slice_call((2, 3), [0], [2, 3], [1, 1]), match="begin")
    fails(Op.STRIDED_SLICE, slice_call((2, 3), [0, 0], [2, 3, 1], [1, 1]), match="end")
    fails(Op.STRIDED_SLICE, slice_call((2, 3), [0, 0], [2, 3], [[1, 1]]), match="rank")
    fails(Op.STRIDED_SLICE, slice_call((1, 1, 1, 1, 1), [0] * 5, [1] * 5, [1] * 5), match="rank")
    bad = slice_call((2, 3), [0, 0], [2, 3], [1, 1])
    bad[4] = b8(False)
    fails(Op.STRIDED_SLICE, bad, match="INT32")
    fails(Op.STRIDED_SLICE, bad[:6], match="inputs")


# Android's execution path (tflite's legacy StridedSlice with StartForAxis /
# StopForAxis) written independently of the rule, to check that the output
# shape the rule computes with ClampedIndex is the number of elements visited.
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _start_for_axis(begin: int, stride: int, d: int, masked: bool) -> int:
    start = (_INT_MIN if stride > 0 else _INT_MAX) if masked else begin
    if start < 0:
        start += d
    return min(max(start, 0), d - 1)


def _stop_for_axis(end: int, stride: int, d: int, masked: bool, shrink: bool, start: int) -> int:
    stop = start + 1 if shrink else end
    if masked:
        stop = _INT_MAX if stride > 0 else _INT_MIN
    if stop < 0:
        stop += d
    return min(max(stop, 0), d) if stride > 0 else min(max(stop, -1), d - 1)


def _begins_past_the_end(d: int, begin: int, stride: int, bm: int) -> bool:
    """A begin beyond the last element in the slice's direction: Android's
    prepare makes the slice empty, while StartForAxis would clamp it to the
    last element; the shape (prepare) wins."""
    return not bm and (begin >= d if stride > 0 else begin < -d)


def _slice_length(d: int, begin: int, end: int, stride: int, bm: int, em: int) -> int:
    if _begins_past_the_end(d, begin, stride, bm):
        return 0
    start = _start_for_axis(begin, stride, d, bool(bm))
    return len(range(start, _stop_for_axis(end, stride, d, bool(em), False, start), stride))


def reference_strided_slice(x: np.ndarray, begin, end, strides, bm, em, sm) -> np.ndarray:
    ranges = []
    for k, d in enumerate(x.shape):
        start = _start_for_axis(begin[k], strides[k], d, bool(bm >> k & 1))
        stop = _stop_for_axis(end[k], strides[k], d, bool(em >> k & 1), bool(sm >> k & 1), start)
        empty = _begins_past_the_end(d, begin[k], strides[k], bm >> k & 1)
        ranges.append(range(0) if empty else range(start, stop, strides[k]))
    values = [x[i] for i in itertools.product(*ranges)]
    shape = [len(r) for k, r in enumerate(ranges) if not sm >> k & 1]
    return np.array(values, x.dtype).reshape(shape or [1])


def test_strided_slice_shape_matches_the_reference_loops():
    rng = random.Random(7)
    checked = 0
    for _ in range(3000):
        rank = rng.randint(1, 4)
        shape = [rng.randint(1, 5) for _ in range(rank)]
        begin = [rng.randint(-7, 7) for _ in range(rank)]
        end = [rng.randint(-7, 7) for _ in range(rank)]
        strides = [rng.choice([-3, -2, -1, 1, 2, 3]) for _ in range(rank)]
        bm, em, sm = rng.randrange(16), rng.randrange(16), rng.choice([0, rng.randrange(16)])
        try:
            got = dims(Op.STRIDED_SLICE, slice_call(shape, begin, end, strides, bm, em, sm))
        except RuleError:
            # Android rejects a shrunk axis with a negative stride or a slice
            # that is not exactly one element long
            lengths = [
                _slice_length(d, b, e, s, bm >> k & 1, em >> k & 1)
                for k, (d, b, e, s) in enumerate(zip(shape, begin, end, strides))
            ]
            assert any(sm >> k & 1 and (strides[k] < 0 or lengths[k] != 1) for k in range(rank)), (
                shape, begin, end, strides, bm, em, sm,
            )  # fmt: skip
            continue
        want = reference_strided_slice(np.zeros(shape), begin, end, strides, bm, em, sm).shape
        assert got == want, (shape, begin, end, strides, bm, em, sm)
        checked += 1
    assert checked > 1000


def test_clamped_index_matches_android():
    # PositiveRemainder(min(max(i, -d), d), d) etc., with C remainder semantics
    assert [clamped_index(i, 4, True) for i in (-6, -4, -1, 0, 3, 4, 9)] == [0, 0, 3, 0, 3, 4, 4]
    assert [clamped_index(i, 4, False) for i in (-6, -5, -4, -1, 0, 3, 4, 9)] == [-1, -1, 0, 3, 0, 3, 3, 3]


# -- TRANSPOSE ------------------------------------------------------------------------------------------


def test_transpose_perm_and_default():
    assert dims(Op.TRANSPOSE, [ten(F32, (2, 3)), ints([1, 0])]) == (3, 2)
    assert dims(Op.TRANSPOSE, [ten(F32, (2, 3, 4, 5)), ints([0, 3, 1, 2])]) == (2, 5, 3, 4)
    assert dims(Op.TRANSPOSE, [ten(F32, (2, 3)), omit()]) == (3, 2)
    # omitted perm reverses the dimensions (the spec: n-1 ... 0)
    assert dims(Op.TRANSPOSE, [ten(F32, (2, 3, 4)), omit()]) == (4, 3, 2)
    assert dims(Op.TRANSPOSE, [ten(F32, (7,)), ints([0])]) == (7,)
    out = run(Op.TRANSPOSE, [ten(Q8, (1, 2), 0.5, 3), ints([1, 0])])[0]
    assert (out.dims, out.scale, out.zero_point) == ((2, 1), 0.5, 3)


def test_transpose_unknown_dims():
    assert dims(Op.TRANSPOSE, [ten(F32, (0, 3)), ints([1, 0])]) == (3, 0)
    assert dims(Op.TRANSPOSE, [ten(F32, None), ints([1, 0, 2])]) == (0, 0, 0)
    assert dims(Op.TRANSPOSE, [ten(F32, None), omit()]) is None
    unsupported(Op.TRANSPOSE, [ten(F32, (2, 3)), runtime_ints((2,))])


def test_transpose_invalid():
    x = ten(F32, (2, 3, 4))
    fails(Op.TRANSPOSE, [x, ints([0, 0, 1])], match="permutation")
    fails(Op.TRANSPOSE, [x, ints([0, 1, 3])], match="permutation")
    fails(Op.TRANSPOSE, [x, ints([-1, 0, 1])], match="permutation")
    fails(Op.TRANSPOSE, [x, ints([1, 0])], match="shape|values")
    fails(Op.TRANSPOSE, [x, ints([[0, 1, 2]])], match="rank")
    fails(Op.TRANSPOSE, [ten(F32, (1, 1, 1, 1, 1)), omit()], match="rank")
    fails(Op.TRANSPOSE, [ten(I32T, (2, 3)), omit()])


# -- MEAN -----------------------------------------------------------------------------------------------


def test_mean_axes_and_keep_dims():
    x = ten(F32, (4, 3, 2))
    assert dims(Op.MEAN, [x, ints([1, 0, -3, -3]), i32(0)]) == (2,)
    assert dims(Op.MEAN, [x, ints([0, 2]), i32(1)]) == (1, 3, 1)
    assert dims(Op.MEAN, [x, ints([-1]), i32(5)]) == (4, 3, 1)  # any positive keep_dims
    assert dims(Op.MEAN, [x, ints([-1]), i32(-1)]) == (4, 3)
    assert dims(Op.MEAN, [ten(F32, (1, 2, 2, 1)), ints([2]), i32(0)]) == (1, 2, 1)
    # reducing every dimension without keep_dims gives shape [1]
    assert dims(Op.MEAN, [x, ints([0, 1, 2]), i32(0)]) == (1,)
    assert dims(Op.MEAN, [x, ints([0, 1, 2]), i32(1)]) == (1, 1, 1)
    # empty axes reduce nothing (the spec's note)
    assert dims(Op.MEAN, [x, ints(np.zeros(0, np.int32)), i32(0)]) == (4, 3, 2)
    out = run(Op.MEAN, [ten(Q8S, (4, 3, 2), 0.8, -123), ints([0, 2]), i32(1)])[0]
    assert (out.type, out.dims, out.scale, out.zero_point) == (Q8S, (1, 3, 1), 0.8, -123)


def test_mean_output_may_declare_its_quantisation():
    ins = [ten(Q8, (4, 3), 0.5, 1), ints([0]), i32(0)]
    assert dims(Op.MEAN, ins, [ten(Q8, (3,), 0.25, 7)]) == (3,)


def test_mean_unknown_dims():
    assert dims(Op.MEAN, [ten(F32, (0, 3, 0)), ints([0]), i32(0)]) == (3, 0)
    assert dims(Op.MEAN, [ten(F32, None), ints([0]), i32(0)]) is None
    unsupported(Op.MEAN, [ten(F32, (2, 3)), runtime_ints((1,)), i32(0)])


def test_mean_invalid():
    x = ten(F32, (4, 3, 2))
    fails(Op.MEAN, [x, ints([3]), i32(0)], match="out of range")
    fails(Op.MEAN, [x, ints([-4]), i32(1)], match="out of range")
    fails(Op.MEAN, [x, ints([[0]]), i32(0)], match="rank")
    fails(Op.MEAN, [x, ints([0]), b8(True)], match="INT32")
    fails(Op.MEAN, [x, ints([0])], match="inputs")
    fails(Op.MEAN, [ten(I32T, (2, 2)), ints([0]), i32(0)])
    fails(Op.MEAN, [ten(F32, (1, 1, 1, 1, 1)), ints([0]), i32(0)], match="rank")


# -- the conformance corpus -----------------------------------------------------------------------------

_NUMPY = {
    T.FLOAT32: np.float32, T.INT32: np.int32, T.UINT32: np.uint32, T.BOOL: np.bool_,
    T.FLOAT16: np.float16, T.TENSOR_FLOAT32: np.float32, T.TENSOR_FLOAT16: np.float16,
    T.TENSOR_INT32: np.int32, T.TENSOR_QUANT8_ASYMM: np.uint8,
    T.TENSOR_QUANT8_ASYMM_SIGNED: np.int8, T.TENSOR_BOOL8: np.bool_,
}  # fmt: skip
_TYPE_FIELD = re.compile(r'"type":\s*"([A-Z0-9_]+)"')
_SHAPE_INPUTS = {
    Op.BATCH_TO_SPACE_ND: (1,), Op.SPACE_TO_BATCH_ND: (1, 2), Op.PAD: (1,), Op.SQUEEZE: (1,),
    Op.STRIDED_SLICE: (1, 2, 3), Op.TRANSPOSE: (1,), Op.MEAN: (1,),
}  # fmt: skip


def _corpus_dir() -> Path | None:
    env = os.environ.get("NNC_CTS_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[1].parent / "shared" / "nnapi-cts")
    return next((p for p in candidates if (p / "V1_1").is_dir()), None)


def _operand(o: dict, with_value: bool) -> OperandInfo:
    t = T[o["type"]]
    dims_ = (tuple(o["dimensions"]) or None) if t.is_tensor else ()
    omitted = o["lifetime"] == "NO_VALUE" or (o["lifetime"] == "SUBGRAPH_INPUT" and not o["data"])
    value = None
    if with_value and o["data"] and t in _NUMPY:
        value = np.array(o["data"], dtype=_NUMPY[t])
        if dims_:
            value = value.reshape(dims_)
    return OperandInfo(t, dims_, o["scale"], o["zero_point"], None, value, omitted)


@functools.cache
def _corpus() -> tuple[dict, ...] | None:
    root = _corpus_dir()
    if root is None:
        return None
    wanted = {op.name for op in LAYOUT_OPS}
    models = []
    for path in sorted(glob.glob(str(root / "*" / "*.json"))):
        with open(path) as f:
            text = f.read()
        if not wanted & set(_TYPE_FIELD.findall(text)):
            continue
        for model in json.loads(text)["models"]:
            types = {o["type"] for o in model["main"]["operations"]}
            if not model["referenced"] and types & wanted and types <= wanted | {"ADD"}:
                models.append(model)
    return tuple(models)


def _replay(model: dict) -> tuple[str, str]:
    """Run the rules in order; model inputs read as shapes carry their values
    (as when nnc specialises on them).  Returns (status, message)."""
    main = model["main"]
    operands = main["operands"]
    infos = [_operand(o, o["lifetime"] in ("CONSTANT_COPY", "CONSTANT_REFERENCE")) for o in operands]
    try:
        for k, op in enumerate(main["operations"]):
            kind = Op[op["type"]]
            ins = [infos[i] for i in op["inputs"]]
            for pos in _SHAPE_INPUTS.get(kind, ()):
                if pos < len(ins) and ins[pos].value is None and not ins[pos].omitted:
                    ins[pos] = _operand(operands[op["inputs"][pos]], True)
            outs = infer(OpCall(kind, ins, [infos[i] for i in op["outputs"]], k))
            for i, got in zip(op["outputs"], outs):
                want = tuple(operands[i]["dimensions"])
                if want and all(want) and got.dims != want:
                    return "mismatch", f"op {k} {op['type']}: {got.dims} != {want}"
                if operands[i]["lifetime"] == "TEMPORARY_VARIABLE":
                    infos[i] = dataclasses.replace(infos[i], dims=got.dims)
    except RuleError as e:
        return "rule_error", str(e)
    return "ok", ""


def test_corpus_shapes_and_failures():
    models = _corpus()
    if models is None:
        pytest.skip("conformance corpus (shared/nnapi-cts) not found")
    counts: dict[str, int] = {}
    problems = []
    for model in models:
        status, msg = _replay(model)
        if model["expect_failure"]:
            status = "failure_" + ("detected" if status == "rule_error" else "missed")
        counts[status] = counts.get(status, 0) + 1
        if status not in ("ok", "failure_detected"):
            problems.append((model["name"], status, msg))
    assert not problems, problems[:10]
    assert counts.get("ok", 0) > 500 and counts.get("failure_detected", 0) >= 2, counts


def test_corpus_unknown_dims_never_fail_valid_models():
    """At model-build time (input dims or ranks unknown) valid corpus
    operations raise no RuleError and agree with the listed output dims."""
    models = _corpus()
    if models is None:
        pytest.skip("conformance corpus (shared/nnapi-cts) not found")
    checked = 0
    for model in models:
        if model["expect_failure"]:
            continue
        operands = model["main"]["operands"]
        for op in model["main"]["operations"]:
            kind = Op[op["type"]]
            if kind not in LAYOUT_OPS:
                continue
            base = [_operand(operands[i], operands[i]["lifetime"].startswith("CONSTANT")) for i in op["inputs"]]
            outs = [_operand(operands[i], False) for i in op["outputs"]]
            for variant in ("zeros", "no_rank"):
                ins = list(base)
                x = ins[0]
                if x.dims is not None:
                    x = dataclasses.replace(x, dims=(0,) * len(x.dims) if variant == "zeros" else None)
                ins[0] = x
                try:
                    (got,) = infer(OpCall(kind, ins, outs))
                except Unsupported:
                    continue
                want = operands[op["outputs"][0]]["dimensions"]
                if got.dims is not None:
                    assert len(got.dims) == len(want), (model["name"], variant, got.dims, want)
                    assert all(not a or a == b for a, b in zip(got.dims, want)), (model["name"], got.dims, want)
                checked += 1
    assert checked > 300


# -- end to end: the lowerings against numpy references of Android's kernels ------------------------------

_rng = np.random.default_rng(11)


def _data(t: T, shape) -> np.ndarray:
    if t == F32:
        return _rng.standard_normal(shape).astype(np.float32)
    if t == Q8:
        return _rng.integers(0, 256, shape).astype(np.uint8)
    return _rng.integers(-128, 128, shape).astype(np.int8)


def compute(op: Op, inputs, out_type: T, out_rank: int, q=(0.0, 0), out_q=None) -> np.ndarray:
    """Build, compile and run a one-operation model.  ``inputs`` are
    (kind, type, value, dims) with kind in/const/omit/scalar; quantised
    tensors take ``q``, the output ``out_q`` (default ``q``)."""
    m = nnc.Model()
    feeds = []
    for k, (kind, t, value, shape) in enumerate(inputs):
        if kind == "scalar":
            m.add_operand(t, None)
            m.set_operand_value(k, value)
            continue
        m.add_operand(t, list(shape), *(q if t in (Q8, Q8S) else (0.0, 0)))
        if kind == "const":
            m.set_operand_value(k, value)
        elif kind == "omit":
            m.set_operand_value(k, None)
        else:
            feeds.append(value)
    out = len(inputs)
    m.add_operand(out_type, [0] * out_rank, *((out_q or q) if out_type in (Q8, Q8S) else (0.0, 0)))
    m.add_operation(op, list(range(len(inputs))), [out])
    m.identify_inputs_and_outputs([k for k, i in enumerate(inputs) if i[0] == "in"], [out])
    return nnc.compile(m).run(*feeds)[0]


def _ints(values) -> tuple:
    v = np.asarray(values, np.int32)
    return ("const", I32T, v, v.shape)


@pytest.mark.parametrize("t", [F32, Q8, Q8S])
def test_run_transpose(t):
    for shape, perm in (((2, 3), [1, 0]), ((2, 3, 4), [2, 0, 1]), ((1, 2, 3, 4), [3, 1, 0, 2]), ((5,), [0])):
        x = _data(t, shape)
        got = compute(Op.TRANSPOSE, [("in", t, x, shape), _ints(perm)], t, len(shape), (0.5, 3))
        np.testing.assert_array_equal(got, np.transpose(x, perm))
    x = _data(t, (2, 3, 4))
    got = compute(Op.TRANSPOSE, [("in", t, x, x.shape), ("omit", I32T, None, (0,))], t, 3, (0.5, 3))
    np.testing.assert_array_equal(got, np.transpose(x))


@pytest.mark.parametrize("t", [F32, Q8S])
def test_run_strided_slice_random(t):
    rng = random.Random(5)
    ran = 0
    while ran < 12:
        rank = rng.randint(1, 4)
        shape = [rng.randint(1, 4) for _ in range(rank)]
        begin = [rng.randint(-5, 5) for _ in range(rank)]
        end = [rng.randint(-5, 5) for _ in range(rank)]
        strides = [rng.choice([-2, -1, 1, 2]) for _ in range(rank)]
        bm, em, sm = rng.randrange(16), rng.randrange(16), rng.choice([0, rng.randrange(16)])
        for k in range(rank):
            if sm >> k & 1:
                strides[k], end[k], bm, em = 1, begin[k] + 1 or shape[k], bm & ~(1 << k), em & ~(1 << k)
        try:
            out_dims = dims(Op.STRIDED_SLICE, slice_call(shape, begin, end, strides, bm, em, sm))
        except RuleError:
            continue
        if 0 in out_dims:
            continue  # zero-sized outputs are not representable (0 = unknown)
        x = _data(t, shape)
        want = reference_strided_slice(x, begin, end, strides, bm, em, sm)
        ins = [("in", t, x, shape), _ints(begin), _ints(end), _ints(strides),
               ("scalar", T.INT32, np.int32(bm), None), ("scalar", T.INT32, np.int32(em), None),
               ("scalar", T.INT32, np.int32(sm), None)]  # fmt: skip
        got = compute(Op.STRIDED_SLICE, ins, t, want.ndim, (0.5, -2))
        np.testing.assert_array_equal(got, want, err_msg=str((shape, begin, end, strides, bm, em, sm)))
        ran += 1


def test_run_squeeze():
    for shape, axes, want in (((1, 3, 1, 2), None, (3, 2)), ((1, 1, 1), None, (1,)), ((2, 1, 3), [-2], (2, 3))):
        x = _data(F32, shape)
        axes_in = ("omit", I32T, None, (0,)) if axes is None else _ints(axes)
        got = compute(Op.SQUEEZE, [("in", F32, x, shape), axes_in], F32, len(want))
        np.testing.assert_array_equal(got, x.reshape(want))


@pytest.mark.parametrize("t,zp", [(F32, 0), (Q8, 7), (Q8S, -5)])
def test_run_pad_with_zero_point(t, zp):
    for shape, pads in (((3,), [[1, 2]]), ((2, 3), [[1, 0], [0, 2]]), ((1, 2, 2, 1), [[0, 0], [1, 1], [2, 0], [0, 1]])):
        x = _data(t, shape)
        got = compute(Op.PAD, [("in", t, x, shape), _ints(pads)], t, len(shape), (0.5, zp))
        np.testing.assert_array_equal(got, np.pad(x, pads, constant_values=zp))


def _space_to_batch(x, bh, bw, pads, value):
    x = np.pad(x, [[0, 0], pads[0], pads[1], [0, 0]], constant_values=value)
    b, h, w, c = x.shape
    y = x.reshape(b, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5)
    return y.reshape(bh * bw * b, h // bh, w // bw, c)


def _batch_to_space(x, bh, bw):
    n, h, w, c = x.shape
    b = n // (bh * bw)
    return x.reshape(bh, bw, b, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(b, h * bh, w * bw, c)


@pytest.mark.parametrize("nchw", [False, True])
@pytest.mark.parametrize("t,zp", [(F32, 0), (Q8, 9), (Q8S, -3)])
def test_run_space_to_batch_and_back(t, zp, nchw):
    for (b, h, w, c), (bh, bw), top_left in (((1, 5, 2, 1), (3, 2), (1, 2)), ((2, 4, 3, 2), (2, 3), (0, 0))):
        pads = [[top_left[0], -(h + top_left[0]) % bh], [top_left[1], -(w + top_left[1]) % bw]]
        x = _data(t, (b, h, w, c))
        xin = np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if nchw else x
        ins = [("in", t, xin, xin.shape), _ints([bh, bw]), _ints(pads), ("scalar", T.BOOL, np.bool_(nchw), None)]
        got = compute(Op.SPACE_TO_BATCH_ND, ins, t, 4, (0.5, zp))
        got = got.transpose(0, 2, 3, 1) if nchw else got
        np.testing.assert_array_equal(got, _space_to_batch(x, bh, bw, pads, zp))
        y = _data(t, (b * bh * bw, h, w, c))
        yin = np.ascontiguousarray(y.transpose(0, 3, 1, 2)) if nchw else y
        ins = [("in", t, yin, yin.shape), _ints([bh, bw]), ("scalar", T.BOOL, np.bool_(nchw), None)]
        got = compute(Op.BATCH_TO_SPACE_ND, ins, t, 4, (0.5, zp))
        got = got.transpose(0, 2, 3, 1) if nchw else got
        np.testing.assert_array_equal(got, _batch_to_space(y, bh, bw))


_MEAN_CASES = [((4, 3, 2), [1, 0, -3, -3], 0), ((4, 3, 2), [0, 2], 1), ((2, 3, 4, 1), [-1, 2], 0), ((5,), [0], 0)]


@pytest.mark.parametrize("shape,axes,keep", _MEAN_CASES)
def test_run_mean_float(shape, axes, keep):
    x = _data(F32, shape)
    uniq = tuple(sorted({a % len(shape) for a in axes}))
    want = x.mean(axis=uniq, keepdims=bool(keep), dtype=np.float64).reshape(-1)
    ins = [("in", F32, x, shape), _ints(axes), ("scalar", T.INT32, np.int32(keep), None)]
    out_rank = len(shape) if keep else max(len(shape) - len(uniq), 1)
    got = compute(Op.MEAN, ins, F32, out_rank)
    np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("t,zp", [(Q8, 5), (Q8S, -7)])
@pytest.mark.parametrize("shape,axes,keep", _MEAN_CASES)
def test_run_mean_quant_is_the_integer_mean(t, zp, shape, axes, keep):
    """The int32 sum of the stored values divided by the count, rounded
    down: NNAPI's conformance values (uint8: Android's truncation of a
    non-negative mean; int8: the uint8 values shifted by 128)."""
    x = _data(t, shape)
    uniq = tuple(sorted({a % len(shape) for a in axes}))
    total = x.astype(np.int64).sum(axis=uniq)
    n = int(np.prod([shape[a] for a in uniq]))
    want = (total // n).reshape(-1)
    ins = [("in", t, x, shape), _ints(axes), ("scalar", T.INT32, np.int32(keep), None)]
    out_rank = len(shape) if keep else max(len(shape) - len(uniq), 1)
    got = compute(Op.MEAN, ins, t, out_rank, (0.5, zp))
    np.testing.assert_array_equal(got.reshape(-1).astype(np.int64), want)


@pytest.mark.parametrize(
    "t,q,out_q", [(Q8, (0.5, 5), (0.25, 100)), (Q8S, (0.5, -7), (1.5, 3)), (Q8S, (0.1, 0), (0.001, 0))]
)
def test_run_mean_quant_requantises_to_a_different_output(t, q, out_q):
    x = _data(t, (3, 4))
    real = (x.astype(np.float64) - q[1]).mean(axis=0) * q[0]
    lo, hi = (0, 255) if t == Q8 else (-128, 127)
    want = np.clip(np.floor(real / out_q[0] + 0.5) + out_q[1], lo, hi)
    ins = [("in", t, x, x.shape), _ints([0]), ("scalar", T.INT32, np.int32(0), None)]
    got = compute(Op.MEAN, ins, t, 1, q, out_q)
    assert np.max(np.abs(got.astype(np.float64) - want)) <= 1


# -- TRANSPOSE of float32 matrices on the vector kernel ---------------------------------------


def test_matrix_form_finds_the_batched_matrix_transpositions() -> None:
    from nnc.passes.lowering.rearrange import matrix_form

    assert matrix_form((1, 64, 128), (0, 2, 1)) == (1, 64, 128)
    assert matrix_form((2, 5, 7, 3), (0, 3, 1, 2)) == (2, 35, 3)  # NHWC -> NCHW
    assert matrix_form((2, 3, 5, 7), (0, 2, 3, 1)) == (2, 3, 35)  # NCHW -> NHWC
    assert matrix_form((6, 9), (1, 0)) == (1, 6, 9)
    assert matrix_form((4, 5, 6), (1, 0, 2)) is None  # the last axis stays: rows are moved, not transposed
    assert matrix_form((4, 5, 6), (2, 0, 1)) == (1, 20, 6)
    assert matrix_form((4, 5, 6), (0, 1, 2)) is None


@pytest.mark.parametrize("shape,perm", [
    ((1, 64, 128), (0, 2, 1)),   # whole bands of 16 rows, whole vector blocks
    ((2, 37, 19), (0, 2, 1)),    # a band of 5 rows, blocks of 8 lanes, leftover rows and columns
    ((3, 9, 24), (0, 2, 1)),     # one short band per matrix
    ((2, 5, 8, 40), (0, 3, 1, 2)),
    ((2, 8, 8, 16), (0, 2, 3, 1)),
    ((17, 33), (1, 0)),
    ((4, 5, 6), (1, 0, 2)),      # not a matrix transposition: the generic
])  # fmt: skip
def test_float32_transpose_matches_numpy_at_any_thread_count(shape: tuple[int, ...], perm: tuple[int, ...]) -> None:
    m = nnc.Model()
    x = m.add_operand(F32, list(shape))
    p = m.add_operand(I32T, [len(perm)])
    m.set_operand_value(p, np.array(perm, np.int32))
    oshape = [shape[i] for i in perm]
    o = m.add_operand(F32, oshape)
    m.add_operation(Op.TRANSPOSE, [x, p], [o])
    m.identify_inputs_and_outputs([x], [o])
    m.finish()
    xv = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    comp = nnc.Compilation(m)
    comp.finish()
    for threads in (1, 2, 3):
        ex = nnc.Execution(comp)
        ex.set_num_threads(threads)
        y = np.zeros(oshape, np.float32)
        ex.set_input(0, xv)
        ex.set_output(0, y)
        ex.compute()
        assert np.array_equal(y, np.transpose(xv, perm))
