"""Tile-staged loops of fused element-wise groups (``nnc-fuse-elementwise``).

A fused group computes its members' scalar bodies one after the other per
element in one loop.  With a long body (the tanh form of GELU: five
multiplies and adds, then the polynomial of LOGISTIC; the erf form's
rational polynomial), the core's out-of-order window holds the operations
of only a few vectors, so the long chain of dependent operations of each
vector is not overlapped with enough others and the loop runs at a fraction
of the FP units' throughput.  Several shorter loops over the same elements
each keep more vectors in flight.

The staged form cuts the group's bodies into segments and runs the elements
in tiles of :data:`TILE` elements: for each tile, one loop per segment over
the tile's elements, the values a later segment reads passed through small
stack buffers of one tile each (they stay in L1; the intermediate tensors
the group avoids writing are never written).  Every element is computed by
the same operations in the same order as in the single loop, so the results
are bit-identical.  The loop over full tiles is a parallel loop
(:func:`~nnc.passes.kernels.vector.parallel_each`) when the single loop
would have been one (:func:`worth_threads`); the stack buffers are
``memref.alloca``s inside an iteration, which ``convert-nnc-to-llvm`` places
in the entry block of the function the iteration runs in (each thread runs
its own call of an outlined loop, so no two threads share them).  The last
partial tile runs after that loop.

Only groups whose tensors are all the output's elements in order or one
element broadcast are staged (a flat index reads every buffer), with enough
elements for two tiles and enough work (:func:`plan`); the others keep the
single loop.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, f32
from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint

from nnc.passes.kernels.vector import IndexOrInt, Vec, each, parallel_each
from nnc.passes.lowering.base import ElementwiseBody, Emitter, LoweringContext, Value, plain
from nnc.passes.outline_parallel import MIN_PARALLEL_WORK
from nnc.passes.parallel_generics import WIDEST_LANES

#: elements per tile: the stack buffers of a tile (4 bytes an element, one
#: per value crossing a cut) stay well inside a 32 KiB L1 data cache (256
#: and 1024 measured the same on GELU)
TILE = 512
#: the estimated operations per element (:func:`body_cost`) of a segment
#: of arithmetic, and the least after a cut (about 10 per segment measured
#: fastest on the erf form of GELU, against 4 to 14)
SEGMENT_COST = 10
#: the operations before a body with a math function that make a cut before it
MIN_PREFIX_COST = 4
#: a math-dialect operation counts as this many: ``nnc-expand-math``
#: replaces it by a polynomial of about as many operations
MATH_COST = 16
#: a cut is made only where at most this many values cross it (each is one
#: store and one load per element, and one tile buffer; the erf form of
#: GELU carries up to four, its argument, its square and two polynomials)
MAX_CROSSING = 4


@dataclass(frozen=True)
class Segment:
    """Bodies ``bodies`` computed by one loop per tile: ``reads`` are the
    values they take from earlier segments' tile buffers, ``keeps`` the
    values they compute that later segments read."""

    bodies: list[ElementwiseBody]
    reads: list[Value]
    keeps: list[Value]


def _traced(b: ElementwiseBody) -> list[Operation]:
    """The operations ``b``'s body emits per element (into a block of its own)."""
    block = Block(arg_types=[f32] * len(b.ins))
    b.body(Emitter(Builder(InsertPoint.at_end(block))), list(block.args))
    return list(block.walk())


def body_cost(b: ElementwiseBody) -> int:
    """The operations ``b``'s body emits per element, each math-dialect
    operation counted as :data:`MATH_COST` (it becomes a polynomial)."""
    return sum(MATH_COST if op.name.startswith("math.") else 1 for op in _traced(b))


def flat_elements(ctx: LoweringContext, out: Value, outside: Sequence[Value]) -> int | None:
    """The number of elements of ``out`` when every buffer is plain and has
    that many elements (the output's, in order: inputs broadcast to the
    output with as many elements have its shape up to leading ones) or one;
    else None."""
    n = pymath.prod(ctx.shape(out))
    if not all(plain(v) for v in (out, *outside)):
        return None
    if any(pymath.prod(ctx.shape(v)) not in (n, 1) for v in outside):
        return None
    return n


def _crossing(bodies: Sequence[ElementwiseBody], cut: int) -> list[Value]:
    """The values computed before ``cut`` that a body from ``cut`` on reads."""
    before = {b.out for b in bodies[:cut]}
    out: list[Value] = []
    for b in bodies[cut:]:
        out += [v for v in b.ins if v in before and v not in out]
    return out


