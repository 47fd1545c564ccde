"""Quantised 8-bit vector kernels: the GEMM of CONV_2D / FULLY_CONNECTED and
the depthwise convolution, with int32 accumulators in vector registers and
the requantisation in the kernel's epilogue.

What the kernels read (laid out by the lowering, :mod:`nnc.passes.lowering.conv`):

* the input as **int16 with the input zero point already subtracted**
  (``x - input_zp``, in [-255, 255]; padding 0, which adds nothing, like
  the reference's skipped taps), written once per operation by a widening
  copy; the buffer has an element of slack at its end (see below);
* GEMM weights as a **panel of int16 pairs** made at compile time from a
  constant filter (:func:`pack_panel`): ``w - filter_zp`` of two adjacent
  reduction steps side by side for every output channel of a block, so one
  ``vpmaddwd`` (two products added into each int32 lane) serves a block
  row; a reduction run of odd length gets a zero weight as its last
  partner, whose input partner is the next element in memory (at the very
  end of the buffer, the slack element);
* depthwise weights as int16 ``w - filter_zp`` (made by a widening copy);
* the requantisation parameters as an int32 table (:func:`requant_table`
  layout): per output channel the multiplier, the left shift and the right
  shift of TFLite's ``MultiplyByQuantizedMultiplier``, then the output zero
  point and the activation's clamp range.

Bit-exactness: every product ``(x - zx) * (w - zw)`` and every sum is exact
in int32 (the reference accumulates the same products in int32, and
integer addition is associative), and the epilogue computes exactly
:meth:`~nnc.passes.lowering.conv_q8.QuantConv.requantize`'s arithmetic
(``(x << left) * m`` rounded to its high word, then the rounding right
shift), lane by lane.

Which instruction the pair product becomes is up to LLVM's target:
``vpmaddwd`` on x86 (SSE2 onwards), ``vpdpwssd`` with AVX-VNNI /
AVX512-VNNI (see :meth:`~nnc.passes.kernels.vector.IVec.pairs_dot`).

The GEMM's **quad forms** (:class:`GemmForm`, ``step`` 4) multiply bytes
four at a time with the target's dot instruction: ``vpdpbusd`` (x86
AVX512-VNNI and AVX-VNNI: unsigned inputs times signed weights) or
``sdot`` (AArch64 ``+dotprod``: signed times signed).  They read the
*stored* 8-bit inputs: where the instruction wants the other signedness,
the kernel flips each broadcast word's top bits (``x ^ 0x80``, which maps
int8 ``v`` to uint8 ``v + 128`` and back), so the zero point moves by 128
(:func:`quad_input_offset`).  Without padding and with reduction runs of a
multiple of 4 the kernel reads the operation's input buffer itself; else a
copy holds the input inside padding of the zero point (so ``x - zx`` is 0
there, like the reference's skipped taps).  The panel holds four adjacent
reduction steps per output channel (:func:`pack_panel` with step 4; only
when ``w - filter_zp`` fits int8, :func:`quads_fit`), and the input zero
point's share ``- zx * sum w`` is folded into the bias at compile time
(:func:`quad_bias`).  Each product of a byte and a byte and each sum is
exact in int32, as in the pair form.  Widths the instruction lacks (one
or two lanes; AVX-VNNI's 16) and the ``quad`` form, which any target runs
so that a test can compare the quad layout with the pair form, compute the
same sums in widening arithmetic (:meth:`~nnc.passes.kernels.vector.IVec.quads_dot`).
The lowering (:mod:`nnc.passes.lowering.conv`) chooses the form.  The
blocking is the float GEMM's (``ctx.tiles``): one int32 lane per float
lane, the same register budget (accumulators + one weight vector per
column vector + the broadcast pair).  The GEMM's column blocks and the
depthwise kernel's output rows are independent (each writes its own
outputs) and marked for the thread pool (``parallel_each``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import IntegerType, i8, i16, i32, i64

from nnc.passes.build import vector_type
from nnc.passes.kernels.f32 import (
    Case,
    RunAt,
    TileCall,
    col_block_tiles,
    parallel_cases,
    pixel_tiles,
    row_blocks,
    series,
)
from nnc.passes.kernels.tiles import DepthwiseForm, GemmForm, TilePolicy
from nnc.passes.kernels.vector import (
    IndexOrInt,
    IVec,
    Vec,
    each,
    for_range,
    kernel,
    offsets,
    parallel_each,
    tag,
    widths,
)
from nnc.passes.lowering.base import Emitter, LoweringContext, Value
from nnc.passes.lowering.quant import AddParams, add_inputs_normal

# -- compile-time layouts --------------------------------------------------------------------


def requant_table(multipliers: Sequence[tuple[int, int]], cols: int, out_zp: int, lo: int, hi: int) -> np.ndarray:
    """The int32 table the epilogue reads: ``[m x cols, left x cols, right x
    cols, out_zp, lo, hi]``; ``multipliers`` has one (multiplier, shift) per
    channel or one for all."""
    ms = list(multipliers) if len(multipliers) == cols else [multipliers[0]] * cols
    m = [a for a, _ in ms]
    left = [max(s, 0) for _, s in ms]
    right = [max(-s, 0) for _, s in ms]
    return np.array(m + left + right + [out_zp, lo, hi], dtype=np.int32)


def column_blocks(cols: int, lanes: int, max_vectors: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """Output channels as blocks: ``(c0, c1, widths)``, the range [c0, c1)
    cut into blocks of the vector widths ``widths``: whole vectors in
    balanced blocks of at most ``max_vectors``, then the narrower tail (as
    the float GEMM)."""
    blocks = (
        [(v0 * lanes, v1 * lanes, (lanes,) * nv) for v0, v1, nv in row_blocks(cols // lanes, max_vectors)]
        if cols >= lanes
        else []
    )
    if cols % lanes:
        blocks.append((cols // lanes * lanes, cols, tuple(widths(cols % lanes, lanes))))
    return blocks


def pack_panel(w: np.ndarray, blocks: Sequence[tuple[int, int, tuple[int, ...]]], step: int = 2, narrow: bool = False) -> np.ndarray:
    """The GEMM weight panel: ``w`` is ``[cols, outer, run]`` (int16, the
    filter zero point already subtracted; ``outer`` the reduction's outer
    loops flattened, ``run`` its contiguous innermost run).  Block by block
    of output channels (width ``W`` at ``n0``, starting at element ``n0 *
    outer * groups * step``): ``[outer, groups, W, step]``, the run padded
    with zeros to a multiple of ``step``: int16 pairs (``step`` 2, the
    pair form; int8 with ``narrow``, when they fit) or int8 quads (``step``
    4, the quad forms, whose weights must fit int8: :func:`quads_fit`)."""
    cols, outer, run = w.shape
    groups = -(-run // step)
    # Filters minus their zero point lie in [-255, 255]: int16 holds every
    # intermediate, a quarter of the int32 copies a big layer would need;
    # a run of whole steps is blocked straight from ``w``.
    assert not w.size or -(1 << 15) <= int(w.min()) and int(w.max()) < 1 << 15, "panel values beyond int16"
    if run == step * groups and w.dtype == np.int16:
        padded = w
    else:
        padded = np.zeros((cols, outer, step * groups), dtype=np.int16)
        padded[:, :, :run] = w
    pw = padded.reshape(cols, outer, groups, step)
    out = np.empty(padded.size, dtype=np.int16 if step == 2 and not narrow else np.int8)
    at = 0
    for c0, c1, ws in blocks:
        width = sum(ws)
        for n0 in range(c0, c1, width):
            part = pw[n0 : n0 + width].transpose(1, 2, 0, 3)
            out[at : at + part.size] = part.reshape(-1)
            at += part.size
    return out[:at]


def quads_fit(w: np.ndarray) -> bool:
    """Whether weights ``w - filter_zp`` (int16) fit the int8 operands of
    the quad forms (signed filters with zero point 0 always do)."""
    return bool(w.size) and int(w.min()) >= -128 and int(w.max()) <= 127


def quad_bias(bias: np.ndarray, w: np.ndarray, in_zp: int) -> np.ndarray:
    """A quad form's accumulator start per output channel: it multiplies
    the stored inputs ``x`` (flipped as :func:`quad_input_offset` says), so
    ``sum (x - zx) w = sum x w - zx sum w`` and ``- zx sum w`` joins the
    bias (``w``: ``[cols, ...]``, exact in int32 as the reference's sum)."""
    # summed in int64 without an int64 copy of the filter (8 bytes a weight:
    # 19 MB for a 3x3x512x512 layer, which set the compile's peak)
    sums = w.reshape(w.shape[0], -1).sum(axis=1, dtype=np.int64)
    return (bias.astype(np.int64) - in_zp * sums).astype(np.int32)


def quad_input_offset(unsigned: bool, form: GemmForm) -> int:
    """What a quad form subtracts from a stored input (by flipping its top
    bit): 128 when uint8 meets ``sdot`` ([0, 255] -> [-128, 127]), -128
    when int8 meets ``vpdpbusd`` (-> [0, 255]), else 0; the zero point
    moves by as much."""
    if unsigned == form.unsigned_inputs:
        return 0
    return 128 if unsigned else -128


# -- the int16 input copy ---------------------------------------------------------------------


def widen_kernel(unsigned: bool, lanes: int):
    """The copy ``dst[dst_off + i] = int16(src[src_off + i]) - zp`` for ``i``
    in ``[0, n)``: vectors of ``lanes`` int16, then a scalar tail.  One
    shared kernel per signedness (zero- or sign-extended 8-bit storage):
    written inline, each layer's copy loop of constant trip count was
    vectorised and unrolled by LLVM in the graph function, thousands of
    instructions to optimise and compile per model."""
    name = f"nnc_q8_widen_{'u' if unsigned else 's'}{lanes}"
    ext_vec = llvm.ZExtOp if unsigned else llvm.SExtOp
    ext = arith.ExtUIOp if unsigned else arith.ExtSIOp

    def body(e: Emitter, p: list[Value]) -> None:
        src, dst, n, src_off, dst_off, zp = p
        z = e.op(arith.IndexCastOp(zp, i16))
        zv = IVec(e).splat(z, lanes)
        full = e.sub(n, e.rem(n, e.index(lanes)))

        def vec(e: Emitter, i: IndexOrInt) -> None:
            iv = IVec(e)
            x = iv.load(src, e.add(src_off, e.index(i)), i8, lanes)
            x = e.op(ext_vec(x, vector_type(i16, lanes)))
            iv.store(iv.sub(x, zv), dst, e.add(dst_off, e.index(i)))

        def scalar(e: Emitter, i: IndexOrInt) -> None:
            x = e.op(ext(e.load(src, [e.add(src_off, e.index(i))]), i16))
            e.store(e.sub(x, z), dst, [e.add(dst_off, e.index(i))])

        each(e, 0, full, lanes, vec)
        each(e, full, n, 1, scalar)

    return name, body


def widen_worth(tiles: TilePolicy, run: int) -> bool:
    """Whether copies in runs of ``run`` elements go through :func:`widen`:
    runs of at least four vectors (shorter ones are a few inline
    operations, less code than the kernel and its loops)."""
    return run >= 4 * 2 * tiles.lanes


def widen(
    ctx: LoweringContext, src: Value, dst: Value, unsigned: bool, zp: int,
    rows: tuple[int, int], row_len: int, dst_rows: tuple[int, int], dst_off: int,
) -> None:  # fmt: skip
    """``dst`` (flat int16) gets the flat 8-bit ``src`` minus ``zp``, run by
    run: ``rows`` = (batches, runs per batch) of ``row_len`` contiguous
    elements each, run ``(b, r)`` at ``dst_off + b * dst_rows[0] + r *
    dst_rows[1]`` in ``dst`` (rows of a zero-padded buffer, or the same
    layout as ``src``).  Runs are independent: the parallel loop."""
    e = ctx.e
    lanes = 2 * ctx.tiles.lanes  # int16 lanes in the float32 vector width
    name, body = widen_kernel(unsigned, lanes)
    batches, runs = rows

    def run(e: Emitter, b: IndexOrInt, r: IndexOrInt) -> None:
        v = Vec(e)
        s_off = v.ix(0, (b, runs * row_len), (r, row_len))
        d_off = v.ix(dst_off, (b, dst_rows[0]), (r, dst_rows[1]))
        kernel(ctx, e, name, [src, dst, row_len, s_off, d_off, zp], body)

    each(e, 0, batches, 1, lambda e2, b: parallel_each(e2, 0, runs, 1, lambda e3, r: run(e3, b, r), sizes=True))


# -- the requantisation epilogue ---------------------------------------------------------------


@dataclass(frozen=True)
class Rescale:
    """``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m),
    right)`` per lane (the tail of TFLite's ``MultiplyByQuantizedMultiplier``,
    and gemmlowp's ``MultiplyByQuantizedMultiplierSmallerThanOneExp``) for
    multipliers ``m`` in [0, 2^31) and shifts ``right`` in [0, 31], with
    what :func:`rescale` derives from them made once (per block of
    channels, not per pixel: fewer operations to compile, the same
    numbers)."""

    m: Value
    right: Value
    #: ``(1 << right) - 1`` and its half: RoundingDivideByPOT's mask and threshold
    mask: Value
    half: Value
    #: the constants 2^30 and 31 (int64 lanes), 31 (int32 lanes)
    nudge: Value
    high: Value
    sign: Value
    #: the multipliers of the even and of the odd lanes, sign-extended to
    #: int64 (``width / 2`` lanes each; None for an odd width)
    m_even: Value | None = None
    m_odd: Value | None = None
    #: the constants 32 and 1 (int64 lanes, for the even/odd split)
    half_word: Value | None = None
    one: Value | None = None


def rescale_params(iv: IVec, m: Value, right: Value) -> Rescale:
    """:class:`Rescale` of the int32 lanes ``m`` and ``right``."""
    w = iv.width(m)
    one = iv.const(1, i32, w)
    mask = iv.sub(iv.shl(one, right), one)
    h = w // 2
    nudge, high = iv.const(1 << 30, i64, h if w % 2 == 0 else w), iv.const(31, i64, h if w % 2 == 0 else w)
    p = Rescale(m, right, mask, iv.ashr(mask, one), nudge, high, iv.const(31, i32, w))
    if w % 2:
        return p
    half_word = iv.const(32, i64, h)
    even, odd = _halves(iv, m, half_word)
    return replace(p, m_even=even, m_odd=odd, half_word=half_word, one=iv.const(1, i64, h))


def uniform_rescale_params(iv: IVec, m: Value, right: Value, w: int) -> Rescale:
    """:func:`rescale_params` of one int32 multiplier ``m`` and shift
    ``right`` (scalars) in all ``w`` lanes.  The even and odd lanes'
    int64 multiplier is ``m`` sign-extended, then splat: LLVM then knows it
    is a sign-extended 32-bit value and multiplies with ``vpmuldq``, where
    from the halves of a splat of int32 lanes it multiplied the odd lanes
    in full 64 bits (three ``vpmuludq`` and their shifts)."""
    p = rescale_params(iv, iv.splat(m, w), iv.splat(right, w))
    if p.m_even is None:
        return p
    m64 = iv.splat(iv.e.op(arith.ExtSIOp(m, i64)), w // 2)
    return replace(p, m_even=m64, m_odd=m64)


def _halves(iv: IVec, x: Value, half_word: Value) -> tuple[Value, Value]:
    """The even and odd int32 lanes of ``x`` sign-extended to int64, in
    place (each pair of lanes read as one int64): what ``vpmuldq``
    multiplies, so LLVM selects it without moving lanes."""
    pairs = iv.bitcast(x, i64, iv.width(x) // 2)
    return iv.ashr(iv.shl(pairs, half_word), half_word), iv.ashr(pairs, half_word)


def rescale(iv: IVec, x: Value, p: Rescale) -> Value:
    """``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m), right)``
    lane by lane, as :mod:`~nnc.passes.lowering.quant` computes it on
    scalars (``srdhm`` then ``rdbpot``)."""
    # SaturatingRoundingDoublingHighMul(x, m) for m >= 0 (never INT32_MIN,
    # so nothing saturates): the high word of x * m + 2^30, as bits 31..62
    # (a logical shift gives the same low 32 bits as the arithmetic one,
    # and exists on every x86 target).
    if p.m_even is not None and p.m_odd is not None and p.half_word is not None and p.one is not None:
        # Even and odd lanes multiplied in place as int64 (vpmuldq on x86):
        # bits 31..62 of an even lane's product shifted down into its low
        # word, of an odd lane's shifted up into its high word, then the
        # words interleaved again.  No lane moves across the vector.
        w = iv.width(x)
        xe, xo = _halves(iv, x, p.half_word)
        pe = iv.add(iv.mul(xe, p.m_even), p.nudge)
        po = iv.add(iv.mul(xo, p.m_odd), p.nudge)
        low = iv.bitcast(iv.lshr(pe, p.high), i32, w)
        up = iv.bitcast(iv.shl(po, p.one), i32, w)
        x = iv.shuffle(low, up, [k if k % 2 == 0 else w + k for k in range(w)])
    else:
        prod = iv.add(iv.mul(iv.sext(x, i64), iv.sext(p.m, i64)), p.nudge)
        x = iv.trunc(iv.lshr(prod, p.high), i32)
    # RoundingDivideByPOT(x, right): round half away from zero.
    threshold = iv.add(p.half, iv.lshr(x, p.sign))  # + 1 when x < 0
    up = iv.lshr(iv.sub(threshold, iv.and_(x, p.mask)), p.sign)  # remainder > threshold
    return iv.add(iv.ashr(x, p.right), up)


@dataclass(frozen=True)
class Requant:
    """The requantisation parameters of ``width`` output channels
    (:func:`requant_params`): loaded once per block of channels and shared
    by every pixel of the block, as their :class:`Rescale`."""

    left: Value
    zp: Value
    lo: Value
    hi: Value
    scale: Rescale


def requant_params(iv: IVec, qt: Value, cols: IndexOrInt, n: IndexOrInt, w: int,
                   full: tuple[int, int] | None = None) -> Requant:  # fmt: skip
    """The parameters of output channels ``n + [0, w)`` from the table ``qt``
    (:func:`requant_table` of ``cols`` channels).  ``full``: the clamp is
    the output type's whole range, as constants rather than the table's
    entries: LLVM then narrows with saturation (``vpmovsdb``, ``vpmovusdb``)
    instead of a minimum, a maximum and a truncation."""
    e, v = iv.e, Vec(iv.e)
    m = iv.load(qt, n, i32, w)
    left = iv.load(qt, v.ix(n, cols), i32, w)
    right = iv.load(qt, v.ix(n, cols, cols), i32, w)
    tail = v.ix(cols, cols, cols)
    zp, lo, hi = (iv.splat(e.load(qt, [e.index(v.ix(tail, k))]), w) for k in range(3))
    if full is not None:
        lo, hi = iv.const(full[0], i32, w), iv.const(full[1], i32, w)
    return Requant(left, zp, lo, hi, rescale_params(iv, m, right))


def requantize_i32(iv: IVec, acc: Value, p: Requant) -> Value:
    """``clamp(MultiplyByQuantizedMultiplier(acc) + out_zp)`` in int32 lanes
    with the parameters ``p`` (:func:`requant_params`), computed like
    ``QuantConv.requantize``'s ``_mbqm_dynamic`` (the per-tensor constant
    form computes the same): the stored output's value, as a reader
    widening it would see it."""
    x = rescale(iv, iv.shl(acc, p.left), p.scale)
    return iv.max(iv.min(iv.add(x, p.zp), p.hi), p.lo)


def requantize(iv: IVec, acc: Value, p: Requant) -> Value:
    """:func:`requantize_i32` as the stored int8 lanes."""
    return iv.trunc(requantize_i32(iv, acc, p), i8)


# -- a quantised ADD of a residual ------------------------------------------------------------

def _input_row(left: int, offset: int, m: int, shift: int) -> list[int]:
    """One input's entries of :func:`add_table` (see :func:`input_lanes`)."""
    t = 31 - left
    r = -shift
    return [offset, m >> t, m & ((1 << t) - 1), 1 << (t - 1), (1 << r) >> 1, -1 if r else 0, r, t]


def add_table(p: AddParams) -> np.ndarray:
    """The int32 table :func:`add_params_of` reads for a quantised ADD
    (``AddParams``, input 1 the operand the kernel computes): per input
    the entries of :func:`input_lanes`, then the output multiplier and
    right shift, the output zero point and the activation's range."""
    assert add_inputs_normal(p), p
    row1 = _input_row(p.left_shift, p.input1_offset, p.input1_multiplier, p.input1_shift)
    row2 = _input_row(p.left_shift, p.input2_offset, p.input2_multiplier, p.input2_shift)
    tail = [p.output_multiplier, -p.output_shift, p.output_offset, p.act_min, p.act_max]
    return np.array(row1 + row2 + tail, dtype=np.int32)


@dataclass(frozen=True)
class AddForm:
    """What a fused ADD's code depends on besides its table (the kernel's
    name says it): whether its 8-bit type is unsigned, and per input whether
    it is ``plain``: of the larger scale (or of equal scales), its real
    multiplier ``s / (2 max(s1, s2))`` exactly 1/2, so ``m`` = 2^30 and no
    right shift (at least one input always is)."""

    unsigned: bool
    plain: tuple[bool, bool]

    @staticmethod
    def of(p: AddParams, unsigned: bool) -> AddForm:
        plain = [(m, shift) == (1 << 30, 0) for m, shift in
                 ((p.input1_multiplier, p.input1_shift), (p.input2_multiplier, p.input2_shift))]  # fmt: skip
        return AddForm(unsigned, (plain[0], plain[1]))

    @property
    def tag(self) -> str:
        """The kernel name's part: ``_add_s`` / ``_add_u``, then the plain inputs (``_p1``, ``_p12``)."""
        plain = "".join(str(k + 1) for k in range(2) if self.plain[k])
        return f"_add_{'u' if self.unsigned else 's'}" + (f"_p{plain}" if plain else "")


@dataclass(frozen=True)
class InputLanes:
    """One ADD input's parameters as equal lanes (:func:`input_lanes`)."""

    offset: Value
    m_high: Value
    m_low: Value
    nudge: Value
    half: Value
    negative: Value
    right: Value
    split: Value
    sign: Value


def input_lanes(iv: IVec, a: Value, p: InputLanes, plain: bool = False) -> Value:
    """``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul((a + offset)
    << left, m), r)`` (an ADD input rescaled, gemmlowp's
    ``MultiplyByQuantizedMultiplierSmallerThanOneExp``) in 32-bit lanes,
    for 8-bit values ``a`` (``|x| = |a + offset| < 2^9``), ``m`` in [2^30,
    2^31), ``t = 31 - left``:

    * ``SRDHM(x << left, m) = floor((x m + 2^(t-1)) / 2^t)`` (the product
      of ``x 2^left`` and ``m`` plus 2^30, its high bits from 31; nothing
      saturates), and with ``m = m_high 2^t + m_low`` that is ``x m_high +
      ((x m_low + 2^(t-1)) >> t)``: two 32-bit products, no 64-bit one;
    * ``RoundingDivideByPOT(v, r) = (v + 2^(r-1) - [v < 0]) >> r`` for
      ``r`` >= 1 (``v`` itself for ``r`` = 0: ``half`` and ``negative``
      are then 0), and ``v < 0`` exactly when ``x < 0`` (``|x m| >= 2^30 >
      2^(t-1)`` unless ``x`` = 0), the sign of ``x`` shifted down.

    The same integers as the scalar code, by exact integer identities.
    ``plain``: the input of the larger scale (``m`` = 2^30, ``r`` = 0, see
    :class:`AddForm`), whose rescale is ``x m_high`` (``m_low`` = 0, and
    ``(2^(t-1)) >> t`` = 0): one product."""
    x = iv.add(a, p.offset)
    if plain:
        return iv.mul(x, p.m_high)
    low = iv.ashr(iv.add(iv.mul(x, p.m_low), p.nudge), p.split)
    v = iv.add(iv.add(iv.mul(x, p.m_high), low), p.half)
    return iv.ashr(iv.add(v, iv.and_(iv.ashr(x, p.sign), p.negative)), p.right)


@dataclass(frozen=True)
class AddLanes:
    """A quantised ADD's parameters as ``width`` equal lanes (:func:`add_params_of`)."""

    input1: InputLanes
    input2: InputLanes
    out_scale: Rescale
    out_zp: Value
    lo: Value
    hi: Value


def table_scalars(e: Emitter, table: Value, n: int) -> list[Value]:
    """The first ``n`` entries of a parameter table, as scalars."""
    return [e.load(table, [e.index(k)]) for k in range(n)]


def add_params_of(iv: IVec, table: Value, w: int) -> AddLanes:
    """The parameters of :func:`add_table` at ``table``, each splat to ``w`` lanes."""
    scalars = table_scalars(iv.e, table, 21)
    s = [iv.splat(v, w) for v in scalars]
    sign = iv.const(31, i32, w)
    zo, lo, hi = s[18:]
    out_scale = uniform_rescale_params(iv, scalars[16], scalars[17], w)
    return AddLanes(_input_of(s[:8], sign), _input_of(s[8:16], sign), out_scale, zo, lo, hi)


def _input_of(row: list[Value], sign: Value) -> InputLanes:
    """An input's :func:`add_table` entries (``_input_row``) as lanes."""
    offset, m_high, m_low, nudge, half, negative, right, split = row
    return InputLanes(offset, m_high, m_low, nudge, half, negative, right, split, sign)


def add_lanes(iv: IVec, a: Value, b: Value, p: AddLanes, form: AddForm) -> Value:
    """One quantised ADD per lane of the int32 lanes ``a`` (input 1) and
    ``b`` (input 2), 8-bit values widened: the arithmetic of
    :func:`~nnc.passes.lowering.quant.add_element` (Android's
    ``AddElementwise``), clamped to the activation's range, as int32.
    ``form`` says which inputs take :func:`input_lanes`'s ``plain`` form."""
    y1, y2 = input_lanes(iv, a, p.input1, form.plain[0]), input_lanes(iv, b, p.input2, form.plain[1])
    raw = rescale(iv, iv.add(y1, y2), p.out_scale)
    return iv.max(iv.min(iv.add(raw, p.out_zp), p.hi), p.lo)


def value_lanes(iv: IVec, x: Value, unsigned: bool) -> Value:
    """Stored 8-bit lanes as int32: zero-extended for TENSOR_QUANT8_ASYMM, else
    sign-extended (what a quantised element's value is)."""
    return iv.zext(x, i32) if unsigned else iv.sext(x, i32)


# -- GEMM: out[m, n] = requant(bias[n] + sum_k x[...] * w[n, k]) -------------------------------


@dataclass(frozen=True)
class ResidualAdd:
    """A quantised ADD computed in the GEMM's epilogue (``nnc-fuse-epilogues``):
    the GEMM's requantised output is its input 1, ``residual`` (flat 8-bit,
    the output's layout) its input 2, ``table`` its :func:`add_table`,
    ``form`` what the kernel's code depends on."""

    residual: Value
    table: Value
    form: AddForm


@dataclass(frozen=True)
class Level:
    """An outer loop of the reduction: ``size`` steps of ``a_step`` input
    elements (the panel's step follows from the sizes)."""

    size: int
    a_step: int


def quad_dot(iv: IVec, form: GemmForm, acc: Value, x: Value, w: Value) -> Value:
    """``acc`` plus the quad products of the inputs ``x`` and weights ``w``
    with ``form``'s instruction where it has ``acc``'s width, else in
    widening arithmetic (the same sums)."""
    n = iv.width(acc)
    if form is GemmForm.SDOT and n in (2, 4):
        return iv.sdot(acc, w, x)
    if form is GemmForm.VPDPBUSD and n in (4, 8, 16):
        return iv.vpdpbusd(acc, x, w)
    return iv.quads_dot(acc, x, w, form.unsigned_inputs)


#: ``x ^ FLIP`` on a word of four bytes flips each byte's top bit (0x80808080)
FLIP = -0x7F7F7F80


def gemm_kernel(rows: int, ws: tuple[int, ...], levels: int, form: GemmForm = GemmForm.PAIR, flip: bool = False,
                narrow: bool = False, add: AddForm | None = None, full: tuple[int, int] | None = None):  # fmt: skip
    """The block kernel: ``rows`` output pixels (input windows at ``a_base
    + r * a_rstride`` in the input, outputs at ``out_base + r *
    ldo``) times the output channels ``n0 + [0, sum(ws))`` (of ``cols`` in
    the requantisation table), weights from the
    panel at ``b_base``; the reduction is ``levels`` outer loops (size,
    a_step, b_step parameters) around ``pairs`` steps of ``form.step``
    elements.  Per step: one weight vector per width, one broadcast input
    pair (quad) per row, rows x vectors pair products (quad dots).
    ``flip``: a quad form's inputs get their top bits flipped
    (:func:`quad_input_offset`).  ``narrow``: the pair form's panel holds
    its int16 weights as int8 (they fit, :func:`quads_fit`), sign-extended
    as loaded (one ``vpmovsxbw`` from memory in place of a load): half the
    bytes, for the products whose weights are read once per pixel or two
    (fully connected layers, small images), where memory sets the pace.

    ``add`` not None: a quantised ADD of a residual fused
    (:class:`ResidualAdd`; two buffer parameters after the levels', the
    residual in the output's layout and the :func:`add_table`), its 8-bit
    values unsigned or not: each requantised output, still in registers,
    is added to the residual element at its offset (:func:`add_lanes`)
    and the sum stored; the 8-bit type and the inputs' scales as ``add``
    says.  ``full``: the output's clamp is its type's whole range
    (:func:`requant_params`)."""
    prefix = "" if form is GemmForm.PAIR else f"{form.value}_"
    name = f"nnc_q8_{prefix}gemm_{rows}x{tag(ws)}_l{levels}{'_f' if flip else ''}{'_w8' if narrow else ''}"
    name += "" if add is None else add.tag
    name += "" if full is None else "_sat"
    width = sum(ws)
    step = form.step

    def body(e: Emitter, p: list[Value]) -> None:
        x, b, qt, bias, out, a_base, a_rstride, out_base, n0, cols, ldo, b_base, pairs = p[:13]
        lv = [p[13 + 3 * i : 16 + 3 * i] for i in range(levels)]
        v, iv = Vec(e), IVec(e)
        offs = offsets(ws)
        nw = len(ws)
        bases = [v.ix(a_base, (a_rstride, r)) for r in range(rows)]
        init = [iv.load(bias, v.ix(n0, o), i32, w) for o, w in zip(offs, ws)]
        accs = [init[j] for _ in range(rows) for j in range(nw)]

        def pair(e: Emitter, i: IndexOrInt, aoff: IndexOrInt, boff: IndexOrInt, accs: list[Value]) -> list[Value]:
            if step == 4:
                return quad(e, i, aoff, boff, accs)
            v, iv = Vec(e), IVec(e)
            bo = v.ix(boff, (i, 2 * width))
            if narrow:
                bv = [iv.sext(iv.load(b, v.ix(bo, 2 * o), i8, 2 * w), i16) for o, w in zip(offs, ws)]
            else:
                bv = [iv.load(b, v.ix(bo, 2 * o), i16, 2 * w) for o, w in zip(offs, ws)]
            new = []
            for r in range(rows):
                xp = iv.load(x, v.ix(bases[r], aoff, (i, 2)), i16, 2)
                splats = {w: iv.shuffle(xp, xp, [0, 1] * w) for w in sorted(set(ws))}
                new += [iv.pairs_dot(splats[w], bv[j], accs[r * nw + j]) for j, w in enumerate(ws)]
            return new

        def quad(e: Emitter, i: IndexOrInt, aoff: IndexOrInt, boff: IndexOrInt, accs: list[Value]) -> list[Value]:
            """One dot per (row, vector): the row's 4 input bytes as one
            int32 broadcast, against 4 int8 weights per output channel."""
            v, iv = Vec(e), IVec(e)
            bo = v.ix(boff, (i, 4 * width))
            bv = [iv.load(b, v.ix(bo, 4 * o), i8, 4 * w) for o, w in zip(offs, ws)]
            new = []
            for r in range(rows):
                word = iv.bitcast(iv.load(x, v.ix(bases[r], aoff, (i, 4)), i8, 4), i32, 1)
                if flip:
                    word = iv.xor(word, iv.const(FLIP, i32, 1))
                splats = {w: iv.bitcast(iv.shuffle(word, word, [0] * w), i8, 4 * w) for w in sorted(set(ws))}
                new += [quad_dot(iv, form, accs[r * nw + j], splats[w], bv[j]) for j, w in enumerate(ws)]
            return new

        def level(d: int, aoff: IndexOrInt, boff: IndexOrInt) -> Callable:
            def inner(e: Emitter, i: IndexOrInt, accs: list[Value]) -> list[Value]:
                size, a_step, b_step = lv[d]
                v = Vec(e)
                ao, bo = v.ix(aoff, (i, a_step)), v.ix(boff, (i, b_step))
                if d + 1 == levels:
                    return for_range(e, 0, pairs, 1, lambda e2, k, a: pair(e2, k, ao, bo, a), accs)
                return for_range(e, 0, lv[d + 1][0], 1, level(d + 1, ao, bo), accs)

            return inner

        if levels:
            accs = for_range(e, 0, lv[0][0], 1, level(0, 0, b_base), accs)
        else:
            accs = for_range(e, 0, pairs, 1, lambda e2, k, a: pair(e2, k, 0, b_base, a), accs)
        res, at = p[13 + 3 * levels :] if add is not None else (None, None)
        adds = {w: add_params_of(iv, at, w) for w in sorted(set(ws))} if at is not None else {}
        for j, (o, w) in enumerate(zip(offs, ws)):
            n = v.ix(n0, o)
            params = requant_params(iv, qt, cols, n, w, full)
            for r in range(rows):
                off = v.ix(out_base, (ldo, r), n)
                if res is None or add is None:
                    iv.store(requantize(iv, accs[r * nw + j], params), out, off)
                    continue
                y = requantize_i32(iv, accs[r * nw + j], params)
                rv = value_lanes(iv, iv.load(res, off, i8, w), add.unsigned)
                iv.store(iv.trunc(add_lanes(iv, y, rv, adds[w], add), i8), out, off)

    return name, body


#: Weight panels of at most this many bytes (int16 pairs or int8 quads,
#: every channel block) have their tiles ordered by pixels
#: (:func:`~nnc.passes.kernels.f32.pixel_tiles`): the thread pool then
#: splits the pixels, and no two threads write one pixel's int8 outputs (a
#: 64-byte line holds 64 channels: threads that split the channels wrote
#: the same lines at once, and MobileNetV3's 80x80x64 layer ran 1.36x
#: faster at two threads than at one).  Every thread reads every panel, so
#: a panel must stay in cache: half of a 32 KiB level-1 data cache, the
#: smallest of nnc's targets.
PIXEL_MAJOR_PANEL_BYTES = 16384


def gemm(
    ctx: LoweringContext,
    x: Value,
    panel: Value,
    qtab: Value,
    bias: Value,
    out: Value,
    run_count: int,
    run_at: RunAt,
    run_len: int,
    a_rstride: int,
    cols: int,
    levels: Sequence[Level],
    run: int,
    blocks: Sequence[tuple[int, int, tuple[int, ...]]],
    groups: int = 1,
    a_gstride: int = 0,
    ldo: int | None = None,
    form: GemmForm = GemmForm.PAIR,
    flip: bool = False,
    narrow: bool = False,
    add: ResidualAdd | None = None,
    full: tuple[int, int] | None = None,
) -> None:
    """``out`` (int8 ``[pixels, cols]``) = the requantised GEMM of the int16
    input ``x`` and the weight ``panel`` (:func:`pack_panel` of ``blocks``,
    which must be :func:`column_blocks` of ``cols`` under ``ctx.tiles``).
    The reduction is ``levels`` outer loops around a contiguous run of
    ``run`` input elements.  The output pixels are ``run_count`` runs of
    ``run_len`` whose input windows are ``a_rstride`` apart (``run_at``,
    as :func:`nnc.passes.kernels.f32.gemm`).  Every output tile (a block
    of pixels of one run x a block of channels) is one kernel call and one
    iteration of a single loop for the thread pool, in the float GEMM's
    order (:func:`~nnc.passes.kernels.f32.parallel_cases`: consecutive tiles
    share a weight panel); one loop over all the tiles splits evenly
    between threads where a loop over a few channel blocks would not.

    ``groups`` > 1 (GROUPED_CONV_2D): that many products side by side, group
    ``g`` with the output channels ``g * cols + [0, cols)`` (the panel packs
    every group's blocks in channel order, the table and the bias cover
    them all) reading the input ``g * a_gstride`` further.  ``ldo``: the
    distance between consecutive output pixels of a run (default every
    channel; a phase of TRANSPOSE_CONV_2D writes every ``stride``-th).

    ``form`` a quad form: ``x`` is the stored 8-bit input or a copy of it
    inside padding of the zero point, flipped as ``flip`` says
    (:func:`quad_input_offset`), ``panel`` :func:`pack_panel` with step 4
    and ``bias`` :func:`quad_bias`.  ``narrow``: the pair form's panel is
    int8 (:func:`gemm_kernel`).  ``add``: a quantised ADD of a residual
    computed in the epilogue, ``out`` then the ADD's result."""
    e = ctx.e
    step = form.step
    total = groups * cols
    ldo = total if ldo is None else ldo
    pairs = -(-run // step)
    depth = pairs
    for lv in levels:
        depth *= lv.size
    segments: list[Case] = []
    # Every column block takes the rows of the widest: a channel tail of one
    # vector could hold twice the rows, but each of its rows costs a
    # broadcast and a product per step whatever their number, and its own
    # row counts would be more kernels for LLVM to compile.
    rows = ctx.tiles.gemm_rows(max(len(ws) for _, _, ws in blocks))
    rblocks = row_blocks(run_len, rows)
    calls: list[tuple[int, int, int, TileCall]] = []
    for c0, c1, ws in blocks:
        width = sum(ws)
        lv_args = []
        inner = depth
        for lv in levels:
            inner //= lv.size
            lv_args += [lv.size, lv.a_step, inner * step * width]

        def call(e: Emitter, rows: int, n0: IndexOrInt, a_off: IndexOrInt, o_off: IndexOrInt, _run: IndexOrInt, ws=ws, lv_args=lv_args) -> None:
            name, body = gemm_kernel(rows, ws, len(levels), form, flip, narrow, None if add is None else add.form, full)
            b_base = Vec(e).ix(0, (n0, step * depth))
            args = [x, panel, qtab, bias, out, a_off, a_rstride, o_off, n0, total, ldo, b_base, pairs, *lv_args]
            args += [] if add is None else [add.residual, add.table]
            kernel(ctx, e, name, args, body)

        calls.append((c0, c1, width, call))
        segments.append(col_block_tiles(c0, c1, width, run_count, run_at, rblocks, a_rstride, ldo, call, (groups, cols, a_gstride)))
    panel_bytes = depth * step * total * (2 if step == 2 and not narrow else 1)
    if groups == 1 and sum((c1 - c0) // w for c0, c1, w, _ in calls) > 1 and panel_bytes <= PIXEL_MAJOR_PANEL_BYTES:
        segments = [pixel_tiles(calls, run_count, run_at, rblocks, a_rstride, ldo)]
    parallel_cases(e, segments)


# -- depthwise ---------------------------------------------------------------------------------


def dw_pair_weights(w: np.ndarray) -> np.ndarray:
    """The depthwise filter ``w`` (``[taps, chans]``, ``w - filter_zp``) as
    tap pairs for :func:`dw_kernel`'s pair form: ``[pairs, chans, 2]``, the
    weights of taps ``2j`` and ``2j + 1`` of each channel side by side (a
    last odd tap with a zero partner), int16."""
    taps, chans = w.shape
    padded = np.zeros((taps + taps % 2, chans), np.int16)
    padded[:taps] = w
    return np.ascontiguousarray(padded.reshape(-1, 2, chans).transpose(0, 2, 1)).reshape(-1)


def dw_kernel(npix: int, taps: tuple[int, int] | None, tails: tuple[int, ...], lanes: int, unsigned: bool,
              form: DepthwiseForm = DepthwiseForm.WIDEN, geometry: tuple[int, int, int, int] | None = None,
              corrected: bool = False, clipped: bool = False, full: tuple[int, int] | None = None):  # fmt: skip
    """``npix`` output pixels along a row, all channels, read from the
    stored 8-bit input (no copy: sign- or zero-extended as loaded): per
    vector of channels (``lanes`` wide, then the ``tails``), one int32
    accumulator per pixel; per tap one weight vector (int16 ``w -
    filter_zp``) serves every pixel.  ``taps`` (fh, fw) unrolls the whole
    window; None loops over the taps [kh0, kh1) x [kw0, kw1) given at run
    time (border pixels, whose window is clipped to the input: the taps in
    the padding are skipped, as the reference skips them).

    The input zero point is not subtracted per product: ``sum (x - zx) w =
    sum x w - zx sum w`` over the taps the window sees.  ``corrected``: the
    bias already holds ``bias - zx * sum w`` over the whole window (made at
    compile time, :func:`dw_corrected_bias`); otherwise each block adds up
    its weight vectors once (shared by its pixels) and starts from ``bias -
    zx * sum w``.  Every sum is exact in int32 (wrapping), as the
    reference's.

    ``geometry`` (``chans``, pixel, tap-row and tap-column strides): the
    strides as constants rather than parameters, one kernel per layer
    shape: each load's address is then one base register and a constant
    displacement, where run-time strides kept a register per tap and pixel
    and ran out of them.

    ``form`` the quad form (with ``taps``): the taps four at a time, ``w``
    the weights as :func:`dw_quad_weights` lays them out: per pixel the
    four taps' input bytes interleaved (one byte shuffle, no widening; an
    int8 input's top bit flipped, the bias holding the offset's share) and
    VNNI's ``vpdpbusd`` (four products and their sum per int32 lane).
    ``clipped`` (quads): the unrolled window for border pixels, the taps
    [kh0, kh1) x [kw0, kw1) inside the input given at run time (not
    empty): the others' weights are masked to 0 and their loads read the
    window's first tap instead (inside the input), both chosen once per
    call, outside the loop over channels, so a border pixel costs what an
    interior one does, in a kernel per pixel count (the zero point's share
    then comes from the weights the window keeps, with ``zx`` the flipped
    zero point).

    ``form`` a pair form (with ``taps``): the taps two at a time, ``w`` the
    weights as :func:`dw_pair_weights` lays them out: per pixel the two
    taps' input bytes interleaved and widened to int16, one pair product
    per int32 lane (:meth:`~nnc.passes.kernels.vector.IVec.pairs_dot`, or
    VNNI's ``vpdpwssd``) in place of two 32-bit multiplies; every product
    of a byte and an int16 weight and their sum are exact."""
    shape = f"{taps[0]}x{taps[1]}" if taps else "clip"
    pairs, quads = form.pairs and taps is not None, form.quads and taps is not None
    assert (corrected or clipped or not quads) and (quads or not clipped), "quads: a corrected bias, or clipped"
    name = f"nnc_q8_dw_{npix}p_{shape}_t{tag(tails)}_{'u' if unsigned else 's'}"
    name += f"_{form.value}" if pairs or quads else ""
    name += "_c" if corrected else ""
    name += "_clip" if clipped else ""
    name += "" if full is None else "_sat"
    name += "" if geometry is None else "_g" + "_".join(map(str, geometry))

    def body(e: Emitter, p: list[Value]) -> None:
        x, w, qt, bias, out, cfull, _, x_base, _, _, _, w_kh, kh0, kh1, kw0, kw1, out_base, zx = p
        # the strides: parameters, or constants (see ``geometry``)
        strides: tuple[IndexOrInt, ...] = (p[6], p[8], p[9], p[10]) if geometry is None else geometry
        chans, x_pix, x_kh, x_kw = strides
        zx32 = e.op(arith.IndexCastOp(zx, i32))

        def widened(iv: IVec, xq: Value, elem: IntegerType) -> Value:
            return iv.zext(xq, elem) if unsigned else iv.sext(xq, elem)

        def tap(e: Emitter, x_tap: IndexOrInt, w_tap: IndexOrInt, c0: IndexOrInt, width: int, xb: list[IndexOrInt], acc: list[Value]) -> list[Value]:
            """One tap: its weights at ``w_tap``, its input at ``x_tap`` from
            each pixel's base; ``acc``: the pixels' sums (then the weights')."""
            v, iv = Vec(e), IVec(e)
            wv = iv.sext(iv.load(w, v.ix(c0, w_tap), i16, width), i32)
            xs = [widened(iv, iv.load(x, v.ix(xb[q], x_tap), i8, width), i32) for q in range(npix)]
            sums = [iv.add(acc[q], iv.mul(xs[q], wv)) for q in range(npix)]
            return sums if corrected else sums + [iv.add(acc[npix], wv)]

        def tap_pairs(e: Emitter, c0: IndexOrInt, width: int, xb: list[IndexOrInt], acc: list[Value]) -> list[Value]:
            """The whole window two taps at a time (see ``form``)."""
            assert taps is not None
            v, iv = Vec(e), IVec(e)
            window = [(kh, kw) for kh in range(taps[0]) for kw in range(taps[1])]
            x_rows, x_cols = series(v, 0, x_kh, taps[0]), series(v, 0, x_kw, taps[1])
            ones = iv.const(1, i16, 2 * width)
            mix = [k // 2 + (width if k % 2 else 0) for k in range(2 * width)]
            dot = iv.vpdpwssd if form is DepthwiseForm.VPDPWSSD and width in (4, 8, 16) else iv.pairs_dot
            for j in range(0, len(window), 2):
                wv = iv.load(w, v.ix(0, (chans, j), (c0, 2)), i16, 2 * width)  # pair j // 2 at 2 * chans * (j // 2)
                if not corrected:
                    acc[npix] = iv.pairs_dot(ones, wv, acc[npix])
                offs = [v.ix(x_rows[kh], x_cols[kw]) for kh, kw in window[j : j + 2]]
                for q in range(npix):
                    a = iv.load(x, v.ix(xb[q], offs[0]), i8, width)
                    b = iv.load(x, v.ix(xb[q], offs[-1]), i8, width)  # a last odd tap: its partner weighs 0
                    acc[q] = dot(widened(iv, iv.shuffle(a, b, mix), i16), wv, acc[q])
            return acc

        def inside(e: Emitter, kh: int, kw: int) -> Value:
            """Whether tap (kh, kw) is in the run-time range (``clipped``)."""
            ok = e.cmp("le", kh0, e.index(kh))
            for t in (e.cmp("gt", kh1, e.index(kh)), e.cmp("le", kw0, e.index(kw)), e.cmp("gt", kw1, e.index(kw))):
                ok = e.and_(ok, t)
            return ok

        def tap_quads(e: Emitter, c0: IndexOrInt, width: int, xb: list[IndexOrInt], acc: list[Value]) -> list[Value]:
            """The whole window four taps at a time (see ``form``)."""
            assert taps is not None
            v, iv = Vec(e), IVec(e)
            window = [(kh, kw) for kh in range(taps[0]) for kw in range(taps[1])]
            x_rows, x_cols = series(v, 0, x_kh, taps[0]), series(v, 0, x_kw, taps[1])
            concat = list(range(2 * width))
            mix = [k * width + i for i in range(width) for k in range(4)]
            top, ones = iv.const(-128, i8, 4 * width), iv.const(1, i8, 4 * width)
            first = e.index(v.ix(0, (kh0, x_kh), (kw0, x_kw)))  # the window's first tap (``clipped``)
            for j in range(0, len(window), 4):
                wv = iv.load(w, v.ix(0, (chans, j), (c0, 4)), i8, 4 * width)  # quad j // 4 at 4 * chans * (j // 4)
                group = window[j : j + 4]
                group += group[-1:] * (4 - len(group))  # the last quad's missing taps weigh 0
                offs = [v.ix(x_rows[kh], x_cols[kw]) for kh, kw in group]
                if clipped:
                    oks = [inside(e, kh, kw) for kh, kw in group]
                    offs = [e.select(ok, e.index(off), first) for ok, off in zip(oks, offs)]
                    mask = e.i32(0)
                    for k, ok in enumerate(oks[: len(window[j : j + 4])]):
                        byte_k = int(np.uint32(0xFF << (8 * k)).view(np.int32))  # byte k of each int32 lane
                        mask = e.or_(mask, e.select(ok, e.i32(byte_k), e.i32(0)))
                    wv = iv.and_(wv, iv.bitcast(iv.splat(mask, width), i8, 4 * width))
                    acc[npix] = quad_dot(iv, GemmForm.VPDPBUSD, acc[npix], ones, wv)  # the weights kept
                for q in range(npix):
                    b = [iv.load(x, v.ix(xb[q], off), i8, width) for off in offs]
                    quad = iv.shuffle(iv.shuffle(b[0], b[1], concat), iv.shuffle(b[2], b[3], concat), mix)
                    if not unsigned:
                        quad = iv.xor(quad, top)  # int8 -> uint8 + 128 (the bias has the offset's share)
                    acc[q] = quad_dot(iv, GemmForm.VPDPBUSD, acc[q], quad, wv)
            return acc

        def block(e: Emitter, c0: IndexOrInt, width: int) -> None:
            v, iv = Vec(e), IVec(e)
            xb = series(v, v.ix(x_base, c0), x_pix, npix)
            acc = [iv.const(0, i32, width)] * (npix + (0 if corrected else 1))
            if quads:
                acc = tap_quads(e, c0, width, xb, acc)
            elif pairs:
                acc = tap_pairs(e, c0, width, xb, acc)
            elif taps is not None:
                x_rows, w_rows = series(v, 0, x_kh, taps[0]), series(v, 0, w_kh, taps[0])
                x_cols, w_cols = series(v, 0, x_kw, taps[1]), series(v, 0, chans, taps[1])
                for kh in range(taps[0]):
                    for kw in range(taps[1]):
                        acc = tap(e, v.ix(x_rows[kh], x_cols[kw]), v.ix(w_rows[kh], w_cols[kw]), c0, width, xb, acc)
            else:
                def clipped(e: Emitter, kh: IndexOrInt, kw: IndexOrInt, acc: list[Value]) -> list[Value]:
                    v = Vec(e)
                    return tap(e, v.ix(0, (kh, x_kh), (kw, x_kw)), v.ix(0, (kh, w_kh), (kw, chans)), c0, width, xb, acc)

                acc = e.for_(kh0, kh1, lambda e2, kh, a2: e2.for_(
                    kw0, kw1, lambda e3, kw, a3: clipped(e3, kh, kw, list(a3)), list(a2)), acc)  # fmt: skip
            start = iv.load(bias, c0, i32, width)
            if not corrected:
                start = iv.sub(start, iv.mul(iv.splat(zx32, width), acc[npix]))
            params = requant_params(iv, qt, chans, c0, width, full)
            for q, o in enumerate(series(v, v.ix(out_base, c0), chans, npix)):
                iv.store(requantize(iv, iv.add(acc[q], start), params), out, o)

        each(e, 0, cfull, lanes, lambda e2, c0: block(e2, c0, lanes))
        for o, tw in zip(offsets(tails), tails):
            block(e, Vec(e).ix(cfull, o), tw)

    return name, body


def dw_quad_weights(w: np.ndarray) -> np.ndarray:
    """The depthwise filter ``w`` (``[taps, chans]``, ``w - filter_zp``,
    fitting int8: :func:`quads_fit`) as tap quads for :func:`dw_kernel`'s
    quad form: ``[quads, chans, 4]``, the weights of taps ``4j .. 4j + 3``
    of each channel side by side (the last quad's missing taps weigh 0),
    int8."""
    taps, chans = w.shape
    quads = np.zeros(((taps + 3) // 4 * 4, chans), np.int8)
    quads[:taps] = w
    return np.ascontiguousarray(quads.reshape(-1, 4, chans).transpose(0, 2, 1))


def dw_corrected_bias(bias: np.ndarray, w: np.ndarray, in_zp: int) -> np.ndarray:
    """The whole window's accumulator start per channel: ``bias - zx * sum
    w`` over the taps (``w``: ``[taps, chans]``, ``w - filter_zp``), as
    int32 wraps (see :func:`dw_kernel`'s ``corrected``)."""
    return (bias.astype(np.int64) - in_zp * w.sum(axis=0, dtype=np.int64)).astype(np.int32)
