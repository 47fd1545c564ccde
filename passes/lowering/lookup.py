"""Lowerings of EMBEDDING_LOOKUP, HASHTABLE_LOOKUP and GATHER.

Lookups never read out of bounds: EMBEDDING_LOOKUP and GATHER load index 0
in place of an index out of range, zero what it would have produced and
record it in the operation's status (the runtime then raises an error naming
the operation); constant indices are checked at compile time.  HASHTABLE_LOOKUP binary-searches the (ascending)
keys with a clamped probe, like Android's ``bsearch``, and writes a zero row
and hit 0 for a miss.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import i1, i8, i32
from xdsl.utils.exceptions import PassFailedException

from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import (
    Emitter,
    LoweringContext,
    Value,
    affine_map,
    identity_map,
    lowering,
)


def _row_map(rank: int):
    """(d0, ..., dr-1) -> (d0): the lookup of output row d0."""
    return affine_map(rank, lambda *d: (d[0],))


@lowering(Op.EMBEDDING_LOOKUP, on_empty=True)
def embedding_lookup(ctx: LoweringContext) -> None:
    """out[i, ...] = values[lookups[i], ...].

    An index outside [0, n) is an error of the operation: constant lookups are
    rejected at compile time; at run time the index is replaced by 0 for the
    load (never out of bounds), the row is zeroed and the operation's status
    is set, so the execution fails naming this operation."""
    lookups, values, out = ctx.input(0), ctx.input(1), ctx.output()
    k = ctx.shape(lookups)[0]
    n = ctx.shape(values)[0]
    oshape = ctx.shape(out)
    rank = len(oshape)
    known = ctx.info(0).value
    if known is not None:
        bad = [(i, int(v)) for i, v in enumerate(np.asarray(known).reshape(-1)) if not 0 <= int(v) < n]
        if bad:
            i, v = bad[0]
            raise PassFailedException(
                f"EMBEDDING_LOOKUP: lookup {i} is {v}, "
                f"outside the {n} rows of the values"
            )
    if k == 0:
        return
    if n == 0:
        # Every lookup is out of range and there is no row to read at all.
        e = ctx.e
        ctx.error_if(e, e.const(1, i1))
        if all(oshape):
            ctx.fill(out, 0)
        return

    # Record an invalid index once per lookup (not once per element).
    def check(e: Emitter, i: Value, carried: Sequence[Value]) -> list[Value]:
        v = e.load(lookups, [i])
        ctx.error_if(e, _out_of_range(e, v, n))
        return []

    ctx.e.for_(0, k, check)
    if not all(oshape):
        return

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        v = args[0]
        bad = _out_of_range(e, v, n)
        safe = e.index_cast(e.select(bad, e.i32(0), v))
        row = e.load(values, [safe, *idx[1:]])
        return [e.select(bad, e.like(0, row), row)]

    ctx.generic(oshape, [(lookups, _row_map(rank))], [(out, identity_map(rank))], body)


def _out_of_range(e: Emitter, v: Value, n: int) -> Value:
    """i1: ``v`` (i32) is not in [0, n): one unsigned comparison."""
    return e.cmp("uge", v, e.i32(n))


@lowering(Op.HASHTABLE_LOOKUP)
def hashtable_lookup(ctx: LoweringContext) -> None:
    """Binary search of each lookup in the ascending keys (as Android's bsearch);
    a hit copies the value row and sets hits[i] = 1, a miss writes a zero row
    and hits[i] = 0."""
    lookups, keys, values = ctx.input(0), ctx.input(1), ctx.input(2)
    out, hits = ctx.output(0), ctx.output(1)
    k = ctx.shape(lookups)[0]
    n = ctx.shape(keys)[0]
    oshape = ctx.shape(out)
    rank = len(oshape)
    if k == 0:
        return
    if n == 0:
        ctx.fill(hits, 0)
        if all(oshape):
            ctx.fill(out, 0)
        return

    # pos[i]: the matching row (0 for a miss, so the gather stays in bounds).
    pos = ctx.alloc([k], i32)
    steps = n.bit_length()  # each step at least halves the interval [lo, hi)

    def search(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        x = args[0]
        lo, hi = e.i32(0), e.i32(n)
        last = e.i32(n - 1)
        one, two = e.i32(1), e.i32(2)
        for _ in range(steps):
            active = e.cmp("lt", lo, hi)
            mid = e.add(lo, e.div(e.sub(hi, lo), two))
            probe = e.load(keys, [e.index_cast(e.min(mid, last))])
            less = e.cmp("lt", probe, x)
            lo = e.select(e.and_(active, less), e.add(mid, one), lo)
            hi = e.select(e.and_(active, e.cmp("ge", probe, x)), mid, hi)
        at = e.min(lo, last)
        found = e.and_(e.cmp("lt", lo, e.i32(n)), e.cmp("eq", e.load(keys, [e.index_cast(at)]), x))
        hit = e.select(found, e.const(1, i8), e.const(0, i8))
        return [hit, e.select(found, at, e.i32(0))]

    ctx.generic([k], [(lookups, identity_map(1))], [(hits, identity_map(1)), (pos, identity_map(1))], search)
    if not all(oshape):
        return

    def gather(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        row = e.load(values, [e.index_cast(args[0]), *idx[1:]])
        miss = e.cmp("eq", args[1], e.const(0, i8))
        return [e.select(miss, e.like(0, row), row)]

    row_map = _row_map(rank)
    ctx.generic(oshape, [(pos, row_map), (hits, row_map)], [(out, identity_map(rank))], gather)


@lowering(Op.GATHER, on_empty=True)
def gather(ctx: LoweringContext) -> None:
    """out[a..., i..., b...] = input[a..., indices[i...], b...] along ``axis``.

    Elements are copied verbatim (a quantised output has the input's scale and
    zero point).  Like EMBEDDING_LOOKUP, an index outside [0, n) of the
    gathered dimension is an error of the operation (Android's Gather fails
    the execution): constant indices are rejected by the rule; at run time the
    load uses index 0 instead (never out of bounds), the element is zeroed and
    the operation's status is set."""
    x, indices, out = ctx.input(0), ctx.input(2), ctx.output()
    in_shape = ctx.shape(x)
    axis = ctx.scalar(1) % len(in_shape)
    n = in_shape[axis]
    k = len(ctx.shape(indices))
    count = int(np.prod(ctx.shape(indices), dtype=np.int64))
    oshape = ctx.shape(out)
    rank = len(oshape)
    if count == 0:
        return
    flat = ctx.flat(indices)

    def check(e: Emitter, i: Value, carried: Sequence[Value]) -> list[Value]:
        ctx.error_if(e, _out_of_range(e, e.load(flat, [i]), n))
        return []

    # Record an invalid index once per index (not once per element).
    ctx.e.for_(0, count, check)
    if n == 0 or not all(oshape):
        if all(oshape):
            ctx.fill(out, 0)
        return

    def body(e: Emitter, args: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        v = args[0]
        bad = _out_of_range(e, v, n)
        safe = e.index_cast(e.select(bad, e.i32(0), v))
        elem = e.load(x, [*idx[:axis], safe, *idx[axis + k :]])
        return [e.select(bad, e.like(0, elem), elem)]

    if rank == 0:
        # A scalar gathered from a vector: no loop for linalg to bound.
        e = ctx.e
        e.store(body(e, [e.load(indices, [])], [])[0], out, [])
        return
    index_map = affine_map(rank, lambda *d: d[axis : axis + k])
    ctx.generic(oshape, [(indices, index_map)], [(out, identity_map(rank))], body)
