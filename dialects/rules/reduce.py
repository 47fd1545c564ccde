"""Rules for the NNAPI 1.2 reductions: ARGMAX / ARGMIN (index of the
extreme along one axis) and REDUCE_SUM / PROD / MAX / MIN / ANY / ALL (over a
list of axes, with a BOOL keep_dims), and TOPK_V2 (the k largest along the
last dimension).

Output shapes follow Android's ``argMinMaxPrepare`` (the axis removed; a 1-D
input gives [1]) and ``reduce::prepare`` (like MEAN: reducing every dimension
without keep_dims gives [1]).  REDUCE_MAX / MIN of quantised data compare the
stored integers, so the output keeps the input's quantisation; so do
TOPK_V2's values (``topk_v2::prepare``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_count,
    expect_primary,
    expect_type,
    like,
    rule,
)
from nnc.dialects.rules.operands import (
    bool_param,
    data_input,
    int_param,
    int_tensor,
    int_values,
    normalize_axis,
    same_quant_output,
)
from nnc.enums import OperationType as Op


@rule(Op.ARGMAX, Op.ARGMIN)
def arg_min_max(call: OpCall) -> list[OperandInfo]:
    """input (rank >= 1), axis (INT32 in [-rank, rank)) -> TENSOR_INT32."""
    expect_count(call, (2,))
    x = expect_primary(call)
    axis = int_param(call, 1)
    out = replace(like(x, None, T.TENSOR_INT32), scale=0.0, zero_point=0, channel_quant=None)
    if x.dims is None:
        return [out]
    if x.rank == 0:
        raise RuleError("input must have rank >= 1")
    axis = normalize_axis(axis, len(x.dims))
    dims = [d for k, d in enumerate(x.dims) if k != axis] or [1]
    return [out.with_dims(dims)]


#: the REDUCE_* operations (their operand types: the records)
REDUCE_OPS = (Op.REDUCE_SUM, Op.REDUCE_PROD, Op.REDUCE_MAX, Op.REDUCE_MIN, Op.REDUCE_ANY, Op.REDUCE_ALL)


def reduce_axes(call: OpCall, rank: int) -> list[int]:
    """The reduced dimensions (sorted, non-negative, no repeats)."""
    return mean_axes(call, rank)


def reduce_keep_dims(call: OpCall) -> bool:
    return bool_param(call, 2)


@rule(*REDUCE_OPS)
def reduce(call: OpCall) -> list[OperandInfo]:
    """input (rank 1..4), axes (1-D TENSOR_INT32), keep_dims (BOOL)."""
    expect_count(call, (3,))
    x = expect_primary(call)
    if x.rank is not None and not 1 <= x.rank <= 4:
        raise RuleError(f"input must have rank 1 to 4, got {x.rank}")
    int_tensor(call, 1, 1, "axes")
    keep = reduce_keep_dims(call)
    same_quant_output(call, x)
    if x.dims is None:
        int_values(call, 1)
        return [like(x, None)]
    return [like(x, mean_out_dims(x.dims, reduce_axes(call, len(x.dims)), keep))]


@rule(Op.TOPK_V2)
def topk_v2(call: OpCall) -> list[OperandInfo]:
    """input (rank >= 1), k (INT32 in [1, last dimension]) -> the k largest
    values along the last dimension (the input's type and quantisation) and
    their indices (TENSOR_INT32), as Android's ``topk_v2::prepare``."""
    expect_count(call, (2,))
    x = expect_primary(call)
    k = int_param(call, 1)
    same_quant_output(call, x)
    indices = replace(like(x, None, T.TENSOR_INT32), scale=0.0, zero_point=0, channel_quant=None)
    if x.dims is None:
        return [like(x, None), indices]
    if x.rank == 0:
        raise RuleError("input must have rank >= 1")
    last = x.dims[-1]
    if k < 1 or (last and k > last):
        raise RuleError(f"k must be in [1, {last or 'the last dimension'}], got {k}")
    dims = (*x.dims[:-1], k)
    return [like(x, dims), indices.with_dims(dims)]


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
    x = data_input(call)
    int_tensor(call, 1, 1, "axes")
    expect_type(call, 2, (T.INT32,))
    keep = keep_dims(call)
    if x.dims is None:
        int_values(call, 1)
        return [like(x, None)]
    axes = mean_axes(call, len(x.dims))
    return [like(x, mean_out_dims(x.dims, axes, keep))]
