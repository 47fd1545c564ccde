"""Rules for the NNAPI 1.2+ tensor-construction and data-movement operations:
SLICE, SPLIT, TILE, EXPAND_DIMS, PAD_V2, MIRROR_PAD, REVERSE, CHANNEL_SHUFFLE,
PACK and FILL, and RANK (an INT32 scalar; ``nnapi-shape-inference`` folds it
into a constant for the operations that read it).

Shapes follow Android's ``operations/{Slice,Split,Tile,ExpandDims,Pad,
MirrorPad,Reverse,ChannelShuffle,Pack,Fill}.cpp`` prepare functions.  The
quantised output of a data-movement op holds the input's bytes, so its scale
and zero point must be the input's (as Android checks for SLICE, PAD_V2, ...).
TENSOR_INT32 parameter tensors that decide the output shape (begin/size,
multiples, paddings, dims) must be known when the model is compiled.
"""

from __future__ import annotations

from dataclasses import replace

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_primary,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.conv import dim, int_param, scalar_param
from nnc.dialects.rules.elementwise import QUANT8
from nnc.dialects.rules.layout import (
    expect_dims,
    int_tensor,
    int_values,
    paddings_of,
    same_quant_output,
)
from nnc.dialects.rules.shape_ops import expect_count, normalize_axis
from nnc.enums import OperationType as Op


def _data(call: OpCall, max_rank: int | None = None) -> OperandInfo:
    """Input 0, of one of the record's types and rank <= ``max_rank``."""
    x = expect_primary(call)
    if x.omitted:
        raise RuleError("input 0 is required but omitted")
    if max_rank is not None and x.rank is not None and x.rank > max_rank:
        raise RuleError(f"input 0 has rank {x.rank} > {max_rank}")
    return x


# -- SLICE -----------------------------------------------------------------------------------


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
    x = _data(call)
    int_tensor(call, 1, 1, "begin")
    int_tensor(call, 2, 1, "size")
    same_quant_output(call, x)
    if x.dims is None:
        return [like(x, (0,) * len(int_values(call, 1)))]
    return [like(x, [s for _, s in slice_bounds(call, x.dims)])]


# -- SPLIT -----------------------------------------------------------------------------------


@rule(Op.SPLIT)
def split(call: OpCall) -> list[OperandInfo]:
    """``num_splits`` equal parts along ``axis``; one output each."""
    expect_count(call, (3,))
    x = _data(call)
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


# -- TILE, EXPAND_DIMS ----------------------------------------------------------------------


@rule(Op.TILE)
def tile(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (2,))
    x = _data(call)
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


@rule(Op.EXPAND_DIMS)
def expand_dims(call: OpCall) -> list[OperandInfo]:
    """A dimension of size 1 inserted at ``axis`` in [-(n + 1), n]."""
    expect_count(call, (2,))
    x = _data(call)
    axis = int_param(call, 1)
    same_quant_output(call, x)
    if x.dims is None:
        return [like(x, None)]
    axis = normalize_axis(axis, len(x.dims) + 1)
    return [like(x, (*x.dims[:axis], 1, *x.dims[axis:]))]


# -- PAD_V2, MIRROR_PAD ---------------------------------------------------------------------


def _pad_common(call: OpCall, max_rank: int | None = 4) -> tuple[OperandInfo, list[int] | None]:
    """PAD_V2 takes rank <= 4; MIRROR_PAD any rank from 1 (its spec tests rank 10)."""
    x = _data(call, max_rank=max_rank)
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


# -- REVERSE, CHANNEL_SHUFFLE ----------------------------------------------------------------


def reverse_axis(call: OpCall, rank: int) -> int:
    values = int_values(call, 1)
    if len(values) != 1:
        raise RuleError(f"axis must have exactly 1 value, got {len(values)}")
    return normalize_axis(values[0], rank)


@rule(Op.REVERSE)
def reverse(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (2,))
    x = _data(call, max_rank=8)
    int_tensor(call, 1, 1, "axis")
    same_quant_output(call, x)
    if x.dims is not None:
        reverse_axis(call, len(x.dims))
    return [like(x, x.dims)]


@rule(Op.CHANNEL_SHUFFLE)
def channel_shuffle(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (3,))
    x = _data(call, max_rank=4)
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


# -- PACK, FILL -----------------------------------------------------------------------------


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


#: FILL: output tensor type -> value scalar type
FILL_TYPES = {T.TENSOR_FLOAT32: T.FLOAT32, T.TENSOR_FLOAT16: T.FLOAT16, T.TENSOR_INT32: T.INT32}


@rule(Op.FILL)
def fill(call: OpCall) -> list[OperandInfo]:
    """dims (1-D TENSOR_INT32, every value > 0), value (the output's scalar type)."""
    expect_count(call, (2,))
    int_tensor(call, 0, 1, "dims")
    value = call.input(1)
    out_type = {v: k for k, v in FILL_TYPES.items()}.get(value.type)
    if out_type is None:
        raise RuleError(f"input 1 must be FLOAT32, FLOAT16 or INT32, got {value.type.name}")
    if call.outputs and call.outputs[0].type != out_type:
        raise RuleError(f"output must be {out_type.name} for a {value.type.name} value")
    dims = int_values(call, 0)
    if dim(call.input(0), 0) and dim(call.input(0), 0) != len(dims):
        raise RuleError(f"dims has {len(dims)} values, its dimension says {dim(call.input(0), 0)}")
    if any(d <= 0 for d in dims):
        raise RuleError(f"dims must be > 0, got {dims}")
    return [replace(OperandInfo(out_type, tuple(dims)), omitted=False)]


@rule(Op.RANK)
def rank(call: OpCall) -> list[OperandInfo]:
    """Any tensor in; an INT32 scalar out (its value is the input's rank)."""
    expect_count(call, (1,))
    x = call.input(0)
    if not x.type.is_tensor:
        raise RuleError(f"input 0 must be a tensor, got {x.type.name}")
    return [OperandInfo(T.INT32, ())]


@rule(Op.RANDOM_MULTINOMIAL)
def random_multinomial(call: OpCall) -> list[OperandInfo]:
    """input [batches, classes] (log-probabilities), num_samples (INT32 > 0),
    seeds (TENSOR_INT32 [2]) -> TENSOR_INT32 [batches, num_samples], as
    Android's ``Multinomial::Prepare``."""
    expect_count(call, (3,))
    x = _data(call)
    if x.rank is not None and x.rank != 2:
        raise RuleError(f"input 0 must have rank 2, got {x.rank}")
    samples = int_param(call, 1)
    if samples <= 0:
        raise RuleError(f"num_samples must be > 0, got {samples}")
    seeds = int_tensor(call, 2, 1, "seeds")
    expect_dims(seeds, 2, (2,), "seeds")
    return [OperandInfo(T.TENSOR_INT32, (dim(x, 0), samples))]
