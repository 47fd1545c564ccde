"""The mechanism of nnc's shared vector kernels: how a kernel is used, and the
vector arithmetic and loops kernels are written with.

Hand-blocked kernels are written directly as register-blocked vector loops
(``scf.for`` + the vector dialect) rather than as ``linalg.generic``
reductions: with the generic, every multiply-accumulate loads and stores the
output element, and LLVM's vectoriser cannot keep accumulators in registers
across the reduction loops.

The kernels are shared: a kernel's code depends only on what its name says
(block shape, activation, channel tails), every size, stride and offset is a
run-time argument.  Each use is emitted by :func:`kernel` as a marked
``scf.execute_region``; ``nnc-outline-kernels`` turns each distinct kernel
into one private function and every use into a call.  A model then compiles
a few dozen small functions plus per-layer loops that call them, instead of
per-layer copies of unrolled code, which keeps the xDSL passes and LLVM
fast; the per-call overhead is a few nanoseconds against hundreds of vector
FMAs.

What one compilation has emitted so far (which kernels already have a body,
the index constants kernel arguments share) lives in the lowering context's
:class:`~nnc.passes.lowering.EmissionState`, never in this module, so two
compilations in two threads cannot interfere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, llvm, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerType,
    MemRefType,
    StringAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
    VectorType,
    f16,
    f32,
    i32,
    i64,
)
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint

from nnc.enums import FuseCode
from nnc.passes.build import arith_binary, integer_cast, new_op, vector_type
from nnc.passes.lowering.base import ConstScope, Emitter, LoweringContext, Value, memref_of
from nnc.passes.outline_kernels import KERNEL_ATTR
from nnc.passes.outline_parallel import PARALLEL_ATTR, SIZES_ATTR

#: a float32 buffer inside a kernel: any length (kernels serve every layer)
ANY_F32 = MemRefType(f32, [DYNAMIC_INDEX])

IndexOrInt = Value | int


def any_length(t: MemRefType) -> MemRefType:
    """A kernel's parameter type for a buffer of type ``t``: one dimension of
    any length, the same element type (:data:`ANY_F32` for float32)."""
    return memref_of(t.element_type, (DYNAMIC_INDEX,))


def _index_const(ctx: LoweringContext, n: int) -> Value:
    """``arith.constant n : index`` at the top level of the function ``ctx``
    lowers into, made once (the block's :class:`ConstScope`): kernel
    arguments are mostly a few small sizes and strides repeated at every use."""
    return ctx.shared_e().index(n)


def kernel(
    ctx: LoweringContext, e: Emitter, name: str, args: Sequence[IndexOrInt], body: Callable[[Emitter, list[Value]], None]
) -> None:
    """Apply the shared kernel ``name`` to ``args`` (buffers and ``index``
    values; ints become index constants) at ``e``, somewhere in the
    function ``ctx`` lowers into.

    Emitted as ``scf.execute_region {nnc.kernel = name}`` whose first op is
    an ``unrealized_conversion_cast`` of the arguments to the kernel's
    parameter types (buffers to one-dimensional buffers of any length and
    the same element type, ``memref<?xf32>``, ``memref<?xi16>``); the first use of a name
    in a function also holds the kernel's code, ``body(e, params)``, later
    uses only the cast (building the same code again would cost most of the
    compile time).  nnc-outline-kernels makes the cast's results the
    parameters of one function per name.  ``body`` must depend on nothing
    but ``params`` and what ``name`` encodes (and the compilation's tile
    policy, which is the same for every use)."""
    vals = [_index_const(ctx, a) if isinstance(a, int) else a for a in args]
    types = [any_length(v.type) if isinstance(v.type, MemRefType) else v.type for v in vals]
    block = Block()
    builder = Builder(InsertPoint.at_end(block))
    inner = Emitter(builder, ConstScope(builder))  # the body's own constants: it is outlined
    cast = UnrealizedConversionCastOp.get(vals, types)
    inner.b.insert(cast)
    emitted = ctx.emission.kernel_bodies.setdefault(ctx.builder.insertion_point.block, set())
    if name not in emitted:
        body(inner, list(cast.results))
        emitted.add(name)
    inner.b.insert(scf.YieldOp())
    op = scf.ExecuteRegionOp([], Region(block))
    op.attributes[KERNEL_ATTR] = StringAttr(name)
    e.b.insert(op)


# -- vector widths and kernel names -----------------------------------------------------------


def widths(n: int, widest: int) -> list[int]:
    """``n`` lanes as vector widths, widest first: 40 -> [16, 16, 8]."""
    out: list[int] = []
    w = widest
    while n > 0:
        while w > n:
            w //= 2
        out.append(w)
        n -= w
    return out


def offsets(ws: Sequence[int]) -> list[int]:
    """Where each of the vector widths ``ws`` starts: [16, 16, 8] -> [0, 16, 32]."""
    offs, o = [], 0
    for w in ws:
        offs.append(o)
        o += w
    return offs


def tag(ws: Sequence[int]) -> str:
    """Vector widths in a kernel name: [8, 4] -> ``8_4``."""
    return "_".join(map(str, ws)) or "0"


def act_tag(act: int) -> str:
    """A fused activation in a kernel name: ``relu6``."""
    return FuseCode(act).name.lower()


# -- vector arithmetic --------------------------------------------------------------------------


class Vec:
    """Vector and index arithmetic at one insertion point (float32 only)."""

    def __init__(self, e: Emitter):
        self.e = e

    def ix(self, base: IndexOrInt, *terms: tuple[IndexOrInt, IndexOrInt] | IndexOrInt) -> IndexOrInt:
        """``base + sum(terms)`` on ``index`` values, folding constants; a term
        is a value, a constant or a product ``(a, b)``."""
        const = 0
        acc: Value | None = None

        def add(v: IndexOrInt) -> None:
            nonlocal const, acc
            if isinstance(v, int):
                const += v
            else:
                acc = v if acc is None else self.e.add(acc, v)

        add(base)
        for t in terms:
            if not isinstance(t, tuple):
                add(t)
                continue
            a, b = t
            if isinstance(a, int) and isinstance(b, int):
                add(a * b)
            elif isinstance(a, int) or isinstance(b, int):
                k, val = (a, b) if isinstance(a, int) else (b, a)
                if k:
                    add(val if k == 1 else self.e.mul(val, self.e.index(k)))  # type: ignore[arg-type]
            else:
                add(self.e.mul(a, b))
        if acc is None:
            return const
        return acc if const == 0 else self.e.add(acc, self.e.index(const))

    def load(self, buf: Value, off: IndexOrInt, width: int) -> Value:
        return self.e.op(new_op(vector.LoadOp, (buf, self.e.index(off)), (vector_type(f32, width),)))

    def load_half(self, buf: Value, off: IndexOrInt, width: int) -> Value:
        """``width`` float16 values of ``buf`` at ``off`` as float32 lanes
        (exact; one ``vcvtph2ps`` from memory with F16C, ``fcvtl`` on
        AArch64: only for targets with half conversions)."""
        h = self.e.op(new_op(vector.LoadOp, (buf, self.e.index(off)), (vector_type(f16, width),)))
        return self.e.op(arith.ExtFOp(h, vector_type(f32, width)))

    def store(self, v: Value, buf: Value, off: IndexOrInt) -> None:
        self.e.op(new_op(vector.StoreOp, (v, buf, self.e.index(off))))

    def splat(self, s: Value, width: int) -> Value:
        return self.e.op(new_op(vector.BroadcastOp, (s,), (vector_type(f32, width),)))

    def fma(self, a: Value, b: Value, acc: Value) -> Value:
        """``acc + a * b`` that LLVM may contract into one fused multiply-add:
        a vfmadd on targets with FMA, a multiply and an add on the others
        (where ``vector.fma``, i.e. ``llvm.fma``, would become a libm ``fmaf``
        call per lane)."""
        prod = self.e.op(arith_binary(arith.MulfOp, a, b, _CONTRACT))
        return self.e.op(arith_binary(arith.AddfOp, acc, prod, _CONTRACT))

    def const(self, value: float, width: int) -> Value:
        t = vector_type(f32, width)
        attr = lambda: arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [float(value)] * width), t)
        return self.e.constant((t, repr(float(value))), attr)

    def activation(self, v: Value, code: int) -> Value:
        """The fused activation on a vector (the scalar
        :func:`~nnc.passes.lowering.activation`'s ops)."""
        lo, hi = _ACT_RANGE[FuseCode(code)]
        w = vector_width(v)
        if lo is not None:
            v = self.e.op(arith_binary(arith.MaxnumfOp, v, self.const(lo, w)))
        if hi is not None:
            v = self.e.op(arith_binary(arith.MinnumfOp, v, self.const(hi, w)))
        return v

    def shuffle(self, a: Value, b: Value, mask: Sequence[int]) -> Value:
        t = vector_type(f32, len(mask))
        return self.e.op(vector.ShuffleOp(a, b, DenseArrayBase.from_list(i64, list(mask)), result_type=t))

    def hsum(self, v: Value) -> Value:
        """The lanes of ``v`` added up pairwise (halving), as a scalar."""
        w = vector_width(v)
        while w > 1:
            h = w // 2
            v, w = self.e.op(arith.AddfOp(self.shuffle(v, v, range(h)), self.shuffle(v, v, range(h, w)))), h
        return self.e.op(vector.ExtractOp(v, [0], f32))


_CONTRACT = arith.FastMathFlagsAttr([arith.FastMathFlag.ALLOW_CONTRACT])

_ACT_RANGE: dict[FuseCode, tuple[float | None, float | None]] = {
    FuseCode.NONE: (None, None),
    FuseCode.RELU: (0.0, None),
    FuseCode.RELU1: (-1.0, 1.0),
    FuseCode.RELU6: (0.0, 6.0),
}


# -- integer vectors (the quantised kernels) ----------------------------------------------------


class IVec:
    """Integer vector arithmetic at one insertion point (any element width).

    Widening and narrowing are the llvm dialect's ``llvm.sext`` /
    ``llvm.trunc`` on vectors: xDSL's ``arith.extsi`` / ``arith.trunci`` take
    scalars only; convert-nnc-to-llvm passes the two casts through
    unchanged.  Everything else is ``arith`` and ``vector``."""

    def __init__(self, e: Emitter):
        self.e = e

    @staticmethod
    def width(v: Value) -> int:
        return vector_width(v)

    def load(self, buf: Value, off: IndexOrInt, elem: IntegerType, width: int) -> Value:
        return self.e.op(new_op(vector.LoadOp, (buf, self.e.index(off)), (vector_type(elem, width),)))

    def store(self, v: Value, buf: Value, off: IndexOrInt) -> None:
        self.e.op(new_op(vector.StoreOp, (v, buf, self.e.index(off))))

    def const(self, value: int, elem: IntegerType, width: int) -> Value:
        t = vector_type(elem, width)
        attr = lambda: arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [int(value)] * width), t)
        return self.e.constant((t, repr(int(value))), attr)

    def splat(self, s: Value, width: int) -> Value:
        return self.e.op(new_op(vector.BroadcastOp, (s,), (vector_type(s.type, width),)))

    def sext(self, v: Value, elem: IntegerType) -> Value:
        return self.e.op(integer_cast(llvm.SExtOp, v, vector_type(elem, self.width(v))))

    def bitcast(self, v: Value, elem: IntegerType, width: int) -> Value:
        """The same bits as ``width`` lanes of ``elem`` (``llvm.bitcast``)."""
        return self.e.op(llvm.BitcastOp(v, vector_type(elem, width)))

    def zext(self, v: Value, elem: IntegerType) -> Value:
        return self.e.op(integer_cast(llvm.ZExtOp, v, vector_type(elem, self.width(v))))

    def to_float(self, v: Value) -> Value:
        """The signed integer lanes of ``v`` as float32 lanes (``llvm.sitofp``)."""
        return self.e.op(new_op(llvm.SIToFPOp, (v,), (vector_type(f32, self.width(v)),)))

    def sdot(self, acc: Value, a: Value, b: Value) -> Value:
        """AArch64 ``sdot`` (FEAT_DotProd): int32 lane ``i`` of ``acc`` plus
        the four products of int8 lanes ``4i .. 4i+3`` of ``a`` and ``b``;
        ``acc`` has 2 or 4 lanes.  An intrinsic, as no target-independent
        IR keeps the lanes' assignment (``llvm.vector.partial.reduce.add``
        leaves it unspecified); only for targets with ``+dotprod``."""
        n = self.width(acc)
        name = f"llvm.aarch64.neon.sdot.v{n}i32.v{4 * n}i8"
        return self.e.op(llvm.CallIntrinsicOp(name, [acc, a, b], [acc.type]))

    def vpdpbusd(self, acc: Value, u: Value, s: Value) -> Value:
        """x86 ``vpdpbusd`` (AVX512-VNNI, or AVX-VNNI on 4 and 8 lanes):
        int32 lane ``i`` of ``acc`` plus the four products of the unsigned
        bytes ``4i .. 4i+3`` of ``u`` and the signed bytes of ``s``, without
        saturation; ``acc`` has 4, 8 or 16 lanes.  An intrinsic for the
        same reason as :meth:`sdot`; only for targets with the feature."""
        n = self.width(acc)
        name = f"llvm.x86.avx512.vpdpbusd.{32 * n}"
        return self.e.op(llvm.CallIntrinsicOp(name, [acc, u, s], [acc.type]))

    def vpdpwssd(self, x: Value, w: Value, acc: Value) -> Value:
        """x86 ``vpdpwssd`` (AVX512-VNNI, or AVX-VNNI on 4 and 8 lanes):
        :meth:`pairs_dot` in one instruction, without saturation; ``acc``
        has 4, 8 or 16 lanes.  The intrinsic, as LLVM forms the instruction
        from :meth:`pairs_dot`'s pattern only in some contexts."""
        n = self.width(acc)
        name = f"llvm.x86.avx512.vpdpwssd.{32 * n}"
        args = [acc, self.bitcast(x, i32, n), self.bitcast(w, i32, n)]
        return self.e.op(llvm.CallIntrinsicOp(name, args, [acc.type]))

    def quads_dot(self, acc: Value, x: Value, w: Value, unsigned_x: bool) -> Value:
        """``acc`` lane ``i`` plus ``sum_k x[4i + k] * w[4i + k]`` in widening
        arithmetic: the dot instructions' result (``x`` unsigned bytes as
        :meth:`vpdpbusd` reads them, or signed as :meth:`sdot`; ``w``
        signed), for any lane count and on any target.  The form the quad
        kernels fall back to where the instruction has no such width, and
        the one a test forces to compare the quad layout with the pair form
        on a host without the instruction."""
        n = self.width(acc)
        xs = self.zext(x, i32) if unsigned_x else self.sext(x, i32)
        prod = self.mul(xs, self.sext(w, i32))
        pairs = self.add(self.shuffle(prod, prod, range(0, 4 * n, 2)), self.shuffle(prod, prod, range(1, 4 * n, 2)))
        quads = self.add(self.shuffle(pairs, pairs, range(0, 2 * n, 2)), self.shuffle(pairs, pairs, range(1, 2 * n, 2)))
        return self.add(acc, quads)

    def trunc(self, v: Value, elem: IntegerType) -> Value:
        return self.e.op(integer_cast(llvm.TruncOp, v, vector_type(elem, self.width(v))))

    def shuffle(self, a: Value, b: Value, mask: Sequence[int]) -> Value:
        assert isinstance(a.type, VectorType)
        t = vector_type(a.type.element_type, len(mask))
        return self.e.op(vector.ShuffleOp(a, b, DenseArrayBase.from_list(i64, list(mask)), result_type=t))

    def add(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.AddiOp, a, b))

    def sub(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.SubiOp, a, b))

    def mul(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.MuliOp, a, b))

    def xor(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.XOrIOp, a, b))

    def and_(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.AndIOp, a, b))

    def shl(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.ShLIOp, a, b))

    def ashr(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.ShRSIOp, a, b))

    def lshr(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.ShRUIOp, a, b))

    def min(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.MinSIOp, a, b))

    def max(self, a: Value, b: Value) -> Value:
        return self.e.op(arith_binary(arith.MaxSIOp, a, b))

    def pairs_dot(self, x: Value, w: Value, acc: Value) -> Value:
        """``acc + x[0::2] * w[0::2] + x[1::2] * w[1::2]``: ``x`` and ``w``
        are ``2n`` int16 lanes (pairs of adjacent reduction steps), ``acc``
        ``n`` int32 lanes; exact, as every product and sum of int16 pairs
        fits int32.

        Written as the widened ``2n``-lane product whose even and odd lanes
        are then added: LLVM's X86 backend selects one ``vpmaddwd`` for it
        (``vpdpwssd`` with the accumulation on AVX-VNNI / AVX512-VNNI), on
        any vector width, and other targets widening multiply-adds.  (The
        other textbook form, even and odd lanes of each operand multiplied
        separately, shares the weights' shuffles between the rows of a
        block; LLVM then reassociates the sums and the match fails.)"""
        n = self.width(acc)
        prod = self.mul(self.sext(x, i32), self.sext(w, i32))
        even, odd = list(range(0, 2 * n, 2)), list(range(1, 2 * n, 2))
        return self.add(acc, self.add(self.shuffle(prod, prod, even), self.shuffle(prod, prod, odd)))


