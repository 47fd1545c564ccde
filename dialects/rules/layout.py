"""Rules for the NNAPI 1.1 layout operations: BATCH_TO_SPACE_ND,
SPACE_TO_BATCH_ND, PAD, SQUEEZE, STRIDED_SLICE, TRANSPOSE, and the reduction
MEAN.

Every one of them takes a TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_QUANT8_ASYMM
or TENSOR_QUANT8_ASYMM_SIGNED input (no TENSOR_INT32: Android's validation
rejects it) and produces an output of the same type.  Their TENSOR_INT32
parameter tensors (block shape, paddings, axes, begin/end/strides, perm) decide
the output shape, so their values must be known (constants, or model inputs
the compilation specialises on); every check that needs no value runs first,
so model validation still catches bad types and ranks.

RESIZE_NEAREST_NEIGHBOR shares RESIZE_BILINEAR's rule (shape_ops) and must
keep the input's quantisation.

Output shapes follow Android's ``nn/common/OperationsUtils`` (``*Prepare``)
and ``operations/{Squeeze,StridedSlice,Transpose}.cpp``; in particular a
SQUEEZE, STRIDED_SLICE or MEAN that removes every dimension yields shape [1].
The quantised output of a data-movement op holds the input's bytes, so its
scale and zero point must be the input's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_primary,
    expect_rank,
    expect_type,
    like,
    rule,
)
from nnc.dialects.rules.conv import bool_param, int_param, join_layout, split_layout
from nnc.dialects.rules.elementwise import QUANT8
from nnc.dialects.rules.shape_ops import expect_count, normalize_axis
from nnc.enums import OperationType as Op

MAX_RANK = 4


# -- shared checks ----------------------------------------------------------------------------


def _data_input(call: OpCall, ranks: Sequence[int] | None = None) -> OperandInfo:
    """Input 0: a tensor of the record's types, rank <= 4 (or one of ``ranks``)."""
    x = expect_primary(call)
    if x.omitted:
        raise RuleError("input 0 is required but omitted")
    if ranks is not None:
        expect_rank(call, 0, ranks)
    elif x.rank is not None and x.rank > MAX_RANK:
        raise RuleError(f"input 0 has rank {x.rank} > {MAX_RANK}")
    return x


def same_quant_output(call: OpCall, x: OperandInfo) -> None:
    """A quantised data-movement output must keep the input's scale and zero point."""
    if x.type not in QUANT8 or not call.outputs:
        return
    out = call.outputs[0]
    if out.type == x.type and (out.scale, out.zero_point) != (x.scale, x.zero_point):
        raise RuleError(
            f"output scale/zero point ({out.scale}, {out.zero_point}) must equal "
            f"the input's ({x.scale}, {x.zero_point})"
        )


def int_tensor(call: OpCall, i: int, rank: int, what: str) -> OperandInfo:
    """Input ``i`` must be a present TENSOR_INT32 of the given rank."""
    info = expect_type(call, i, (T.TENSOR_INT32,))
    if info.omitted:
        raise RuleError(f"input {i} ({what}) is required but omitted")
    expect_rank(call, i, rank)
    return info


def expect_dims(info: OperandInfo, i: int, want: Sequence[int], what: str) -> None:
    """Known dimensions of input ``i`` must equal ``want`` (0 in ``want``: any)."""
    if info.dims is None:
        return
    for have, need in zip(info.dims, want):
        if have and need and have != need:
            raise RuleError(f"input {i} ({what}) must have shape {list(want)}, got {list(info.dims)}")


def int_values(call: OpCall, i: int) -> list[int]:
    """The (constant or specialised) values of TENSOR_INT32 input ``i``."""
    return [int(v) for v in np.asarray(call.const(i)).reshape(-1)]


def _check_length(info: OperandInfo, i: int, values: Sequence[int], want: int | None, what: str) -> None:
    n = len(values)
    if info.dims and info.dims[0] and info.dims[0] != n:
        raise RuleError(f"input {i} ({what}) has {n} values, its dimension says {info.dims[0]}")
    if want is not None and n != want:
        raise RuleError(f"input {i} ({what}) must have {want} values, got {n}")


# -- BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND ----------------------------------------------------


def block_shape(call: OpCall) -> tuple[int, int]:
    """Input 1 of BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND: (block_h, block_w), each >= 1."""
    info = call.input(1)
    values = int_values(call, 1)
    _check_length(info, 1, values, 2, "block_shape")
    for v in values:
        if v < 1:
            raise RuleError(f"block sizes must be >= 1, got {values}")
    return values[0], values[1]


