"""Operand checks shared by the data-movement families (pad, reshape, slice,
concat, rearrange, resize, lookup, generate) and the reductions: the data
input, TENSOR_INT32 parameter tensors whose values decide the output shape,
axes and paddings.

A quantised data-movement output holds the input's bytes, so its scale and
zero point must be the input's (:func:`same_quant_output`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_primary,
    expect_rank,
    expect_type,
)
from nnc.dialects.rules.elementwise import QUANT8
from nnc.enums import OperandType

MAX_RANK = 4


def data_input(call: OpCall, ranks: Sequence[int] | None = None, max_rank: int | None = MAX_RANK) -> OperandInfo:
    """Input 0: a present tensor of the record's types, of one of ``ranks`` or
    else of rank <= ``max_rank`` (None: any rank)."""
    x = expect_primary(call)
    if x.omitted:
        raise RuleError("input 0 is required but omitted")
    if ranks is not None:
        expect_rank(call, 0, ranks)
    elif max_rank is not None and x.rank is not None and x.rank > max_rank:
        raise RuleError(f"input 0 has rank {x.rank} > {max_rank}")
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


def check_length(info: OperandInfo, i: int, values: Sequence[int], want: int | None, what: str) -> None:
    n = len(values)
    if info.dims and info.dims[0] and info.dims[0] != n:
        raise RuleError(f"input {i} ({what}) has {n} values, its dimension says {info.dims[0]}")
    if want is not None and n != want:
        raise RuleError(f"input {i} ({what}) must have {want} values, got {n}")


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


def normalize_axis(axis: int, rank: int) -> int:
    """An axis in [-rank, rank) as a non-negative index (RuleError otherwise)."""
    if not -rank <= axis < rank:
        raise RuleError(f"axis {axis} out of range for rank {rank}")
    return axis % rank


def scalar_param(call: OpCall, i: int, types: Iterable[OperandType], default=None):
    """The value of scalar input ``i`` after checking its operand type.

    With a ``default``, an absent or omitted input yields the default.
    """
    if default is not None and not call.has_input(i):
        return default
    expect_type(call, i, types)
    return call.scalar(i, default)

def int_param(call: OpCall, i: int, default: int | None = None) -> int:
    return scalar_param(call, i, (T.INT32,), default)

def bool_param(call: OpCall, i: int, default: bool = False) -> bool:
    return bool(scalar_param(call, i, (T.BOOL,), default))

def dim(info: OperandInfo, k: int) -> int:
    """Dimension ``k`` of ``info`` (0 when the rank or the size is unknown)."""
    if info.dims is None or not -len(info.dims) <= k < len(info.dims):
        return 0
    return max(int(info.dims[k]), 0)

def split_layout(info: OperandInfo, nchw: bool) -> tuple[int, int, int, int]:
    """(batches, height, width, channels) of a rank-4 operand; 0 = unknown."""
    if nchw:
        return dim(info, 0), dim(info, 2), dim(info, 3), dim(info, 1)
    return dim(info, 0), dim(info, 1), dim(info, 2), dim(info, 3)

def join_layout(n: int, h: int, w: int, c: int, nchw: bool) -> tuple[int, int, int, int]:
    return (n, c, h, w) if nchw else (n, h, w, c)

def known_product(dims: Sequence[int] | None) -> int:
    """The number of elements, or 0 if any dimension (or the rank) is unknown."""
    if dims is None:
        return 0
    n = 1
    for d in dims:
        if d <= 0:
            return 0
        n *= int(d)
    return n