def plan(bodies: Sequence[ElementwiseBody], elements: int) -> list[int]:
    """Where to cut ``bodies`` (indices into them, increasing; empty: keep
    one loop).  A cut is made before body ``k`` when at most
    :data:`MAX_CROSSING` values cross it, what follows has at least
    :data:`SEGMENT_COST` operations, and either the segment since the last
    cut has that many too (a long chain of arithmetic, the erf rational of
    GELU, in segments of about that size) or body ``k`` is a polynomial of a
    math function and at least :data:`MIN_PREFIX_COST` operations come
    before it (the tanh form of GELU: its five multiplies and adds, then
    LOGISTIC).  A cut where little follows (swish: LOGISTIC, then one
    multiply) costs a tile buffer's store and load per element and saves
    almost nothing: measured slower."""
    if elements < 2 * TILE:
        return []
    costs = [body_cost(b) for b in bodies]
    cuts: list[int] = []
    since = 0
    for k in range(1, len(bodies)):
        since += costs[k - 1]
        enough = since >= SEGMENT_COST or (costs[k] >= MATH_COST and since >= MIN_PREFIX_COST)
        if enough and sum(costs[k:]) >= SEGMENT_COST and len(_crossing(bodies, k)) <= MAX_CROSSING:
            cuts.append(k)
            since = 0
    return cuts


def segments(bodies: Sequence[ElementwiseBody], cuts: Sequence[int]) -> list[Segment]:
    """``bodies`` cut at ``cuts``, with what each segment reads from and
    keeps for the others."""
    bounds = [0, *cuts, len(bodies)]
    later_reads = [_crossing(bodies, c) for c in cuts]
    out: list[Segment] = []
    for k in range(len(bounds) - 1):
        part = list(bodies[bounds[k] : bounds[k + 1]])
        mine = {b.out for b in part}
        used = {v for b in part for v in b.ins}
        reads = [v for v in later_reads[k - 1] if v in used] if k else []
        keeps = [v for v in later_reads[k] if v in mine] if k < len(cuts) else []
        out.append(Segment(part, reads, keeps))
    return out


def emit(ctx: LoweringContext, out: Value, outside: Sequence[Value], bodies: Sequence[ElementwiseBody], cuts: Sequence[int]) -> None:
    """``out[i]`` of the bodies in order, staged at ``cuts`` (:func:`plan`),
    tile by tile: the full tiles in a parallel loop, then the last partial
    one."""
    n = pymath.prod(ctx.shape(out))
    flat = {v: ctx.flat(v) for v in dict.fromkeys((*outside, out))}
    parts = segments(bodies, cuts)

    def tile(e: Emitter, lo: IndexOrInt, length: int) -> None:
        _tile(e, parts, flat, out, lo, length)

    e = ctx.shared_e()
    full = n // TILE
    loop = parallel_each if worth_threads(bodies, outside, n) else each
    loop(e, 0, full, 1, lambda e2, t: tile(e2, Vec(e2).ix(0, (t, TILE)), TILE))
    if n % TILE:
        tile(e, full * TILE, n % TILE)


def worth_threads(bodies: Sequence[ElementwiseBody], outside: Sequence[Value], elements: int) -> bool:
    """Whether the loop over tiles is marked for the thread pool: by the rule
    ``nnc-parallelize-generics`` applies to the single loop
    (:func:`~nnc.passes.parallel_generics.vector_work`: a load per input, the
    body's operations and a store per element, over the widest vectors,
    reach the dispatch threshold), so that staging does not change which
    groups run on several threads."""
    per_element = len(outside) + 2 + sum(len(_traced(b)) for b in bodies)
    return elements * per_element // WIDEST_LANES >= MIN_PARALLEL_WORK


def _tile(e: Emitter, parts: Sequence[Segment], flat: dict[Value, Value], out: Value, lo: IndexOrInt, length: int) -> None:
    """The elements ``[lo, lo + length)``: one loop per segment, the values
    crossing a cut in a stack buffer of ``length`` elements each."""
    stage: dict[Value, Value] = {}
    for p in parts:
        for v in p.keeps:
            stage[v] = e.op(memref.AllocaOp.get(f32, 64, [length]))
    for p in parts:

        def step(e2: Emitter, j: Value, _: list[Value], p: Segment = p) -> list[Value]:
            return _segment_step(e2, p, flat, stage, out, lo, j)

        e.for_(0, length, step)


def _segment_step(
    e: Emitter, p: Segment, flat: dict[Value, Value], stage: dict[Value, Value], out: Value, lo: IndexOrInt, j: Value
) -> list[Value]:
    """One element of segment ``p``: element ``lo + j`` of the group, ``j``
    of the tile buffers."""
    i = e.index(Vec(e).ix(lo, j))
    value: dict[Value, Value] = {v: e.load(stage[v], [j]) for v in p.reads}
    for b in p.bodies:
        for v in b.ins:
            if v not in value:
                buf = flat[v]
                value[v] = e.load(buf, [i if _elements(buf) > 1 else 0])
        value[b.out] = b.body(e, [value[v] for v in b.ins])
    for v in p.keeps:
        e.store(value[v], stage[v], [j])
    if out in value:
        e.store(value[out], flat[out], [i])
    return []


def _elements(buf: Value) -> int:
    """The number of elements of the memref ``buf`` (1: a broadcast scalar)."""
    t = buf.type
    assert isinstance(t, MemRefType)
    return pymath.prod(t.get_shape())