def paddings_of(call: OpCall, i: int, rank: int, what: str) -> list[tuple[int, int]]:
    """A [rank, 2] paddings tensor: (before, after) per dimension, each >= 0."""
    info = call.input(i)
    values = int_values(call, i)
    _check_length_2d(info, i, values, rank, what)
    pairs = [(values[2 * k], values[2 * k + 1]) for k in range(rank)]
    for before, after in pairs:
        if before < 0 or after < 0:
            raise RuleError(f"input {i} ({what}) must be >= 0, got {values}")
    return pairs


def _check_length_2d(info: OperandInfo, i: int, values: Sequence[int], rank: int, what: str) -> None:
    if len(values) != 2 * rank:
        raise RuleError(f"input {i} ({what}) must have shape [{rank}, 2], got {len(values)} values")
    expect_dims(info, i, (rank, 2), what)


@rule(Op.BATCH_TO_SPACE_ND)
def batch_to_space_nd(call: OpCall) -> list[OperandInfo]:
    """[b, h, w, c] -> [b / (bh*bw), h*bh, w*bw, c]; the batch must divide evenly."""
    n = expect_count(call, (2, 3))
    x = _data_input(call, (4,))
    info = int_tensor(call, 1, 1, "block_shape")
    expect_dims(info, 1, (2,), "block_shape")
    nchw = bool_param(call, 2) if n == 3 else False
    same_quant_output(call, x)
    bh, bw = block_shape(call)
    b, h, w, c = split_layout(x, nchw)
    if b and b % (bh * bw):
        raise RuleError(f"batch {b} is not divisible by the block size {bh}*{bw}")
    return [like(x, join_layout(b // (bh * bw), h * bh, w * bw, c, nchw))]


def space_to_batch_paddings(call: OpCall) -> list[tuple[int, int]]:
    """SPACE_TO_BATCH_ND's [2, 2] paddings: ((top, bottom), (left, right))."""
    return paddings_of(call, 2, 2, "paddings")


@rule(Op.SPACE_TO_BATCH_ND)
def space_to_batch_nd(call: OpCall) -> list[OperandInfo]:
    """[b, h, w, c] -> [b*bh*bw, (h+pads)/bh, (w+pads)/bw, c]; padded sizes
    must be multiples of the block."""
    n = expect_count(call, (3, 4))
    x = _data_input(call, (4,))
    info = int_tensor(call, 1, 1, "block_shape")
    expect_dims(info, 1, (2,), "block_shape")
    pads_info = int_tensor(call, 2, 2, "paddings")
    expect_dims(pads_info, 2, (2, 2), "paddings")
    nchw = bool_param(call, 3) if n == 4 else False
    same_quant_output(call, x)
    bh, bw = block_shape(call)
    (top, bottom), (left, right) = space_to_batch_paddings(call)
    b, h, w, c = split_layout(x, nchw)
    out_h = out_w = 0
    if h:
        padded = top + h + bottom
        if padded % bh:
            raise RuleError(f"padded height {padded} is not divisible by block height {bh}")
        out_h = padded // bh
    if w:
        padded = left + w + right
        if padded % bw:
            raise RuleError(f"padded width {padded} is not divisible by block width {bw}")
        out_w = padded // bw
    return [like(x, join_layout(b * bh * bw, out_h, out_w, c, nchw))]


# -- PAD --------------------------------------------------------------------------------------


def pad_paddings(call: OpCall, rank: int) -> list[tuple[int, int]]:
    """PAD's [rank, 2] paddings."""
    return paddings_of(call, 1, rank, "paddings")


@rule(Op.PAD)
def pad(call: OpCall) -> list[OperandInfo]:
    """output[i] = before[i] + input[i] + after[i]."""
    expect_count(call, (2,))
    x = _data_input(call)
    info = int_tensor(call, 1, 2, "paddings")
    if x.rank is not None:
        expect_dims(info, 1, (x.rank, 2), "paddings")
    else:
        expect_dims(info, 1, (0, 2), "paddings")
    same_quant_output(call, x)
    if x.dims is None:
        values = int_values(call, 1)
        if len(values) % 2:
            raise RuleError(f"input 1 (paddings) must have shape [rank, 2], got {len(values)} values")
        rank = len(values) // 2
        if rank > MAX_RANK:
            raise RuleError(f"paddings imply rank {rank} > {MAX_RANK}")
        pad_paddings(call, rank)
        return [like(x, (0,) * rank)]
    pairs = pad_paddings(call, len(x.dims))
    out = [before + d + after if d else 0 for d, (before, after) in zip(x.dims, pairs)]
    return [like(x, out)]


# -- SQUEEZE ----------------------------------------------------------------------------------


def squeeze_axes(call: OpCall, dims: Sequence[int]) -> set[int] | None:
    """The squeezed dimensions (non-negative), None if not known yet.

    Omitted axes squeeze every dimension of size 1 (unknown sizes make the
    answer unknown); listed axes must be in [-rank, rank) and of size 1.
    """
    rank = len(dims)
    if not call.has_input(1):
        if any(d <= 0 for d in dims):
            return None
        return {k for k, d in enumerate(dims) if d == 1}
    axes = set()
    for a in int_values(call, 1):
        a = normalize_axis(a, rank)
        if dims[a] > 1:
            raise RuleError(f"cannot squeeze dimension {a} of size {dims[a]}")
        axes.add(a)
    return axes


@rule(Op.SQUEEZE)
def squeeze(call: OpCall) -> list[OperandInfo]:
    """Drop the listed (or all) size-1 dimensions; dropping all gives [1]."""
    expect_count(call, (2,), optional=(1,))
    x = _data_input(call)
    if call.has_input(1):
        int_tensor(call, 1, 1, "axes")
    else:
        expect_type(call, 1, (T.TENSOR_INT32,))
    same_quant_output(call, x)
    if x.dims is None:
        if call.has_input(1):
            int_values(call, 1)  # a non-constant axes tensor is Unsupported, as with a known rank
        return [like(x, None)]
    axes = squeeze_axes(call, x.dims)
    if axes is None:
        return [like(x, None)]
    out = [d for k, d in enumerate(x.dims) if k not in axes]
    return [like(x, out or [1])]


# -- STRIDED_SLICE ----------------------------------------------------------------------------


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
        _check_length(call.input(i), i, values, rank, what)
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
    x = _data_input(call)
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


# -- TRANSPOSE --------------------------------------------------------------------------------


def transpose_perm(call: OpCall, rank: int) -> list[int]:
    """The permutation (output dim k is input dim perm[k]); omitted = reversed."""
    if not call.has_input(1):
        return list(range(rank - 1, -1, -1))
    perm = int_values(call, 1)
    _check_length(call.input(1), 1, perm, rank, "perm")
    if sorted(perm) != list(range(rank)):
        raise RuleError(f"perm {perm} is not a permutation of 0..{rank - 1}")
    return perm


@rule(Op.TRANSPOSE)
def transpose(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (2,), optional=(1,))
    x = _data_input(call)
    if call.has_input(1):
        info = int_tensor(call, 1, 1, "perm")
        if x.rank is not None:
            expect_dims(info, 1, (x.rank,), "perm")
    else:
        expect_type(call, 1, (T.TENSOR_INT32,))
    same_quant_output(call, x)
    if x.dims is None:
        if not call.has_input(1):
            return [like(x, None)]
        rank = len(int_values(call, 1))
        if rank > MAX_RANK:
            raise RuleError(f"perm implies rank {rank} > {MAX_RANK}")
        transpose_perm(call, rank)
        return [like(x, (0,) * rank)]
    perm = transpose_perm(call, len(x.dims))
    return [like(x, [x.dims[p] for p in perm])]


# -- MEAN -------------------------------------------------------------------------------------


def mean_axes(call: OpCall, rank: int) -> list[int]:
    """The reduced dimensions, non-negative, without repeats, in input order."""
    axes = set()
    for a in int_values(call, 1):
        axes.add(normalize_axis(a, rank))
    return sorted(axes)


def keep_dims(call: OpCall) -> bool:
    """MEAN's keep_dims: an INT32 where any positive value means true."""
    return int_param(call, 2) > 0


def mean_out_dims(dims: Sequence[int], axes: Sequence[int], keep: bool) -> list[int]:
    if keep:
        return [1 if k in axes else d for k, d in enumerate(dims)]
    return [d for k, d in enumerate(dims) if k not in axes] or [1]


@rule(Op.MEAN)
def mean(call: OpCall) -> list[OperandInfo]:
    """Average over the listed axes (repeats and negative axes allowed).

    Unlike the data-movement ops, a quantised output may declare its own scale
    and zero point: the lowering then requantises the mean."""
    expect_count(call, (3,))
    x = _data_input(call)
    int_tensor(call, 1, 1, "axes")
    expect_type(call, 2, (T.INT32,))
    keep = keep_dims(call)
    if x.dims is None:
        int_values(call, 1)
        return [like(x, None)]
    axes = mean_axes(call, len(x.dims))
    return [like(x, mean_out_dims(x.dims, axes, keep))]



# -- RESIZE_NEAREST_NEIGHBOR -------------------------------------------------------------------


@rule(Op.RESIZE_NEAREST_NEIGHBOR)
def resize_nearest_neighbor(call: OpCall) -> list[OperandInfo]:
    """Same signature and output shape as RESIZE_BILINEAR (by size or by
    scale, layout, align_corners, half_pixel_centers); the element gather
    copies stored values, so a quantised output keeps the input's
    quantisation."""
    from nnc.dialects.rules.shape_ops import resize_bilinear

    x = _data_input(call, (4,))
    same_quant_output(call, x)
    return resize_bilinear(call)
