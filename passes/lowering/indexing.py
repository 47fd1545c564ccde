"""Index helpers shared by the data-movement lowerings (pad, reshape, slice,
concat, rearrange, resize, lookup): NHWC/NCHW index order, unsigned index
arithmetic, static windows and the ``out[idx] = in[coords(idx)]`` copy.

The data-movement operations compute every coordinate from non-negative loop
indices, so division and remainder are single unsigned operations with no
sign fix-ups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType

from nnc.passes.lowering.base import QUANT8, Emitter, LoweringContext, Value, identity_map

_I = TypeVar("_I")


def zero_value(ctx: LoweringContext, i: int = 0) -> int | float:
    """The stored value of 0.0 in input ``i``: its zero point if quantised."""
    info = ctx.info(i)
    return info.zero_point if info.type in QUANT8 else 0.0


def nchw_flag(ctx: LoweringContext, i: int) -> bool:
    """The operation's optional layout scalar (input ``i``): true for NCHW."""
    return bool(ctx.scalar(i, False))


def split_nhwc(idx: Sequence[_I], nchw: bool) -> tuple[_I, _I, _I, _I]:
    """(batch, y, x, channel) from the indices (or sizes) of a 4-D NHWC/NCHW tensor."""
    b, d1, d2, d3 = idx
    return (b, d2, d3, d1) if nchw else (b, d1, d2, d3)


def join_nhwc(b, y, x, c, nchw: bool) -> list:
    """The indices of a 4-D NHWC/NCHW tensor from (batch, y, x, channel)."""
    return [b, c, y, x] if nchw else [b, y, x, c]


def index_div(e: Emitter, a: Value, b: Value | int) -> Value:
    """Quotient of non-negative indices (one unsigned division, no guards)."""
    return e.op(arith.DivUIOp(a, e.index(b)))


def index_rem(e: Emitter, a: Value, b: Value | int) -> Value:
    """Remainder of non-negative indices."""
    return e.op(arith.RemUIOp(a, e.index(b)))


def window(ctx: LoweringContext, buf: Value, offsets: Sequence[int], sizes: Sequence[int]) -> Value:
    """A static unit-stride subview of ``buf``."""
    assert isinstance(buf.type, MemRefType)
    view = memref.SubviewOp.from_static_parameters(buf, buf.type, list(offsets), list(sizes), [1] * len(sizes))
    ctx.builder.insert(view)
    return view.result


def gather_copy(ctx: LoweringContext, coords: Callable[[Emitter, Sequence[Value]], Sequence[Value]]) -> None:
    """``out[idx] = in[coords(idx)]`` over the whole output."""
    x, out = ctx.input(0), ctx.output()
    oshape = ctx.shape(out)
    if not all(ctx.shape(x)):
        return
    ctx.generic(oshape, [], [(out, identity_map(len(oshape)))], lambda e, a, idx: [e.load(x, coords(e, idx))])
