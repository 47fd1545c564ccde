"""float32 vector kernels: GEMM, dot products, weight-panel transposition and
depthwise convolution.

Each ``*_kernel`` function returns a shared kernel's name and body for one
block shape; the drivers (:func:`gemm`, :func:`dot`, :func:`transpose`) cut
an operation into blocks, with the block sizes taken from the compilation's
tile policy (``ctx.tiles``, :mod:`nnc.passes.kernels.tiles`), and apply the
kernels with :func:`~nnc.passes.kernels.vector.kernel`.  A kernel computes a
block of outputs (pixels x vectors of output channels) in vector
accumulators that stay in registers through the whole reduction, starts
them from the bias, applies the fused activation and writes the output once.

Summation order: every output is bias + the products in the reference's
order (taps, then input channels), each step a multiply-add that LLVM fuses
where the target has FMA (one rounding instead of two), except the
dot-product kernel (FULLY_CONNECTED and 1x1 convolutions of very few
pixels), which sums a vector of lanes in parallel and adds the lanes up at
the end.

Which operation uses which kernel is decided by the lowerings
(:mod:`nnc.passes.lowering.conv`, :mod:`nnc.passes.lowering.recurrent`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType, f16, f32

from nnc.passes.kernels import vmath
from nnc.passes.kernels.vector import (
    IndexOrInt,
    Vec,
    act_tag,
    each,
    for_range,
    kernel,
    offsets,
    parallel_each,
    tag,
    widths,
)
from nnc.passes.lowering.base import Emitter, Epilogue, LoweringContext, Value, activation

# -- GEMM: out[m, n] = act(bias[n] + sum_k a[...] * b[k, n]) ---------------------------------


@dataclass(frozen=True)
class Level:
    """One loop of a GEMM reduction: ``size`` steps, each advancing the input
    offset by ``a_step`` and the packed-weight offset by ``b_step`` elements."""

    size: int
    a_step: int
    b_step: int


#: A GEMM kernel's fused epilogue after its activation: (whether a residual
#: buffer is added, the activation after it, whether swish comes first), or
#: None (see :class:`Epilogue`)
EpilogueKind = tuple[bool, int, bool] | None


def epilogue_kind(ep: Epilogue | None) -> EpilogueKind:
    return None if ep is None else (ep.residual is not None, ep.act, ep.swish)


def _epilogue_tag(kind: EpilogueKind) -> str:
    if kind is None:
        return ""
    return f"_{'swish_' if kind[2] else ''}{'add_' if kind[0] else 'then_'}{act_tag(kind[1])}"


def vswish(e: Emitter, y: Value) -> Value:
    """``y * logistic(y)`` on a float32 vector: the operations of
    :func:`~nnc.passes.lowering.base.swish` (so the same bits as LOGISTIC and
    MUL computed apart), with :func:`~nnc.passes.kernels.vmath.logistic`."""
    return e.op(arith.MulfOp(y, vmath.logistic(e, y)))


def gemm_kernel(rows: int, ws: tuple[int, ...], levels: int, act: int, epilogue: EpilogueKind = None):
    """The GEMM block kernel: ``rows`` output pixels (input windows at
    ``a_base + r * a_rstride``, outputs at ``out_base + r * ldo``) times the
    output channels ``n0 + [0, sum(ws))`` (vectors of widths ``ws``), whose
    weights are the packed panel at ``b[b_base:]`` (``[K, sum(ws)]``), reducing over
    ``levels`` nested loops (size, a_step, b_step parameters).  Per innermost
    step: one weight vector per width, one broadcast input per row, rows x
    vectors FMAs.

    ``epilogue`` (a fused consumer, ``nnc-fuse-epilogues``): after the
    activation, the residual (a buffer parameter after ``out``, read at the
    output's offsets) is added and the consumer's activation applied, each
    a separate rounding, as the consumer computes it."""
    name = f"nnc_gemm_{rows}x{tag(ws)}_l{levels}_{act_tag(act)}{_epilogue_tag(epilogue)}"
    residual = epilogue is not None and epilogue[0]

    def body(e: Emitter, p: list[Value]) -> None:
        res = p.pop(4) if residual else None
        a, b, bias, out, a_base, a_rstride, out_base, n0, ldo, b_base = p[:10]
        lv = [p[10 + 3 * i : 13 + 3 * i] for i in range(levels)]
        v = Vec(e)
        offs = offsets(ws)
        nw = len(ws)
        bases = series(v, a_base, a_rstride, rows)
        init = [v.load(bias, v.ix(n0, o), w) for o, w in zip(offs, ws)]
        accs = [init[j] for _ in range(rows) for j in range(nw)]

        def step(e: Emitter, aoff: IndexOrInt, boff: IndexOrInt, accs: list[Value]) -> list[Value]:
            v = Vec(e)
            bv = [v.load(b, v.ix(boff, o), w) for o, w in zip(offs, ws)]
            new = []
            for r in range(rows):
                s = e.load(a, [e.index(v.ix(bases[r], aoff))])
                splats = {w: v.splat(s, w) for w in sorted(set(ws))}
                new += [v.fma(splats[w], bv[j], accs[r * nw + j]) for j, w in enumerate(ws)]
            return new

        def level(d: int, aoff: IndexOrInt, boff: IndexOrInt) -> Callable:
            size, a_step, b_step = lv[d]

            def inner(e: Emitter, i: IndexOrInt, accs: list[Value]) -> list[Value]:
                v = Vec(e)
                ao, bo = v.ix(aoff, (i, a_step)), v.ix(boff, (i, b_step))
                if d + 1 == levels:
                    return step(e, ao, bo, accs)
                return for_range(e, 0, lv[d + 1][0], 1, level(d + 1, ao, bo), accs)

            return inner

        accs = for_range(e, 0, lv[0][0], 1, level(0, 0, b_base), accs)
        out_rows = series(v, out_base, ldo, rows)
        cols = [v.ix(n0, o) for o in offs]  # the block's vectors' first channels
        for r in range(rows):
            for j, (_, w) in enumerate(zip(offs, ws)):
                y = v.activation(accs[r * nw + j], act)
                off = v.ix(out_rows[r], cols[j])
                if epilogue is not None:
                    if epilogue[2]:
                        y = vswish(e, y)
                    if res is not None:
                        y = e.op(arith.AddfOp(y, v.load(res, off, w)))
                    y = v.activation(y, epilogue[1])
                v.store(y, out, off)

    return name, body


def series(v: Vec, base: IndexOrInt, step: IndexOrInt, n: int) -> list[IndexOrInt]:
    """``base + i * step`` for ``i < n``, each by one addition to the one
    before (the offsets of a block's rows or pixels): no multiplication and
    no constant per element, which LLVM would strength-reduce to the same
    code anyway."""
    out = [base]
    for _ in range(n - 1):
        out.append(v.ix(out[-1], step))
    return out


def row_blocks(n: int, most: int) -> list[tuple[int, int, int]]:
    """``n`` rows (or vectors of channels) in as few blocks of at most
    ``most`` as possible, of two sizes that differ by one: [(start, end, size
    of its blocks)].  49 rows, at most 6: 4 blocks of 6 and 5 of 5 (not 8 of
    6 and a block of 1, whose single row would use a sixth of the
    registers)."""
    count = -(-n // most)
    base, extra = divmod(n, count)
    blocks = [(0, extra * (base + 1), base + 1), (extra * (base + 1), n, base)]
    return [b for b in blocks if b[1] > b[0]]


#: Where run ``r`` of a GEMM's output pixels starts: ``(e, r) -> (input
#: offset, output offset)`` (a run is ``run_len`` pixels whose input windows
#: are ``a_rstride`` apart: an output row, or all pixels of a 1x1 convolution).
RunAt = Callable[[Emitter, IndexOrInt], tuple[IndexOrInt, IndexOrInt]]


@dataclass(frozen=True)
class Region:
    """Output pixels of a GEMM that share one window geometry: ``run_count``
    runs of ``run_len`` pixels (:data:`RunAt`), a run's pixels ``a_rstride``
    apart in the input and ``ldo`` in the output, reducing over ``levels``,
    whose first step is ``b_skip`` K-rows into the weight panel.  A
    convolution with padding has one region per combination of border and
    interior rows and columns, the windows of border pixels clipped to the
    input (their level sizes smaller, their steps the whole window's), so
    that no padded copy of the input is needed."""

    run_count: int
    run_at: RunAt
    run_len: int
    a_rstride: int
    ldo: int
    levels: tuple[Level, ...]
    b_skip: int = 0


def col_blocks(cols: int, lanes: int, most: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """The output channels of a GEMM in blocks of vectors: [(first, end,
    vector widths of each block)], each entry blocks of one width.  Whole
    vectors in balanced blocks of at most ``most`` (6 vectors: 3 + 3, not
    4 + 2), then the narrower tail (40 channels of 16 lanes: 16 + 16, then
    8)."""
    blocks = (
        [(v0 * lanes, v1 * lanes, (lanes,) * nv) for v0, v1, nv in row_blocks(cols // lanes, most)]
        if cols >= lanes
        else []
    )
    if cols % lanes:
        blocks.append((cols // lanes * lanes, cols, tuple(widths(cols % lanes, lanes))))
    return blocks


def pack_panels(w: np.ndarray, blocks: Sequence[tuple[int, int, tuple[int, ...]]]) -> np.ndarray:
    """The weights ``w`` (numpy ``[cols, K]``, one row of K per output
    channel) as the GEMM kernel reads them: per block of channels ``[n0,
    n0 + width)`` the panel ``w[n0 : n0 + width].T`` (``[K, width]``),
    panels in channel order, so the block at ``n0`` starts at ``n0 * K``.
    What :func:`transpose` builds at run time for weights that are inputs."""
    panels = [w[n0 : n0 + sum(ws)].T for c0, c1, ws in blocks for n0 in range(c0, c1, sum(ws))]
    return np.ascontiguousarray(np.concatenate([p.reshape(-1) for p in panels]))


#: The largest weight panel (bytes) whose GEMM runs its tiles in row-major
#: order (:func:`row_major_tiles`): each thread then writes whole blocks of
#: output pixels and reads only their input rows, so the element-wise
#: consumer that follows (which splits its range by rows) finds its data in
#: its own core's cache instead of the other's, and so does the next GEMM;
#: the price is that every thread reads the whole panel, not its share of
#: the channel blocks.  Up to the level-2 cache of the smallest cores nnc
#: targets (256 KiB: Haswell and Skylake client cores, Cortex-A76) that is
#: cheaper than the other core's lines: on the Zen 4 guest (2 threads) the
#: MLP-Mixer's FULLY_CONNECTEDs (64-256 KiB panels) and the GELUs after them
#: took 5% less time in row-major order, while 1 MiB panels (512 x 512)
#: ran 6% slower in it.
ROW_MAJOR_PANEL_BYTES = 256 * 1024


def gemm(
    ctx: LoweringContext,
    a: Value,
    w: Value,
    bias: Value,
    out: Value,
    run_count: int,
    run_at: RunAt,
    run_len: int,
    a_rstride: int,
    cols: int,
    levels: Sequence[Level],
    act: int,
    w_value: np.ndarray | None = None,
    groups: int = 1,
    a_gstride: int = 0,
    ldo: int | None = None,
    epilogue: Epilogue | None = None,
    regions: Sequence[Region] | None = None,
    parallel: bool = True,
) -> None:
    """``out = act(bias + a * w^T)`` on flat buffers, ``w`` the weights as
    given (``[cols, K]``, one row of K per output channel; K runs over
    ``levels``), ``out`` as ``[pixels, cols]``; the output pixels are
    ``run_count`` runs of ``run_len`` (:data:`RunAt`).

    ``groups`` > 1 (GROUPED_CONV_2D) computes that many such products side
    by side: group ``g`` has the output channels ``g * cols + [0, cols)``
    (of ``w``, now ``[groups * cols, K]``, of the bias and of the output)
    and reads the input ``g * a_gstride`` further.  ``ldo`` is the distance
    between consecutive output pixels of a run (default: every channel,
    ``groups * cols``; a strided phase of TRANSPOSE_CONV_2D writes every
    ``stride``-th pixel).  ``epilogue``: a fused consumer applied in the
    kernel (its residual a buffer of the output's layout).  ``regions``
    replace the one geometry (``run_count`` ... ``a_rstride``, ``ldo``,
    ``levels``) by several (:class:`Region`); ``levels`` is then the whole
    window, which lays out the panels.  ``parallel=False``: the tiles run
    on the calling thread (for a caller that reads the output serially
    right after).

    The kernel reads the weights as panels (:func:`pack_panels`): when they
    are a constant whose value is known (``w_value``, numpy ``[cols, K]``),
    packed at compile time into the constant pool, otherwise transposed
    into an arena buffer at the start of every execution.  Then every
    output tile (a block of pixels of one run x a block of channels) is one
    kernel call, each an independent iteration of one loop
    (:func:`parallel_cases`)."""
    tiles = ctx.tiles
    e = ctx.shared_e()
    depth = 1
    for lv in levels:
        depth *= lv.size
    total = groups * cols
    ldo = total if ldo is None else ldo
    blocks = col_blocks(cols, tiles.lanes, tiles.max_col_vectors)
    all_blocks = [(c0 + k * cols, c1 + k * cols, ws) for k in range(groups) for c0, c1, ws in blocks]
    if w_value is not None:
        panels = ctx.flat(ctx.packed_constant(pack_panels(w_value.reshape(total, depth), all_blocks), f32))
    else:
        panels = ctx.flat(ctx.alloc([total * depth], f32))
        for c0, c1, ws in all_blocks:
            width = sum(ws)

            def pack(e2: Emitter, n0: IndexOrInt, width: int = width) -> None:
                transpose(ctx, e2, w, Vec(e2).ix(0, (n0, depth)), panels, Vec(e2).ix(0, (n0, depth)), width, depth)

            each(e, c0, c1, width, pack)
    res = [] if epilogue is None or epilogue.residual is None else [ctx.flat(epilogue.residual)]
    if regions is None:
        regions = [Region(run_count, run_at, run_len, a_rstride, ldo, tuple(levels))]
    segments: list[Case] = []
    row_major: list[tuple[int, int, int, TileCall]] = []
    for c0, c1, ws in blocks:
        width = sum(ws)
        for reg in regions:
            rblocks = row_blocks(reg.run_len, tiles.gemm_rows(len(ws)))
            # b_step of a level: K-rows of the panel, each `width` long
            lv_args = [x for lv in reg.levels for x in (lv.size, lv.a_step, lv.b_step * width)]

            def call(e: Emitter, rows: int, n0: IndexOrInt, a_off: IndexOrInt, o_off: IndexOrInt, run: IndexOrInt, ws=ws, lv_args=lv_args, reg=reg) -> None:
                name, body = gemm_kernel(rows, ws, len(reg.levels), act, epilogue_kind(epilogue))
                # the panel of channels n0.. starts at n0 * K; the region's first tap b_skip K-rows in
                b_off = Vec(e).ix(0, (n0, depth), reg.b_skip * sum(ws))
                kernel(ctx, e, name, [a, panels, bias, out, *res, a_off, reg.a_rstride, o_off, n0, reg.ldo, b_off, *lv_args], body)

            segments.append(col_block_tiles(c0, c1, width, reg.run_count, reg.run_at, rblocks, reg.a_rstride, reg.ldo, call, (groups, cols, a_gstride)))
            row_major.append((c0, c1, width, call))
    if groups == 1 and len(regions) == 1 and total * depth * 4 <= ROW_MAJOR_PANEL_BYTES:
        # a row of tiles needs one blocking of the pixels for every kind of
        # channel block: taken only when all kinds block the rows alike
        rows = tiles.gemm_rows(max(len(ws) for _, _, ws in blocks))
        if all(tiles.gemm_rows(len(ws)) == rows for _, _, ws in blocks):
            reg = regions[0]
            rblocks = row_blocks(reg.run_len, rows)
            segments = [row_major_tiles(row_major, reg.run_count, reg.run_at, rblocks, reg.a_rstride, reg.ldo)]
    if parallel:
        parallel_cases(e, segments)
    else:
        each(e, 0, sum(n for n, _ in segments), 1, lambda e2, t: _switch(e2, t, segments))


#: One kind of iterations of a loop: (how many, body(e, index among them)).
Case = tuple[int, Callable[[Emitter, IndexOrInt], None]]


def _switch(e: Emitter, t: IndexOrInt, cases: Sequence[Case]) -> None:
    """Run the case that iteration ``t`` of ``cases`` (their iterations one
    after the other) falls in, with its index within that case: a chain of
    ``scf.if`` on ``t``, nothing for a single case."""
    first = 0
    for k, (n, body) in enumerate(cases):
        if k + 1 == len(cases):
            body(e, Vec(e).ix(t, -first))
            return
        if isinstance(t, int):
            if t < first + n:
                body(e, t - first)
                return
            first += n
            continue
        start, rest = first, cases[k + 1 :]
        below = e.cmp("ult", t, e.index(first + n))

        def then(e2: Emitter, body: Callable[[Emitter, IndexOrInt], None] = body, start: int = start) -> list[Value]:
            body(e2, Vec(e2).ix(t, -start))
            return []

        def otherwise(e2: Emitter, start: int = start + n, rest: Sequence[Case] = rest) -> list[Value]:
            _switch(e2, Vec(e2).ix(t, -start), rest)
            return []

        e.if_(below, then, otherwise)
        return


def _divmod(e: Emitter, t: IndexOrInt, n: int, outer: int) -> tuple[IndexOrInt, IndexOrInt]:
    """``divmod(t, n)`` for ``t < outer * n`` (constants folded)."""
    if outer == 1:
        return 0, t
    if n == 1:
        return t, 0
    if isinstance(t, int):
        return divmod(t, n)
    return e.div(t, e.index(n)), e.rem(t, e.index(n))


def col_block_tiles(
    c0: int, c1: int, width: int, run_count: int, run_at: RunAt,
    rblocks: Sequence[tuple[int, int, int]], a_rstride: int, ldo: int,
    call: Callable[[Emitter, int, IndexOrInt, IndexOrInt, IndexOrInt, IndexOrInt], None],
    grouping: tuple[int, int, int] = (1, 0, 0),
) -> Case:
    """The output tiles of the channel blocks ``[c0, c1)`` (each ``width``
    wide): (group x) channel block x run x block of pixels (``rblocks``,
    blocks of one or two sizes), in that order, so that consecutive tiles
    share a weight panel as they did when the panel was transposed per
    block.  ``grouping``: (groups, channels per group, input offset per
    group).  ``call(e, rows, n0, a_off, o_off, run)`` computes one tile."""  # fmt: skip
    per_run = [((r1 - r0) // size, r0, size) for r0, r1, size in rblocks]
    nb = sum(n for n, _, _ in per_run)
    ncb = (c1 - c0) // width
    groups, gcols, a_gstride = grouping

    def tile(e: Emitter, t: IndexOrInt) -> None:
        grp, t = _divmod(e, t, ncb * run_count * nb, groups)
        cb, rest = _divmod(e, t, run_count * nb, ncb)
        run, j = _divmod(e, rest, nb, run_count)
        n0 = Vec(e).ix(c0, (cb, width), (grp, gcols))
        a_run, o_run = run_at(e, run)
        a_run = Vec(e).ix(a_run, (grp, a_gstride))

        def rows(r0: int, size: int) -> Callable[[Emitter, IndexOrInt], None]:
            def block(e: Emitter, i: IndexOrInt) -> None:
                v = Vec(e)
                m0 = v.ix(r0, (i, size))
                call(e, size, n0, v.ix(a_run, (m0, a_rstride)), v.ix(o_run, (m0, ldo)), run)

            return block

        _switch(e, j, [(n, rows(r0, size)) for n, r0, size in per_run])

    return groups * ncb * run_count * nb, tile


#: A tile's kernel: ``call(e, rows, n0, a_off, o_off, run)`` (see :func:`col_block_tiles`).
TileCall = Callable[[Emitter, int, IndexOrInt, IndexOrInt, IndexOrInt, IndexOrInt], None]


def row_major_tiles(
    blocks: Sequence[tuple[int, int, int, TileCall]], run_count: int, run_at: RunAt,
    rblocks: Sequence[tuple[int, int, int]], a_rstride: int, ldo: int, whole_rows: bool = False,
) -> Case:  # fmt: skip
    """The output tiles of a GEMM as :func:`col_block_tiles` makes them, in
    row-major order: run x block of pixels x channel block (of every kind
    of ``blocks``, ``(c0, c1, width, call)``, one after the other).  The
    thread pool gives each thread a contiguous range of them, so a thread
    writes whole blocks of pixels (all but the one block it may share with
    the next thread): the rows an element-wise consumer then reads on the
    same thread, which splits its range the same way.  ``whole_rows``: one
    iteration per block of pixels, computing all its channel blocks
    (:func:`pixel_tiles`)."""
    per_run = [((r1 - r0) // size, r0, size) for r0, r1, size in rblocks]
    nb = sum(n for n, _, _ in per_run)
    kinds = [((c1 - c0) // width, c0, width, call) for c0, c1, width, call in blocks]
    ncb = 1 if whole_rows else sum(n for n, _, _, _ in kinds)

    def tile(e: Emitter, t: IndexOrInt) -> None:
        run, rest = _divmod(e, t, nb * ncb, run_count)
        j, k = _divmod(e, rest, ncb, nb)
        a_run, o_run = run_at(e, run)

        def rows(r0: int, size: int) -> Callable[[Emitter, IndexOrInt], None]:
            def block(e: Emitter, i: IndexOrInt) -> None:
                v = Vec(e)
                m0 = v.ix(r0, (i, size))
                a_off, o_off = v.ix(a_run, (m0, a_rstride)), v.ix(o_run, (m0, ldo))

                def at(call: TileCall) -> Callable[[Emitter, IndexOrInt], None]:
                    return lambda e2, n0: call(e2, size, n0, a_off, o_off, run)  # the block of channels n0..

                def nth(c0: int, width: int, call: TileCall) -> Callable[[Emitter, IndexOrInt], None]:
                    return lambda e2, kk: at(call)(e2, Vec(e2).ix(c0, (kk, width)))

                if whole_rows:
                    for n, c0, width, call in kinds:
                        each(e, c0, c0 + n * width, width, at(call))
                else:
                    _switch(e, k, [(n, nth(c0, width, call)) for n, c0, width, call in kinds])

            return block

        _switch(e, j, [(n, rows(r0, size)) for n, r0, size in per_run])

    return run_count * nb * ncb, tile


def pixel_tiles(
    blocks: Sequence[tuple[int, int, int, TileCall]], run_count: int, run_at: RunAt,
    rblocks: Sequence[tuple[int, int, int]], a_rstride: int, ldo: int,
) -> Case:  # fmt: skip
    """The output tiles of a GEMM as :func:`col_block_tiles` makes them, but
    one iteration per block of pixels (run x ``rblocks``), which computes
    the tiles of every channel block of ``blocks`` (``(c0, c1, width,
    call)``, each run of blocks with its kernel) one after the other.  The
    thread pool then splits the pixels, not the channels: where a pixel's
    outputs share a cache line (64 int8 channels), threads that split the
    channels would write the same lines at once; each thread also reads
    only its own pixels' inputs.  Every thread then reads every weight
    panel, which suits small panels (see the caller)."""
    return row_major_tiles(blocks, run_count, run_at, rblocks, a_rstride, ldo, whole_rows=True)


def parallel_cases(e: Emitter, segments: Sequence[Case]) -> None:
    """One operation's outermost loop over all its pieces of work of every
    kind: ``segments`` (the GEMM's tiles per kind of channel block, the
    depthwise convolution's output rows per run of rows that see the same
    taps) become one loop over their iterations in order (:func:`_switch`),
    so that one dispatch splits all of them evenly between threads.  The
    iterations must be independent (each writes its own outputs and reads
    nothing another writes): they may run in any order or on several
    threads, and each output element is computed by one iteration, in the
    same order whichever thread runs it."""
    parallel_each(e, 0, sum(n for n, _ in segments), 1, lambda e2, t: _switch(e2, t, segments))


# -- batched matrix products: out[t] = a[t] @ b[t] -------------------------------------------

#: Where matrix pair ``t`` of a batched product starts: ``(e, t) -> (offset
#: of a[t], offset of b[t])`` (broadcast batches share a matrix).
BatchAt = Callable[[Emitter, IndexOrInt], tuple[IndexOrInt, IndexOrInt]]


def batch_gemm(
    ctx: LoweringContext, a: Value, b: Value, out: Value, batches: int, batch_at: BatchAt,
    rows: int, depth: int, cols: int, a_row: int, a_step: int,
) -> None:
    """``out[t] = a[t] @ b[t]`` for ``t < batches`` on flat float32 buffers
    (BATCH_MATMUL): element (i, k) of ``a[t]`` at ``a_off + i * a_row + k *
    a_step`` (a row-major matrix, or its transpose read in place), ``b[t]`` the
    ``[depth, cols]`` row-major matrix at ``b_off`` (:data:`BatchAt`), ``out[t]``
    the ``[rows, cols]`` matrix at ``t * rows * cols``.

    The GEMM kernel of :func:`gemm`, with the rows of ``b`` as its weight
    panel: a panel's K-rows are ``cols`` apart instead of the block's width,
    so ``b`` is read in place, neither packed nor transposed (each is used
    for one product only).  The accumulators start from zero (a zero
    "bias") and each sum runs in the reference's order over k.  Every tile
    (a block of rows of one matrix x a block of columns) is one iteration of
    one parallel loop (:func:`parallel_cases`)."""  # fmt: skip
    tiles = ctx.tiles
    zeros = ctx.constant(np.zeros(cols, np.float32), f32)
    segments: list[Case] = []
    for c0, c1, ws in col_blocks(cols, tiles.lanes, tiles.max_col_vectors):

        def call(e: Emitter, nrows: int, n0: IndexOrInt, a_off: IndexOrInt, o_off: IndexOrInt, t: IndexOrInt, ws=ws) -> None:
            name, body = gemm_kernel(nrows, ws, 1, 0)
            b_off = Vec(e).ix(batch_at(e, t)[1], n0)
            kernel(ctx, e, name, [a, b, zeros, out, a_off, a_row, o_off, n0, cols, b_off, depth, a_step, cols], body)

        def run_at(e: Emitter, t: IndexOrInt) -> tuple[IndexOrInt, IndexOrInt]:
            return batch_at(e, t)[0], Vec(e).ix(0, (t, rows * cols))

        rblocks = row_blocks(rows, tiles.gemm_rows(len(ws)))
        segments.append(col_block_tiles(c0, c1, sum(ws), batches, run_at, rblocks, a_row, cols, call))
    parallel_cases(ctx.shared_e(), segments)


# -- dot products: out[m, n] = act(bias[n] + sum_i a[m, i] * w[n, i]) --------------------------


def dot_kernel(rows: int, units: int, tails: tuple[int, ...], act: int, lanes: int, half: bool = False):
    """Dot products of ``rows`` input rows (at ``a_base + r * a_rstride``)
    with ``units`` weight rows (``n0 + j``, ``depth`` apart) over ``kfull``
    elements in vectors of ``lanes`` plus the ``tails`` widths, lanes added
    up at the end; outputs at ``out_base + r * cols + n0 + j``.  ``half``:
    the weights are float16, widened as loaded (:meth:`Vec.load_half`)."""
    name = f"nnc_dot_{rows}x{units}_t{tag(tails)}_{act_tag(act)}{'_h' if half else ''}"

    def body(e: Emitter, p: list[Value]) -> None:
        a, w, bias, out, a_base, a_rstride, n0, depth, kfull, out_base, cols = p
        v = Vec(e)
        bases = [v.ix(a_base, (a_rstride, r)) for r in range(rows)]
        wrows = [v.ix(0, (v.ix(n0, j), depth)) for j in range(units)]
        pairs = [(r, j) for r in range(rows) for j in range(units)]

        def wload(v: Vec, off: IndexOrInt, width: int) -> Value:
            return v.load_half(w, off, width) if half else v.load(w, off, width)

        def step(e: Emitter, i0: IndexOrInt, accs: list[Value]) -> list[Value]:
            v = Vec(e)
            xs = [v.load(a, v.ix(bases[r], i0), lanes) for r in range(rows)]
            ws = [wload(v, v.ix(wrows[j], i0), lanes) for j in range(units)]
            return [v.fma(xs[r], ws[j], acc) for (r, j), acc in zip(pairs, accs)]

        accs = e.for_(0, kfull, lambda e2, i, args: step(e2, i, list(args)), [v.const(0.0, lanes) for _ in pairs], lanes)
        sums = [v.hsum(acc) for acc in accs]
        for o, tw in zip(offsets(tails), tails):
            i = v.ix(kfull, o)
            xs = [v.load(a, v.ix(bases[r], i), tw) for r in range(rows)]
            ws = [wload(v, v.ix(wrows[j], i), tw) for j in range(units)]
            for k, (r, j) in enumerate(pairs):
                sums[k] = e.add(sums[k], v.hsum(e.op(arith.MulfOp(xs[r], ws[j]))))
        for (r, j), s in zip(pairs, sums):
            n = v.ix(n0, j)
            y = e.add(e.load(bias, [e.index(n)]), s)
            e.store(activation(e, y, act), out, [e.index(v.ix(out_base, (cols, r), n))])

    return name, body


def dot(
    ctx: LoweringContext, a: Value, w: Value, bias: Value, out: Value,
    rows: int, a_rstride: int, cols: int, depth: int, act: int, parallel: bool = True,
) -> None:
    """``out[m, n] = act(bias[n] + sum_i a[m * a_rstride + i] * w[n, i])``
    with ``w`` in its original ``[cols, depth]`` layout: for few rows (a
    FULLY_CONNECTED of batch 1), where transposing the weights would cost as
    much as the product.  Blocks of output channels
    (:meth:`~nnc.passes.kernels.tiles.TilePolicy.dot_block_units`) share the
    input vector loads.  ``w`` may be float16
    (:func:`half_weights`).  ``parallel=False``: the blocks run on the
    calling thread."""  # fmt: skip
    lanes, units_per_block = ctx.tiles.lanes, ctx.tiles.dot_block_units(rows)
    e = ctx.shared_e()
    kfull = depth // lanes * lanes
    tails = tuple(widths(depth - kfull, lanes))
    half = isinstance(w.type, MemRefType) and w.type.element_type == f16

    def call(e: Emitter, n0: IndexOrInt, units: int) -> None:
        name, body = dot_kernel(rows, units, tails, act, lanes, half)
        kernel(ctx, e, name, [a, w, bias, out, 0, a_rstride, n0, depth, kfull, 0, cols], body)

    full = cols // units_per_block * units_per_block
    # Blocks of output channels are independent: the thread pool may split them.
    (parallel_each if parallel else each)(e, 0, full, units_per_block, lambda e2, n0: call(e2, n0, units_per_block))
    if cols > full:
        call(e, full, cols - full)


#: float32 weight bytes from which a dot product's constant weights are
#: stored as float16 when they all are float16 values (:func:`half_weights`)
HALF_WEIGHTS_MIN_BYTES = 256 * 1024


def half_weights(ctx: LoweringContext, w: Value) -> Value | None:
    """The constant weights ``w`` of a dot product (:func:`dot`) as a
    float16 buffer, when every one is exactly a float16 value (a model
    whose weights were stored as float16, e.g. TFLite's float16
    quantisation), they take at least :data:`HALF_WEIGHTS_MIN_BYTES` as
    float32, and the target converts halves in one instruction; else None.
    A dot product of one row reads each weight once, so its speed is that
    of reading them: half the bytes, and the same products (the widening
    is exact).  Smaller weights stay in the caches between inferences."""
    value = ctx.constant_value(w)
    if value is None or not ctx.half_conversions:
        return None
    wide = np.ascontiguousarray(value, np.float32).reshape(-1)
    if wide.nbytes < HALF_WEIGHTS_MIN_BYTES:
        return None
    with np.errstate(over="ignore"):
        narrow = wide.astype(np.float16)
    if not np.array_equal(narrow.astype(np.float32).view(np.uint32), wide.view(np.uint32)):
        return None
    return ctx.packed_constant(narrow, f16)


# -- transposition (weight panels for the GEMM) ---------------------------------------------


def transpose_kernel(bs: int):
    """``dst[d0 + c * ld + r] = src[s0 + r * cols + c]`` for r < rows, c < cols:
    the ``bs`` x ``bs`` blocks below (rfull, cfull) with ``bs`` vector loads,
    log2(bs) rounds of two-vector shuffles that swap the off-diagonal
    half-blocks and ``bs`` vector stores; the leftover columns and rows
    element by element (``bs`` 0: everything element by element)."""

    def body(e: Emitter, p: list[Value]) -> None:
        src, dst, s0, d0, rows, cols, ld, rfull, cfull = p

        def block(e: Emitter, r0: IndexOrInt, c0: IndexOrInt) -> None:
            v = Vec(e)
            vs = [v.load(src, v.ix(s0, c0, (v.ix(r0, i), cols)), bs) for i in range(bs)]
            s = bs // 2
            while s >= 1:
                lo = [c if c & s == 0 else bs + c - s for c in range(bs)]
                hi = [c + s if c & s == 0 else bs + c for c in range(bs)]
                for i in range(bs):
                    if i & s == 0:
                        vs[i], vs[i + s] = v.shuffle(vs[i], vs[i + s], lo), v.shuffle(vs[i], vs[i + s], hi)
                s //= 2
            for i in range(bs):
                v.store(vs[i], dst, v.ix(d0, r0, (v.ix(c0, i), ld)))

        def elem(e: Emitter, r: IndexOrInt, c: IndexOrInt) -> None:
            v = Vec(e)
            e.store(e.load(src, [e.index(v.ix(s0, c, (r, cols)))]), dst, [e.index(v.ix(d0, r, (c, ld)))])

        if bs:
            each(e, 0, rfull, bs, lambda e2, r0: each(e2, 0, cfull, bs, lambda e3, c0: block(e3, r0, c0)))
        for r0, r1, c0 in ((0, rfull, cfull), (rfull, rows, 0)):

            def row(e2: Emitter, r: IndexOrInt, c0: IndexOrInt = c0) -> None:
                each(e2, c0, cols, 1, lambda e3, c: elem(e3, r, c))

            each(e, r0, r1, 1, row)

    return f"nnc_transpose_{bs}", body


def transpose(
    ctx: LoweringContext, e: Emitter, src: Value, s0: IndexOrInt, dst: Value, d0: IndexOrInt, rows: int, cols: int,
    ld: int | None = None,
) -> None:  # fmt: skip
    """``dst[d0:]`` (``[cols, ld]``, ``ld`` default ``rows``) = the ``[rows,
    cols]`` matrix at ``src[s0:]``, transposed (square blocks of a full
    vector, or of 8 lanes, in registers): with ``ld`` above ``rows``, a band
    of rows of a taller matrix's transposition."""
    vw = ctx.tiles.lanes
    bs = vw if min(rows, cols) >= vw else 8 if min(rows, cols) >= 8 else 0
    rfull = rows // bs * bs if bs else 0
    cfull = cols // bs * bs if bs else 0
    name, body = transpose_kernel(bs)
    kernel(ctx, e, name, [src, dst, s0, d0, rows, cols, rows if ld is None else ld, rfull, cfull], body)


# -- depthwise ---------------------------------------------------------------------------------


def dw_kernel(npix: int, taps: tuple[int, int] | None, tails: tuple[int, ...], act: int, lanes: int):
    """``npix`` output pixels along a row, all channels: per vector of
    channels (``lanes`` wide, then the ``tails``), one accumulator per pixel;
    per tap one weight vector serves every pixel.  ``taps`` (fh, fw) unrolls
    the whole window; None loops over the taps [kh0, kh1) x [kw0, kw1) given
    at run time (border pixels, whose window is clipped to the input)."""
    name = f"nnc_dw_{npix}p_{f'{taps[0]}x{taps[1]}' if taps else 'clip'}_t{tag(tails)}_{act_tag(act)}"

    def body(e: Emitter, p: list[Value]) -> None:
        x, w, bias, out, cfull, chans, x_base, x_pix, x_kh, x_kw, w_kh, kh0, kh1, kw0, kw1, out_base = p

        def block(e: Emitter, c0: IndexOrInt, width: int) -> None:
            v = Vec(e)
            xb = series(v, v.ix(x_base, c0), x_pix, npix)
            acc = [v.load(bias, c0, width)] * npix

            def tap(e: Emitter, x_tap: IndexOrInt, w_tap: IndexOrInt, acc: list[Value]) -> list[Value]:
                """One tap: its input at ``x_tap`` from each pixel's base, its weights at ``w_tap``."""
                v = Vec(e)
                wv = v.load(w, v.ix(c0, w_tap), width)
                return [v.fma(v.load(x, v.ix(xb[q], x_tap), width), wv, acc[q]) for q in range(npix)]

            if taps is not None:
                # the window's offsets by additions: rows x_kh (w_kh) apart, columns x_kw (chans)
                x_rows, w_rows = series(v, 0, x_kh, taps[0]), series(v, 0, w_kh, taps[0])
                x_cols, w_cols = series(v, 0, x_kw, taps[1]), series(v, 0, chans, taps[1])
                for kh in range(taps[0]):
                    for kw in range(taps[1]):
                        acc = tap(e, v.ix(x_rows[kh], x_cols[kw]), v.ix(w_rows[kh], w_cols[kw]), acc)
            else:
                def clipped(e: Emitter, kh: IndexOrInt, kw: IndexOrInt, acc: list[Value]) -> list[Value]:
                    v = Vec(e)
                    return tap(e, v.ix(0, (kh, x_kh), (kw, x_kw)), v.ix(0, (kh, w_kh), (kw, chans)), acc)

                acc = e.for_(kh0, kh1, lambda e2, kh, a2: e2.for_(
                    kw0, kw1, lambda e3, kw, a3: clipped(e3, kh, kw, list(a3)), list(a2)), acc)
            for q, o in enumerate(series(v, v.ix(out_base, c0), chans, npix)):
                v.store(v.activation(acc[q], act), out, o)

        each(e, 0, cfull, lanes, lambda e2, c0: block(e2, c0, lanes))
        for o, tw in zip(offsets(tails), tails):
            block(e, Vec(e).ix(cfull, o), tw)

    return name, body