# -- loops ---------------------------------------------------------------------------------------


def vector_width(v: Value) -> int:
    """The number of lanes of a vector value."""
    t = v.type
    assert isinstance(t, VectorType)
    return t.get_shape()[0]


def for_range(
    e: Emitter,
    lo: IndexOrInt,
    hi: IndexOrInt,
    step: int,
    body: Callable[[Emitter, IndexOrInt, list[Value]], list[Value]],
    carried: Sequence[Value] = (),
) -> list[Value]:
    """``for i in range(lo, hi, step)`` carrying ``carried`` through ``body(e,
    i, carried) -> carried``: an scf.for, or with constant bounds nothing or
    the body inline when it runs at most once.  With constant bounds ``hi -
    lo`` is a multiple of ``step``.

    The rule for every body of :func:`for_range`, :func:`each` and
    :func:`parallel_each`: ``i`` is an :data:`IndexOrInt`, an index value
    inside a loop and the Python int ``lo`` when the body is inlined, so
    address arithmetic on a single iteration folds while the IR is built.
    A body accepts both: it passes ``i`` to what takes an IndexOrInt
    (:class:`Vec`'s ``ix``, ``load``, ``store``), or makes it a value first
    with ``e.index(i)`` before handing it to an operation's constructor."""
    if isinstance(lo, int) and isinstance(hi, int):
        if hi <= lo:
            return list(carried)
        if hi - lo == step:
            return list(body(e, lo, list(carried)))
    return e.for_(lo, hi, lambda e2, i, args: body(e2, i, list(args)), list(carried), step)


