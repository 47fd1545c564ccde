"""Rules for the operations that permute elements: TRANSPOSE, REVERSE,
CHANNEL_SHUFFLE, and the block rearrangements DEPTH_TO_SPACE, SPACE_TO_DEPTH,
BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND.

Their TENSOR_INT32 parameter tensors (perm, block shape, paddings, axis)
decide the output shape, so their values must be known when the model is
compiled; every check that needs no value runs first, so model validation
still catches bad types and ranks.  Quantised outputs keep the input's scale
and zero point.  Shapes follow Android's ``nn/common/OperationsUtils``
(``*Prepare``) and ``operations/{Transpose,Reverse,ChannelShuffle}.cpp``.
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
)
from nnc.dialects.rules.operands import (
    MAX_RANK,
    bool_param,
    check_length,
    data_input,
    expect_dims,
    int_param,
    int_tensor,
    int_values,
    join_layout,
    normalize_axis,
    paddings_of,
    same_quant_output,
    split_layout,
)
from nnc.enums import OperationType as Op


def block_shape(call: OpCall) -> tuple[int, int]:
    """Input 1 of BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND: (block_h, block_w), each >= 1."""
    info = call.input(1)
    values = int_values(call, 1)
    check_length(info, 1, values, 2, "block_shape")
    for v in values:
        if v < 1:
            raise RuleError(f"block sizes must be >= 1, got {values}")
    return values[0], values[1]


@rule(Op.BATCH_TO_SPACE_ND)
def batch_to_space_nd(call: OpCall) -> list[OperandInfo]:
    """[b, h, w, c] -> [b / (bh*bw), h*bh, w*bw, c]; the batch must divide evenly."""
    n = expect_count(call, (2, 3))
    x = data_input(call, (4,))
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
    x = data_input(call, (4,))
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


def transpose_perm(call: OpCall, rank: int) -> list[int]:
    """The permutation (output dim k is input dim perm[k]); omitted = reversed."""
    if not call.has_input(1):
        return list(range(rank - 1, -1, -1))
    perm = int_values(call, 1)
    check_length(call.input(1), 1, perm, rank, "perm")
    if sorted(perm) != list(range(rank)):
        raise RuleError(f"perm {perm} is not a permutation of 0..{rank - 1}")
    return perm


@rule(Op.TRANSPOSE)
def transpose(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (2,), optional=(1,))
    x = data_input(call)
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


def _block_op(call: OpCall) -> tuple[OperandInfo, int, bool]:
    n = expect_count(call, (2, 3))
    x = expect_primary(call)
    expect_rank(call, 0, 4)
    block = int_param(call, 1)
    if block < 1:
        raise RuleError(f"block_size must be >= 1, got {block}")
    nchw = bool_param(call, 2) if n == 3 else False
    return x, block, nchw


@rule(Op.DEPTH_TO_SPACE)
def depth_to_space(call: OpCall) -> list[OperandInfo]:
    x, block, nchw = _block_op(call)
    n, h, w, c = split_layout(x, nchw)
    if c and c % (block * block):
        raise RuleError(f"depth {c} is not divisible by block_size^2 = {block * block}")
    return [like(x, join_layout(n, h * block, w * block, c // (block * block), nchw))]


@rule(Op.SPACE_TO_DEPTH)
def space_to_depth(call: OpCall) -> list[OperandInfo]:
    x, block, nchw = _block_op(call)
    n, h, w, c = split_layout(x, nchw)
    for size, what in ((h, "height"), (w, "width")):
        if size and size % block:
            raise RuleError(f"input {what} {size} is not divisible by block_size {block}")
    return [like(x, join_layout(n, h // block, w // block, c * block * block, nchw))]


def reverse_axis(call: OpCall, rank: int) -> int:
    values = int_values(call, 1)
    if len(values) != 1:
        raise RuleError(f"axis must have exactly 1 value, got {len(values)}")
    return normalize_axis(values[0], rank)


@rule(Op.REVERSE)
def reverse(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (2,))
    x = data_input(call, max_rank=8)
    int_tensor(call, 1, 1, "axis")
    same_quant_output(call, x)
    if x.dims is not None:
        reverse_axis(call, len(x.dims))
    return [like(x, x.dims)]


@rule(Op.CHANNEL_SHUFFLE)
def channel_shuffle(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (3,))
    x = data_input(call, max_rank=4)
    groups = int_param(call, 1)
    axis = int_param(call, 2)
    same_quant_output(call, x)
    if groups < 1:
        raise RuleError(f"num_groups must be >= 1, got {groups}")
    if x.dims is not None:
        axis = normalize_axis(axis, len(x.dims))
        if x.dims[axis] and x.dims[axis] % groups:
            raise RuleError(f"dimension {axis} of size {x.dims[axis]} is not divisible by num_groups {groups}")
    return [like(x, x.dims)]
