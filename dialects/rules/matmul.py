"""Rule for BATCH_MATMUL (NNAPI feature level 6): products of matrices in batches.

Shapes follow Android's ``BatchMatmul.cpp`` ``prepare``: both inputs have the
same rank, 2 to 4; the last two dimensions of each are a matrix, which
``adj_x`` / ``adj_y`` transpose (the operand types are real, so the adjoint is
the transpose); the inner sizes must agree and no size may be 0.

The batch dimensions (all but the last two) follow the kernel the reference
runs (TFLite's ``reference_ops::BatchMatMul``, which broadcasts them): each
pair is equal or one of them is 1, and the output takes the larger.  The NDK
text asks for "the same batch size"; the reference sizes its output from
input 0's batch dimensions, so the only broadcasts it computes correctly are
those where input 1 has the 1s -- nnc sizes the output from both, which
agrees there and is TFLite's semantics everywhere.
"""

from __future__ import annotations

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    broadcast_dims,
    expect_count,
    expect_primary,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.operands import bool_param
from nnc.enums import OperationType as Op


def matmul_dims(
    x: tuple[int, ...], y: tuple[int, ...], adj_x: bool, adj_y: bool
) -> tuple[tuple[int, ...], int, int, int]:
    """(batch dims, rows M, inner K, columns N) of ``x @ y`` with the
    adjoint flags; 0 marks a size not known yet."""
    if len(x) != len(y):
        raise RuleError(f"inputs have ranks {len(x)} and {len(y)}; they must be equal")
    if not 2 <= len(x) <= 4:
        raise RuleError(f"inputs must have rank 2 to 4, got {len(x)}")
    rx, cx = x[-2:]
    ry, cy = y[-2:]
    m, kx = (cx, rx) if adj_x else (rx, cx)
    ky, n = (cy, ry) if adj_y else (ry, cy)
    k = same_dim(kx, ky, "the inner dimensions of the two matrices differ")
    batch = broadcast_dims(x[:-2], y[:-2])
    assert batch is not None
    return batch, m, k, n


@rule(Op.BATCH_MATMUL)
def batch_matmul(call: OpCall) -> list[OperandInfo]:
    """input0 [..., r_x, c_x], input1 [..., r_y, c_y] of one type, adj_x and adj_y
    (BOOL, omitted: false) -> [..., r_o, c_o] of that type; quantised: the
    output has its own scale and zero point."""
    expect_count(call, (4,))
    x = expect_primary(call)
    y = expect_type(call, 1, (x.type,))
    adj_x, adj_y = bool_param(call, 2), bool_param(call, 3)
    if call.outputs and call.outputs[0].type != x.type:
        raise RuleError(f"output must be {x.type.name}, got {call.outputs[0].type.name}")
    if x.dims is None or y.dims is None:
        return [like(x, None)]
    batch, m, _, n = matmul_dims(x.dims, y.dims, adj_x, adj_y)
    return [like(x, (*batch, m, n))]