def each(e: Emitter, lo: IndexOrInt, hi: IndexOrInt, step: int, body: Callable[[Emitter, IndexOrInt], None]) -> None:
    """:func:`for_range` without carried values (its rule for ``body``'s index)."""

    def step_body(e2: Emitter, i: IndexOrInt, carried: list[Value]) -> list[Value]:
        body(e2, i)
        return carried

    for_range(e, lo, hi, step, step_body)


def parallel_each(
    e: Emitter, lo: IndexOrInt, hi: IndexOrInt, step: int, body: Callable[[Emitter, IndexOrInt], None],
    sizes: bool = False,
) -> None:  # fmt: skip
    """:func:`each` over iterations that may run on several threads: the
    ``scf.for`` carries ``nnc.parallel``, and ``nnc-outline-parallel`` hands it
    to the thread pool when it is worth a dispatch.

    The caller promises what the pool needs for results that do not depend
    on the thread count: iterations write disjoint memory and read nothing
    another iteration writes, each output element is computed by exactly one
    iteration, and the body writes no shared state (no status flag).  Any
    split of ``[lo, hi)`` into contiguous chunks, run in any order, then gives
    bit-identical results.  ``body``'s index follows :func:`for_range`'s
    rule (a Python int when it runs once).  ``sizes``: the body's integer
    constants are only sizes and offsets of kernel calls, so that loops
    that differ in them may share one function
    (:data:`~nnc.passes.outline_parallel.SIZES_ATTR`)."""
    if isinstance(lo, int) and isinstance(hi, int) and hi - lo <= step:
        each(e, lo, hi, step, body)  # nothing or one iteration: no loop
        return
    block = Block(arg_types=[IndexType()])
    inner = e.nested(Builder(InsertPoint.at_end(block)))
    body(inner, block.args[0])
    inner.op(scf.YieldOp())
    op = scf.ForOp(e.index(lo), e.index(hi), e.index(step), [], Region(block))
    op.attributes[PARALLEL_ATTR] = UnitAttr()
    if sizes:
        op.attributes[SIZES_ATTR] = UnitAttr()
    e.b.insert(op)


