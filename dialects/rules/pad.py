"""Rules for the padding operations: PAD, PAD_V2 (an explicit pad value) and
MIRROR_PAD (reflect or symmetric).

The [rank, 2] paddings tensor decides the output shape, so its values must be
known when the model is compiled.  A quantised output keeps the input's scale
and zero point; PAD pads quantised data with the zero point, as Android does
since feature level 3.  Shapes follow Android's ``padPrepare`` and
``operations/{Pad,MirrorPad}.cpp``.
"""

from __future__ import annotations

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_count,
    like,
    rule,
)
from nnc.dialects.rules.operands import (
    MAX_RANK,
    data_input,
    expect_dims,
    int_param,
    int_tensor,
    int_values,
    paddings_of,
    same_quant_output,
    scalar_param,
)
from nnc.enums import OperationType as Op


def pad_paddings(call: OpCall, rank: int) -> list[tuple[int, int]]:
    """PAD's [rank, 2] paddings."""
    return paddings_of(call, 1, rank, "paddings")


@rule(Op.PAD)
def pad(call: OpCall) -> list[OperandInfo]:
    """output[i] = before[i] + input[i] + after[i]."""
    expect_count(call, (2,))
    x = data_input(call)
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


def _pad_common(call: OpCall, max_rank: int | None = 4) -> tuple[OperandInfo, list[int] | None]:
    """PAD_V2 takes rank <= 4; MIRROR_PAD any rank from 1 (its spec tests rank 10)."""
    x = data_input(call, max_rank=max_rank)
    info = int_tensor(call, 1, 2, "paddings")
    expect_dims(info, 1, (x.rank or 0, 2), "paddings")
    same_quant_output(call, x)
    if x.dims is None:
        values = int_values(call, 1)
        return x, None if len(values) % 2 else [0] * (len(values) // 2)
    pairs = paddings_of(call, 1, len(x.dims), "paddings")
    return x, [b + d + a if d else 0 for d, (b, a) in zip(x.dims, pairs)]


#: the pad value's scalar type for each PAD_V2 input type (quantised: the stored integer)
PAD_VALUE_TYPES = {T.TENSOR_FLOAT32: T.FLOAT32, T.TENSOR_FLOAT16: T.FLOAT16,
                   T.TENSOR_QUANT8_ASYMM: T.INT32, T.TENSOR_QUANT8_ASYMM_SIGNED: T.INT32}  # fmt: skip


@rule(Op.PAD_V2)
def pad_v2(call: OpCall) -> list[OperandInfo]:
    """PAD with an explicit pad value (FLOAT32/FLOAT16, or INT32 for quantised)."""
    expect_count(call, (3,))
    x, dims = _pad_common(call)
    scalar_param(call, 2, (PAD_VALUE_TYPES[x.type],))
    return [like(x, dims)]


@rule(Op.MIRROR_PAD)
def mirror_pad(call: OpCall) -> list[OperandInfo]:
    """mode 0 = REFLECT (paddings < dim), 1 = SYMMETRIC (paddings <= dim)."""
    expect_count(call, (3,))
    x, dims = _pad_common(call, max_rank=None)
    if x.rank == 0:
        raise RuleError("input 0 must have rank 1 or more")
    mode = int_param(call, 2)
    if mode not in (0, 1):
        raise RuleError(f"mode must be 0 (REFLECT) or 1 (SYMMETRIC), got {mode}")
    if x.dims is not None:
        for k, (b, a) in enumerate(paddings_of(call, 1, len(x.dims), "paddings")):
            d = x.dims[k]
            limit = d - 1 if mode == 0 else d
            if d and (b > limit or a > limit):
                raise RuleError(f"paddings ({b}, {a}) too large for dimension {k} of size {d}")
    return [like(x, dims)]
