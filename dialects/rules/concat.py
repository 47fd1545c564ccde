"""Rules for the operations that join tensors or repeat one: CONCATENATION,
PACK (stack along a new axis) and TILE.

CONCATENATION's quantised inputs may have their own scales and zero points
(the lowering requantises them to the output's); PACK's and TILE's quantised
output keeps the input's.
"""

from __future__ import annotations

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    check_present,
    expect_count,
    expect_primary,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.elementwise import QUANT8
from nnc.dialects.rules.operands import (
    data_input,
    dim,
    int_param,
    int_tensor,
    int_values,
    normalize_axis,
    same_quant_output,
)
from nnc.enums import OperationType as Op


@rule(Op.CONCATENATION)
def concatenation(call: OpCall) -> list[OperandInfo]:
    """Inputs 0..n-2 are tensors of one type and rank; input n-1 is the axis."""
    n = len(call.inputs)
    if n < 2:
        raise RuleError(f"expected at least 2 inputs, got {n}")
    check_present(call)
    x0 = expect_primary(call)
    tensors = [expect_type(call, i, (x0.type,)) for i in range(n - 1)]
    axis = int_param(call, n - 1)
    ranks = {t.rank for t in tensors if t.rank is not None}
    if len(ranks) > 1:
        raise RuleError(f"inputs have different ranks {sorted(ranks)}")
    if not ranks:
        return [like(x0, None)]
    rank = ranks.pop()
    if rank > 4:
        raise RuleError(f"inputs have rank {rank} > 4")
    if rank == 0:
        raise RuleError("inputs must have rank >= 1")
    axis = normalize_axis(axis, rank)
    out = [0] * rank
    total = 0
    for d in range(rank):
        if d == axis:
            sizes = [dim(t, d) for t in tensors]
            total = sum(sizes) if all(sizes) and all(t.dims is not None for t in tensors) else 0
            out[d] = total
        else:
            for i, t in enumerate(tensors):
                out[d] = same_dim(out[d], dim(t, d), f"input {i} differs in dimension {d}")
    return [like(x0, out)]


@rule(Op.TILE)
def tile(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (2,))
    x = data_input(call, max_rank=None)
    int_tensor(call, 1, 1, "multiples")
    same_quant_output(call, x)
    m = int_values(call, 1)
    if x.dims is None:
        return [like(x, (0,) * len(m))]
    if len(m) != x.rank:
        raise RuleError(f"multiples must have {x.rank} values, got {len(m)}")
    if any(v < 1 for v in m):
        raise RuleError(f"multiples must be >= 1, got {m}")
    return [like(x, [d * v for d, v in zip(x.dims, m)])]


@rule(Op.PACK)
def pack(call: OpCall) -> list[OperandInfo]:
    """axis, then n >= 1 tensors of one type and shape; output rank + 1."""
    if len(call.inputs) < 2:
        raise RuleError(f"expected at least 2 inputs, got {len(call.inputs)}")
    axis = int_param(call, 0)
    x = expect_primary(call)
    dims = x.dims
    for i in range(2, len(call.inputs)):
        o = expect_type(call, i, (x.type,))
        if x.type in QUANT8 and (o.scale, o.zero_point) != (x.scale, x.zero_point):
            raise RuleError(f"input {i} must have input 1's scale and zero point")
        if dims is None or o.dims is None:
            dims = dims or o.dims
            continue
        if len(o.dims) != len(dims):
            raise RuleError(f"input {i} has rank {len(o.dims)}, input 1 has {len(dims)}")
        dims = tuple(same_dim(a, b, f"input {i} differs in shape") for a, b in zip(dims, o.dims))
    if call.outputs and x.type in QUANT8:
        out = call.outputs[0]
        if out.type == x.type and (out.scale, out.zero_point) != (x.scale, x.zero_point):
            raise RuleError("the output must have the inputs' scale and zero point")
    if dims is None:
        return [like(x, None)]
    axis = normalize_axis(axis, len(dims) + 1)
    n = len(call.inputs) - 1
    return [like(x, (*dims[:axis], n, *dims[axis:]))]