#: Pieces an element-wise kernel's range is cut into for the thread pool: at
#: most this many of one size (the last shorter).  The pool gives each of
#: ``T`` threads a contiguous run of ``count // T`` or one more, so any
#: thread count up to this many gets shares within a piece of each other.
PIECES = 16
#: ... and pieces of at least this many elements: about a microsecond of
#: work, against a few tens of nanoseconds per call of the kernel (its
#: parameters read, its constants made), which a loop the thread pool does
#: not take still pays per piece
MIN_PIECE = 4096


def parallel_pieces(e: Emitter, n: int, align: int, body: Callable[[Emitter, IndexOrInt, IndexOrInt], None],
                    min_piece: int = MIN_PIECE) -> None:  # fmt: skip
    """``body(e, start, length)`` over the pieces of ``[0, n)`` in one
    :func:`parallel_each` loop: at most :data:`PIECES` of one size, at
    least ``min_piece`` and a multiple of ``align`` (a vector's elements),
    and ``length = min(size, n - start)``, so the last piece takes the rest
    (``nnc-outline-parallel``'s work estimate counts every piece as
    ``size``).  A range of one piece is one call, ``start`` and ``length``
    the Python ints 0 and ``n``.  The pieces must be independent (see
    :func:`parallel_each`)."""
    per = max(-(-n // PIECES), min_piece, 1)
    size = -(-per // align) * align
    count = -(-n // size)
    if count <= 1:
        if n:
            body(e, 0, n)
        return

    def piece(e2: Emitter, t: IndexOrInt) -> None:
        start = Vec(e2).ix(0, (t, size))
        length = e2.min(e2.index(size), e2.sub(e2.index(n), e2.index(start)))
        body(e2, start, length)

    parallel_each(e, 0, count, 1, piece, sizes=True)
