"""Rules for the slicing operations: SLICE, STRIDED_SLICE and SPLIT.

begin/size, begin/end/strides and the split count decide the output shapes,
so their values must be known when the model is compiled.  STRIDED_SLICE
follows Android's ``operations/StridedSlice.cpp`` (masks, clamping, negative
strides; shrinking every dimension yields shape [1]).  Quantised outputs keep
the input's scale and zero point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_count,
    expect_type,
    like,
    rule,
)
from nnc.dialects.rules.elementwise import QUANT8
from nnc.dialects.rules.operands import (
    MAX_RANK,
    check_length,
    data_input,
    expect_dims,
    int_param,
    int_tensor,
    int_values,
    normalize_axis,
    same_quant_output,
)
from nnc.enums import OperationType as Op


def _positive_remainder(dividend: int, divisor: int) -> int:
    """Android's PositiveRemainder (C ``%`` truncates toward zero)."""
    r = abs(dividend) % divisor
    r = -r if dividend < 0 else r
    return (divisor + r) % divisor


def clamped_index(index: int, dim: int, positive_stride: bool) -> int:
    """Android's ``ClampedIndex`` (nn/common/OperationsUtils.h)."""
    if positive_stride:
        if index >= dim:
            return dim
        return _positive_remainder(min(max(index, -dim), dim), dim)
    if index < -dim:
        return -1
    return _positive_remainder(min(max(index, -dim), dim - 1), dim)


@dataclass(frozen=True)
class SliceAxis:
    """One input dimension of a strided slice: the elements begin + k*stride
    for k in [0, size); a shrunk axis (size 1) is dropped from the output."""

    begin: int
    stride: int
    size: int
    shrink: bool


def strided_slice_axes(call: OpCall, dims: Sequence[int]) -> list[SliceAxis]:
    """Per input dimension, exactly as Android's ``StridedSlice.cpp`` prepare:
    masked begin/end take the fullest range, the others are clamped with
    ``ClampedIndex``; size = max(ceil((end - begin) / stride), 0).  A dimension
    of unknown size (0) gets size 0 unless shrunk."""
    rank = len(dims)
    begin, end, strides = (int_values(call, i) for i in (1, 2, 3))
    for i, (values, what) in enumerate(((begin, "begin"), (end, "end"), (strides, "strides")), 1):
        check_length(call.input(i), i, values, rank, what)
    begin_mask, end_mask, shrink_mask = (int_param(call, i) for i in (4, 5, 6))
    axes = []
    for k, d in enumerate(dims):
        stride = strides[k]
        if stride == 0:
            raise RuleError(f"stride {k} must be non-zero")
        shrink = bool(shrink_mask & (1 << k))
        if shrink and stride < 0:
            raise RuleError(f"axis {k} is shrunk (shrink_axis_mask) but has negative stride {stride}")
        if d <= 0:
            axes.append(SliceAxis(0, stride, 1 if shrink else 0, shrink))
            continue
        positive = stride > 0
        if begin_mask & (1 << k):
            b = 0 if positive else d - 1
        else:
            b = clamped_index(begin[k], d, positive)
        if end_mask & (1 << k):
            e = d if positive else -1
        else:
            e = clamped_index(end[k], d, positive)
        size = max(-((b - e) // stride), 0)  # ceil((e - b) / stride)
        if shrink and size != 1:
            raise RuleError(f"axis {k} is shrunk (shrink_axis_mask) but its slice has {size} elements")
        axes.append(SliceAxis(b, stride, size, shrink))
    return axes


def strided_slice_out_dims(axes: Sequence[SliceAxis]) -> list[int]:
    return [a.size for a in axes if not a.shrink] or [1]


@rule(Op.STRIDED_SLICE)
def strided_slice(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (7,))
    x = data_input(call)
    for i, what in ((1, "begin"), (2, "end"), (3, "strides")):
        info = int_tensor(call, i, 1, what)
        if x.rank is not None:
            expect_dims(info, i, (x.rank,), what)
    for i in (4, 5, 6):
        expect_type(call, i, (T.INT32,))
    same_quant_output(call, x)
    if x.dims is None:
        values = int_values(call, 1)
        if len(values) > MAX_RANK:
            raise RuleError(f"begin implies rank {len(values)} > {MAX_RANK}")
        axes = strided_slice_axes(call, [0] * len(values))
        return [like(x, strided_slice_out_dims(axes))]
    return [like(x, strided_slice_out_dims(strided_slice_axes(call, x.dims)))]


def slice_bounds(call: OpCall, dims: tuple[int, ...]) -> list[tuple[int, int]]:
    """(begin, size) per dimension; a size of -1 takes the rest."""
    rank = len(dims)
    begin, size = int_values(call, 1), int_values(call, 2)
    for i, values in ((1, begin), (2, size)):
        if len(values) != rank:
            raise RuleError(f"input {i} must have {rank} values, got {len(values)}")
    out = []
    for k, (b, s) in enumerate(zip(begin, size)):
        d = dims[k]
        if s == -1:
            s = d - b if d else 0
        if b < 0 or s < 0 or (d and b + s > d):
            raise RuleError(f"slice begin {b}, size {size[k]} out of range for dimension {k} of size {d}")
        out.append((b, s))
    return out


@rule(Op.SLICE)
def slice_(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (3,))
    x = data_input(call, max_rank=None)
    int_tensor(call, 1, 1, "begin")
    int_tensor(call, 2, 1, "size")
    same_quant_output(call, x)
    if x.dims is None:
        return [like(x, (0,) * len(int_values(call, 1)))]
    return [like(x, [s for _, s in slice_bounds(call, x.dims)])]


@rule(Op.SPLIT)
def split(call: OpCall) -> list[OperandInfo]:
    """``num_splits`` equal parts along ``axis``; one output each."""
    expect_count(call, (3,))
    x = data_input(call, max_rank=None)
    axis = int_param(call, 1)
    n = int_param(call, 2)
    if n < 1:
        raise RuleError(f"num_splits must be >= 1, got {n}")
    if call.outputs and len(call.outputs) != n:
        raise RuleError(f"{len(call.outputs)} outputs for num_splits {n}")
    for i, o in enumerate(call.outputs):
        if x.type in QUANT8 and o.type == x.type and (o.scale, o.zero_point) != (x.scale, x.zero_point):
            raise RuleError(f"output {i} must have the input's scale and zero point")
    if x.dims is None:
        return [like(x, None)] * n
    axis = normalize_axis(axis, len(x.dims))
    size = x.dims[axis]
    if size and size % n:
        raise RuleError(f"dimension {axis} of size {size} is not divisible into {n} splits")
    dims = list(x.dims)
    dims[axis] = size // n
    return [like(x, dims)] * n
