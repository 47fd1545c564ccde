"""Rules for the lookups: EMBEDDING_LOOKUP, HASHTABLE_LOOKUP and GATHER.

The output shape follows the index tensor's; a quantised output keeps the
values' scale and zero point.
"""

from __future__ import annotations

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
    same_dim,
)
from nnc.dialects.rules.operands import dim, int_param, normalize_axis
from nnc.enums import OperationType as Op


@rule(Op.HASHTABLE_LOOKUP)
def hashtable_lookup(call: OpCall) -> list[OperandInfo]:
    """Inputs: lookups [k], keys [n], values [n, ...]; outputs: output [k, ...], hits [k]."""
    expect_count(call, (3,))
    expect_type(call, 0, (T.TENSOR_INT32,))
    expect_type(call, 1, (T.TENSOR_INT32,))
    values = expect_primary(call)
    expect_rank(call, 0, 1)
    expect_rank(call, 1, 1)
    if values.rank is not None and values.rank < 2:
        raise RuleError(f"values must have rank >= 2, got {values.rank}")
    same_dim(dim(call.input(1), 0), dim(values, 0), "keys and values differ in size")
    k = dim(call.input(0), 0)
    out = None if values.dims is None else (k, *values.dims[1:])
    hits = OperandInfo(T.TENSOR_QUANT8_ASYMM, (k,), scale=1.0, zero_point=0)
    return [like(values, out), hits]


@rule(Op.EMBEDDING_LOOKUP)
def embedding_lookup(call: OpCall) -> list[OperandInfo]:
    """Inputs: lookups [k] (TENSOR_INT32), values [n, ...]; output [k, ...]."""
    expect_count(call, (2,))
    expect_type(call, 0, (T.TENSOR_INT32,))
    values = expect_primary(call)
    expect_rank(call, 0, 1)
    if values.rank is not None and values.rank < 2:
        raise RuleError(f"values must have rank >= 2, got {values.rank}")
    lookups = call.input(0).value
    rows = values.dims[0] if values.dims else 0
    if lookups is not None and rows:
        bad = [int(v) for v in lookups.reshape(-1) if not 0 <= int(v) < rows]
        if bad:
            raise RuleError(f"lookup value {bad[0]} is outside the {rows} rows of values")
    k = dim(call.input(0), 0)
    out = None if values.dims is None else (k, *values.dims[1:])
    return [like(values, out)]


@rule(Op.GATHER)
def gather(call: OpCall) -> list[OperandInfo]:
    """Inputs: input [n-D, n >= 1], axis (INT32 in [-n, n)), indices (TENSOR_INT32
    of any rank); output input.dims[:axis] + indices.dims + input.dims[axis+1:]
    with the input's type and quantisation.

    Constant indices outside the gathered dimension are rejected here, as for
    EMBEDDING_LOOKUP; indices known only at execution are checked by the
    generated code, which reports them through the operation's status."""
    expect_count(call, (3,))
    x = expect_primary(call)
    axis = int_param(call, 1)
    indices = expect_type(call, 2, (T.TENSOR_INT32,))
    if x.rank == 0:
        raise RuleError("input must have rank >= 1")
    if x.dims is None:
        return [like(x, None)]
    axis = normalize_axis(axis, len(x.dims))
    size = dim(x, axis)
    if indices.value is not None and size:
        bad = [int(v) for v in indices.value.reshape(-1) if not 0 <= int(v) < size]
        if bad:
            raise RuleError(f"index {bad[0]} is outside dimension {axis} (size {size}) of the input")
    if indices.dims is None:
        return [like(x, None)]
    return [like(x, (*x.dims[:axis], *indices.dims, *x.dims[axis + 1 :]))]
