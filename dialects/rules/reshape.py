"""Rules for the operations that change a shape without moving elements:
RESHAPE, SQUEEZE, EXPAND_DIMS, and RANK (an INT32 scalar; ``nnapi-shape-inference``
folds it into a constant for the operations that read it).

A SQUEEZE that removes every dimension yields shape [1], as Android's
``operations/Squeeze.cpp`` does.  Quantised outputs keep the input's scale and
zero point: the bytes are the input's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_count,
    expect_primary,
    expect_rank,
    expect_type,
    like,
    rule,
)
from nnc.dialects.rules.operands import (
    data_input,
    dim,
    int_param,
    int_tensor,
    int_values,
    known_product,
    normalize_axis,
    same_quant_output,
)
from nnc.enums import OperationType as Op


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
    x = data_input(call)
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


@rule(Op.RESHAPE)
def reshape(call: OpCall) -> list[OperandInfo]:
    """Output shape from the (constant) 1-D shape tensor; one -1 is inferred."""
    expect_count(call, (2,))
    x = expect_primary(call)
    if x.rank is not None and x.rank > 4:
        raise RuleError(f"input has rank {x.rank} > 4")
    expect_type(call, 1, (T.TENSOR_INT32,))
    expect_rank(call, 1, 1)
    target = [int(v) for v in np.asarray(call.const(1)).reshape(-1)]
    if dim(call.input(1), 0) and dim(call.input(1), 0) != len(target):
        raise RuleError(
            f"shape tensor has {len(target)} values, dimension says {dim(call.input(1), 0)}"
        )
    stretch = [i for i, v in enumerate(target) if v == -1]
    if len(stretch) > 1:
        raise RuleError("at most one component of the shape may be -1")
    bad = [v for v in target if v < -1]
    if bad:
        raise RuleError(f"invalid shape component {bad[0]}")
    n_in = known_product(x.dims)
    known = 1
    for v in target:
        if v != -1:
            known *= v
    out = list(target)
    if stretch:
        if n_in and known == 0:
            raise RuleError(f"cannot infer -1: the other components multiply to 0 ({target})")
        if n_in:
            if n_in % known:
                raise RuleError(f"input has {n_in} elements, not divisible into shape {target}")
            out[stretch[0]] = n_in // known
        else:
            out[stretch[0]] = 0
    elif n_in and known != n_in:
        raise RuleError(f"shape {target} has {known} elements, the input has {n_in}")
    return [like(x, out)]


@rule(Op.EXPAND_DIMS)
def expand_dims(call: OpCall) -> list[OperandInfo]:
    """A dimension of size 1 inserted at ``axis`` in [-(n + 1), n]."""
    expect_count(call, (2,))
    x = data_input(call, max_rank=None)
    axis = int_param(call, 1)
    same_quant_output(call, x)
    if x.dims is None:
        return [like(x, None)]
    axis = normalize_axis(axis, len(x.dims) + 1)
    return [like(x, (*x.dims[:axis], 1, *x.dims[axis:]))]


@rule(Op.RANK)
def rank(call: OpCall) -> list[OperandInfo]:
    """Any tensor in; an INT32 scalar out (its value is the input's rank)."""
    expect_count(call, (1,))
    x = call.input(0)
    if not x.type.is_tensor:
        raise RuleError(f"input 0 must be a tensor, got {x.type.name}")
    return [OperandInfo(T.INT32, ())]
