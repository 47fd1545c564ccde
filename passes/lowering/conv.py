"""Convolutions and FULLY_CONNECTED (float32, and quantised 8-bit).

Float32 CONV_2D and DEPTHWISE_CONV_2D in NHWC (depth multiplier 1) and
float32 FULLY_CONNECTED are register-blocked vector kernels shared by every
layer (see "float32 NHWC kernels" below): a GEMM over output pixels x output
channels whose reduction reads the (padded) input windows directly, a
depthwise kernel that splits the output into interior and border runs instead
of padding, and dot products for a FULLY_CONNECTED of batch < 4.  They start
from the bias, apply the fused activation in registers and write each output
once.

Every other case (NCHW, depth multiplier > 1, quantised types) is lowered to
three to five ``linalg.generic`` ops:

1. (only when some window reaches outside the input) the input is copied into
   the interior of a zero-filled temporary, so that the hot loop needs no
   bounds checks: a window tap becomes a plain affine index into the padded
   buffer (:func:`padded_input`, :meth:`ConvGeometry.window_index_of`);
2. the output is initialised with the bias, broadcast along the channels;
3. (CONV_2D in NHWC with enough output pixels, FULLY_CONNECTED with enough
   batches) the weights are transposed into a temporary, see
   :data:`TRANSPOSE_MIN_ROWS`;
4. one reduction generic accumulates into the output, with the output-pixel
   loops outermost and the reduction loops inside them;
5. (only with a fused activation) an in-place clamp of the output.

The geometry (layout, explicit padding computed like Android's
``calculateExplicitPadding``, strides, dilations, multiplier) lives in
:class:`ConvGeometry`; together with :func:`padded_input` and
:func:`named_generic` it is shared by the float and the quantised variants,
which differ only in the accumulator, the body and the epilogue.

Quantised inputs (TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED, with a
filter of the input's type or, for the convolutions, a
TENSOR_QUANT8_SYMM_PER_CHANNEL filter) follow Android's reference CPU path
(``Conv2D.cpp``, ``DepthwiseConv2D.cpp``, ``FullyConnected.cpp`` and the TFLite
kernels they call), see :class:`QuantConv`:

* the padding holds the input zero point, so a tap outside the input adds
  nothing (like the reference's skipped taps and im2col's zero-point fill);
* step 2 initialises an int32 temporary with the int32 bias, and step 4
  accumulates ``(x - input_zp) * (w - filter_zp)`` into it (8-bit values
  zero-extended for TENSOR_QUANT8_ASYMM, sign-extended otherwise);
* step 5 is an epilogue writing
  ``clamp(MultiplyByQuantizedMultiplier(acc, m, shift) + output_zp)`` to the
  output, ``(m, shift) = QuantizeMultiplier(input_scale * filter_scale /
  output_scale)`` (per output channel for a per-channel filter, read from small
  tables), the clamp the fused activation's quantised range.

Android runs the signed per-tensor variants on uint8 copies with every zero
point shifted by 128, which computes exactly the same numbers.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    MemRefType,
    StringAttr,
    UnrealizedConversionCastOp,
    VectorType,
    f32,
    i32,
    i64,
)
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint
from xdsl.ir.affine import AffineExpr, AffineMap

from nnc.dialects.rules import OpCall
from nnc.dialects.rules.conv import Window, _conv_window, join_layout
from nnc.enums import FuseCode
from nnc.enums import OperandType as T
from nnc.enums import OperationType as Op
from nnc.passes.lowering import (
    QUANT8,
    Emitter,
    LoweringContext,
    Value,
    activation,
    affine_map,
    identity_map,
    lowering,
)
from nnc.passes.lowering import quant as q

# -- geometry ------------------------------------------------------------------------------


def explicit_padding(
    in_size: int, out_size: int, stride: int, dilation: int, filter_size: int
) -> tuple[int, int]:
    """Android's ``calculateExplicitPadding`` for an implicit scheme, given the
    output size the scheme produced: (head, tail).  VALID yields (0, 0)."""
    effective = (filter_size - 1) * dilation + 1
    total = max((out_size - 1) * stride + effective - in_size, 0)
    head = total // 2
    return head, total - head


@dataclass(frozen=True)
class ConvGeometry:
    """Sizes and window parameters of one CONV_2D / DEPTHWISE_CONV_2D call."""

    nchw: bool
    batches: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_top: int
    pad_left: int
    multiplier: int = 1
    activation: int = FuseCode.NONE

    @staticmethod
    def of(ctx: LoweringContext, depthwise: bool) -> ConvGeometry:
        win: Window = _conv_window(ctx.call, depthwise)
        x, w, out = ctx.input(0), ctx.input(1), ctx.output()
        n, h, wd, c = _split(ctx.shape(x), win.nchw)
        _, oh, ow, oc = _split(ctx.shape(out), win.nchw)
        fshape = ctx.shape(w)
        fh, fw = fshape[1], fshape[2]
        if win.explicit is not None:
            left, _right, top, _bottom = win.explicit
        else:
            top, _ = explicit_padding(h, oh, win.stride_h, win.dilation_h, fh)
            left, _ = explicit_padding(wd, ow, win.stride_w, win.dilation_w, fw)
        return ConvGeometry(
            win.nchw, n, h, wd, c, oh, ow, oc, fh, fw,
            win.stride_h, win.stride_w, win.dilation_h, win.dilation_w,
            top, left, win.multiplier, win.activation,
        )  # fmt: skip

    # The rows/columns of the padded input that some window reads.
    @property
    def needed_h(self) -> int:
        return (self.out_h - 1) * self.stride_h + (self.filter_h - 1) * self.dilation_h + 1

    @property
    def needed_w(self) -> int:
        return (self.out_w - 1) * self.stride_w + (self.filter_w - 1) * self.dilation_w + 1

    @property
    def needs_padding(self) -> bool:
        return (
            self.pad_top > 0
            or self.pad_left > 0
            or self.needed_h > self.in_h
            or self.needed_w > self.in_w
        )

    @property
    def padded_hw(self) -> tuple[int, int]:
        """Height and width of the padded input (the input itself if no padding)."""
        if not self.needs_padding:
            return self.in_h, self.in_w
        return (
            max(self.pad_top + self.in_h, self.needed_h),
            max(self.pad_left + self.in_w, self.needed_w),
        )

    def layout(self, n, h, w, c) -> tuple:
        return join_layout(n, h, w, c, self.nchw)

    def window_index(self, oh: AffineExpr, ow: AffineExpr, kh: AffineExpr, kw: AffineExpr):
        """(row, column) in the padded input read by output (oh, ow), tap (kh, kw)."""
        return (
            oh * self.stride_h + kh * self.dilation_h,
            ow * self.stride_w + kw * self.dilation_w,
        )

    def window_index_of(self, n, oh, ow, kh, kw, c) -> tuple:
        """Indices into the padded input (in its layout) of one window tap."""
        h, w = self.window_index(oh, ow, kh, kw)
        return self.layout(n, h, w, c)


def _split(shape: Sequence[int], nchw: bool) -> tuple[int, int, int, int]:
    if nchw:
        return shape[0], shape[2], shape[3], shape[1]
    return shape[0], shape[1], shape[2], shape[3]


def padded_input(ctx: LoweringContext, x: Value, g: ConvGeometry, pad_value: float | int = 0.0) -> Value:
    """``x`` itself, or a copy surrounded by ``pad_value`` (0.0 for float, the
    zero point for quantised inputs) large enough for every window."""
    if not g.needs_padding:
        return x
    hp, wp = g.padded_hw
    elem = x.type.element_type  # type: ignore[attr-defined]
    buf = ctx.alloc(g.layout(g.batches, hp, wp, g.in_c), elem)
    ctx.fill(buf, pad_value)
    # The input goes into the interior, a static subview at (top, left).
    offsets = g.layout(0, g.pad_top, g.pad_left, 0)
    interior = memref.SubviewOp.from_static_parameters(
        buf, buf.type, offsets, ctx.shape(x), [1] * 4  # type: ignore[arg-type]
    )
    ctx.builder.insert(interior)
    ctx.copy(x, interior.result)
    return buf


def init_with_bias(ctx: LoweringContext, out: Value, bias: Value, channel_dim: int) -> None:
    """``out[..., c, ...] = bias[c]`` with ``c`` at ``channel_dim``."""
    shape = ctx.shape(out)
    bmap = affine_map(len(shape), lambda *d: (d[channel_dim],))
    ctx.generic(shape, [(bias, bmap)], [(out, identity_map(len(shape)))], lambda e, a, idx: [a[0]])


def apply_activation(ctx: LoweringContext, out: Value, code: int) -> None:
    """Clamp ``out`` in place for a fused activation (nothing for NONE)."""
    if code == FuseCode.NONE:
        return
    shape = ctx.shape(out)
    ctx.generic(
        shape, [], [(out, identity_map(len(shape)))], lambda e, a, idx: [activation(e, a[0], code)]
    )


def permuted(ctx: LoweringContext, src: Value, perm: Sequence[int]) -> Value:
    """A temporary copy of ``src`` with its dimensions reordered like numpy's
    ``src.transpose(perm)``: dimension ``k`` of the copy is ``perm[k]`` of ``src``."""
    shape = ctx.shape(src)
    dst = ctx.alloc([shape[p] for p in perm], src.type.element_type)  # type: ignore[attr-defined]
    dmap = affine_map(len(shape), lambda *d: tuple(d[p] for p in perm))
    ctx.generic(shape, [(src, identity_map(len(shape)))], [(dst, dmap)], lambda e, a, idx: [a[0]])
    return dst


#: With at least this many output rows (pixels, or FULLY_CONNECTED batches),
#: the weights are first transposed so that the innermost loop runs along the
#: output channels / units, contiguous in both the transposed weights and the
#: output, which LLVM vectorises (with strict float semantics a dot-product
#: inner loop over the input depth cannot be).  Below it the transposition
#: would cost as much as the product itself.
TRANSPOSE_MIN_ROWS = 4


def _mac(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
    """acc + x * w for generics with ins (x, w) and outs (acc)."""
    return [e.add(a[2], e.mul(a[0], a[1]))]


Loops = dict[str, AffineExpr]


def named_generic(
    ctx: LoweringContext,
    loops: Sequence[tuple[str, int]],
    reductions: Sequence[str],
    ins: Sequence[tuple[Value, Callable[[Loops], Sequence[AffineExpr | int]]]],
    outs: Sequence[tuple[Value, Callable[[Loops], Sequence[AffineExpr | int]]]],
    body,
) -> None:
    """:meth:`LoweringContext.generic` with named loops, outermost first; each
    operand's map is a function of ``{name: dim}``."""
    names = [n for n, _ in loops]
    rank = len(names)

    def amap(fn) -> AffineMap:
        return affine_map(rank, lambda *d: fn(dict(zip(names, d))))

    ctx.generic(
        [size for _, size in loops],
        [(b, amap(fn)) for b, fn in ins],
        [(b, amap(fn)) for b, fn in outs],
        body,
        reduction_dims=[names.index(r) for r in reductions],
    )


# -- float32 NHWC kernels ---------------------------------------------------------------------
#
# The float32 NHWC convolutions and FULLY_CONNECTED are written directly as
# register-blocked vector loops (scf.for + the vector dialect) rather than as
# linalg.generic reductions: with the generic, every multiply-accumulate loads
# and stores the output element, and LLVM's vectoriser cannot keep
# accumulators in registers across the reduction loops.  A kernel computes a
# block of outputs (pixels x vectors of output channels) in vector
# accumulators that stay in registers through the whole reduction, starts
# them from the bias, applies the fused activation and writes the output
# once.
#
# The kernels are shared: a kernel's code depends only on its block shape,
# activation and channel tails (its name says which), every size, stride and
# offset is a run-time argument.  Each use is emitted by :func:`kernel` as a
# marked ``scf.execute_region``; ``nnc-outline-kernels`` turns each distinct
# kernel into one private function and every use into a call.  A model then
# compiles a few dozen small functions plus per-layer loops that call them,
# instead of per-layer copies of unrolled code, which keeps the xDSL passes
# and LLVM fast; the per-call overhead is a few nanoseconds against hundreds
# of vector FMAs.
#
# Summation order: every output is bias + the products in the reference's
# order (taps, then input channels), each step a multiply-add that LLVM fuses
# where the target has FMA (one rounding instead of two), except the dot-product kernel (FULLY_CONNECTED and
# 1x1 convolutions of very few pixels), which sums 16 lanes in parallel and
# adds the lanes up at the end.

#: lanes of the widest vector (AVX-512: 16 floats); narrower tails use 8, 4, 2, 1
VW = 16
#: vector accumulators a block keeps in registers (x86-64 with AVX-512 has 32)
ACCUMULATORS = 24
#: GEMM kernels: at most this many vectors of output channels, and this many
#: output pixels, per block
MAX_COL_VECTORS = 4
MAX_ROWS = 12
#: depthwise: output pixels (along a row) per block
DW_PIXELS = 8
#: 1x1 convolutions / FULLY_CONNECTED with fewer rows than this use dot
#: products over the original weight layout instead of transposing the weights
DOT_MAX_ROWS = 4
#: dot-product kernel: output channels per block
DOT_UNITS = 4

#: attribute naming the kernel of a marked scf.execute_region
KERNEL_ATTR = "nnc.kernel"
#: a float32 buffer inside a kernel: any length (kernels serve every layer)
ANY_F32 = MemRefType(f32, [DYNAMIC_INDEX])

IndexOrInt = Value | int


#: kernels whose body was emitted, per function body under construction (the
#: block a LoweringContext's builder appends to)
_EMITTED: weakref.WeakKeyDictionary[Block, set[str]] = weakref.WeakKeyDictionary()


#: index constants at the top level of a function body under construction,
#: shared by every later kernel use (they dominate everything emitted after them)
_CONSTANTS: weakref.WeakKeyDictionary[Block, dict[int, Value]] = weakref.WeakKeyDictionary()


def _index_const(ctx: LoweringContext, n: int) -> Value:
    """``arith.constant n : index`` at the top level of the function ``ctx``
    lowers into, made once: kernel arguments are mostly a few small sizes and
    strides repeated at every use."""
    consts = _CONSTANTS.setdefault(ctx.builder.insertion_point.block, {})
    if n not in consts:
        consts[n] = ctx.e.index(n)
    return consts[n]


def kernel(
    ctx: LoweringContext, e: Emitter, name: str, args: Sequence[IndexOrInt], body: Callable[[Emitter, list[Value]], None]
) -> None:
    """Apply the shared kernel ``name`` to ``args`` (float32 buffers and
    ``index`` values; ints become index constants) at ``e``, somewhere in the
    function ``ctx`` lowers into.

    Emitted as ``scf.execute_region {nnc.kernel = name}`` whose first op is
    an ``unrealized_conversion_cast`` of the arguments to the kernel's
    parameter types (buffers to ``memref<?xf32>``); the first use of a name
    in a function also holds the kernel's code, ``body(e, params)``, later
    uses only the cast (building the same code again would cost most of the
    compile time).  nnc-outline-kernels makes the cast's results the
    parameters of one function per name.  ``body`` must depend on nothing
    but ``params`` and what ``name`` encodes."""
    vals = [_index_const(ctx, a) if isinstance(a, int) else a for a in args]
    types = [ANY_F32 if isinstance(v.type, MemRefType) else v.type for v in vals]
    block = Block()
    inner = Emitter(Builder(InsertPoint.at_end(block)))
    cast = UnrealizedConversionCastOp.get(vals, types)
    inner.b.insert(cast)
    emitted = _EMITTED.setdefault(ctx.builder.insertion_point.block, set())
    if name not in emitted:
        body(inner, list(cast.results))
        emitted.add(name)
    inner.b.insert(scf.YieldOp())
    op = scf.ExecuteRegionOp([], Region(block))
    op.attributes[KERNEL_ATTR] = StringAttr(name)
    e.b.insert(op)


def _widths(n: int, widest: int = VW) -> list[int]:
    """``n`` lanes as vector widths, widest first: 40 -> [16, 16, 8]."""
    out: list[int] = []
    w = widest
    while n > 0:
        while w > n:
            w //= 2
        out.append(w)
        n -= w
    return out


def _offsets(widths: Sequence[int]) -> list[int]:
    offs, o = [], 0
    for w in widths:
        offs.append(o)
        o += w
    return offs


def _tag(widths: Sequence[int]) -> str:
    return "_".join(map(str, widths)) or "0"


class _Vec:
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
        return self.e.op(vector.LoadOp(buf, [self.e.index(off)], VectorType(f32, [width])))

    def store(self, v: Value, buf: Value, off: IndexOrInt) -> None:
        self.e.op(vector.StoreOp(v, buf, [self.e.index(off)]))

    def splat(self, s: Value, width: int) -> Value:
        return self.e.op(vector.BroadcastOp(s, VectorType(f32, [width])))

    def fma(self, a: Value, b: Value, acc: Value) -> Value:
        """``acc + a * b`` that LLVM may contract into one fused multiply-add:
        a vfmadd on targets with FMA, a multiply and an add on the others
        (where ``vector.fma``, i.e. ``llvm.fma``, would become a libm ``fmaf``
        call per lane)."""
        prod = self.e.op(arith.MulfOp(a, b, _CONTRACT))
        return self.e.op(arith.AddfOp(acc, prod, _CONTRACT))

    def const(self, value: float, width: int) -> Value:
        t = VectorType(f32, [width])
        return self.e.op(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [float(value)] * width), t))

    def activation(self, v: Value, code: int) -> Value:
        """The fused activation on a vector (the scalar :func:`activation`'s ops)."""
        lo, hi = _ACT_RANGE[FuseCode(code)]
        w = v.type.get_shape()[0]  # type: ignore[attr-defined]
        if lo is not None:
            v = self.e.op(arith.MaxnumfOp(v, self.const(lo, w)))
        if hi is not None:
            v = self.e.op(arith.MinnumfOp(v, self.const(hi, w)))
        return v

    def shuffle(self, a: Value, b: Value, mask: Sequence[int]) -> Value:
        t = VectorType(f32, [len(mask)])
        return self.e.op(vector.ShuffleOp(a, b, DenseArrayBase.from_list(i64, list(mask)), result_type=t))

    def hsum(self, v: Value) -> Value:
        """The lanes of ``v`` added up pairwise (halving), as a scalar."""
        w = v.type.get_shape()[0]  # type: ignore[attr-defined]
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


def _act_tag(act: int) -> str:
    return FuseCode(act).name.lower()


def _for(
    e: Emitter,
    lo: IndexOrInt,
    hi: IndexOrInt,
    step: int,
    body: Callable[[Emitter, IndexOrInt, list[Value]], list[Value]],
    carried: Sequence[Value] = (),
) -> list[Value]:
    """``for i in range(lo, hi, step)`` carrying ``carried`` through ``body(e,
    i, carried) -> carried``: an scf.for, or with constant bounds nothing or
    the body inline (``i`` a Python int) when it runs at most once.  With
    constant bounds ``hi - lo`` is a multiple of ``step``."""
    if isinstance(lo, int) and isinstance(hi, int):
        if hi <= lo:
            return list(carried)
        if hi - lo == step:
            return list(body(e, lo, list(carried)))
    return e.for_(lo, hi, lambda e2, i, args: body(e2, i, list(args)), list(carried), step)


def _each(e: Emitter, lo: IndexOrInt, hi: IndexOrInt, step: int, body: Callable[[Emitter, IndexOrInt], None]) -> None:
    """:func:`_for` without carried values."""
    _for(e, lo, hi, step, lambda e2, i, _: (body(e2, i), [])[1])


# -- GEMM: out[m, n] = act(bias[n] + sum_k a[...] * b[k, n]) ---------------------------------


@dataclass(frozen=True)
class _Level:
    """One loop of a GEMM reduction: ``size`` steps, each advancing the input
    offset by ``a_step`` and the packed-weight offset by ``b_step`` elements."""

    size: int
    a_step: int
    b_step: int


def _gemm_kernel(rows: int, widths: tuple[int, ...], levels: int, act: int):
    """The GEMM block kernel: ``rows`` output pixels (input windows at
    ``a_base + r * a_rstride``, outputs at ``out_base + r * cols``) times the
    output channels ``n0 + [0, sum(widths))``, whose weights are the packed
    panel ``b`` (``[K, sum(widths)]``), reducing over ``levels`` nested loops
    (size, a_step, b_step parameters).  Per innermost step: one weight vector
    per width, one broadcast input per row, rows x vectors FMAs."""
    name = f"nnc_gemm_{rows}x{_tag(widths)}_l{levels}_{_act_tag(act)}"

    def body(e: Emitter, p: list[Value]) -> None:
        a, b, bias, out, a_base, a_rstride, out_base, n0, cols = p[:9]
        lv = [p[9 + 3 * i : 12 + 3 * i] for i in range(levels)]
        v = _Vec(e)
        offs = _offsets(widths)
        nw = len(widths)
        bases = [v.ix(a_base, (a_rstride, r)) for r in range(rows)]
        init = [v.load(bias, v.ix(n0, o), w) for o, w in zip(offs, widths)]
        accs = [init[j] for _ in range(rows) for j in range(nw)]

        def step(e: Emitter, aoff: IndexOrInt, boff: IndexOrInt, accs: list[Value]) -> list[Value]:
            v = _Vec(e)
            bv = [v.load(b, v.ix(boff, o), w) for o, w in zip(offs, widths)]
            new = []
            for r in range(rows):
                s = e.load(a, [e.index(v.ix(bases[r], aoff))])
                splats = {w: v.splat(s, w) for w in sorted(set(widths))}
                new += [v.fma(splats[w], bv[j], accs[r * nw + j]) for j, w in enumerate(widths)]
            return new

        def level(d: int, aoff: IndexOrInt, boff: IndexOrInt) -> Callable:
            size, a_step, b_step = lv[d]

            def inner(e: Emitter, i: IndexOrInt, accs: list[Value]) -> list[Value]:
                v = _Vec(e)
                ao, bo = v.ix(aoff, (i, a_step)), v.ix(boff, (i, b_step))
                if d + 1 == levels:
                    return step(e, ao, bo, accs)
                return _for(e, 0, lv[d + 1][0], 1, level(d + 1, ao, bo), accs)

            return inner

        accs = _for(e, 0, lv[0][0], 1, level(0, 0, 0), accs)
        for r in range(rows):
            for j, (o, w) in enumerate(zip(offs, widths)):
                v.store(v.activation(accs[r * nw + j], act), out, v.ix(out_base, (cols, r), n0, o))

    return name, body


def _row_blocks(n: int, most: int) -> list[tuple[int, int, int]]:
    """``n`` rows (or vectors of channels) in as few blocks of at most
    ``most`` as possible, of two sizes that differ by one: [(start, end, size
    of its blocks)].  49 rows, at most 6: 4 blocks of 6 and 5 of 5 (not 8 of
    6 and a block of 1, whose single row would use a sixth of the
    registers)."""
    count = -(-n // most)
    base, extra = divmod(n, count)
    blocks = [(0, extra * (base + 1), base + 1), (extra * (base + 1), n, base)]
    return [b for b in blocks if b[1] > b[0]]


def _gemm(
    ctx: LoweringContext,
    a: Value,
    w: Value,
    bias: Value,
    out: Value,
    runs: Callable[[Emitter, Callable[[Emitter, IndexOrInt, IndexOrInt], None]], None],
    run_len: int,
    a_rstride: int,
    cols: int,
    levels: Sequence[_Level],
    act: int,
) -> None:
    """``out = act(bias + a * w^T)`` on flat buffers, ``w`` the weights as
    given (``[cols, K]``, one row of K per output channel; K runs over
    ``levels``), ``out`` as ``[pixels, cols]``.

    The output pixels come in runs of ``run_len`` whose input windows are
    ``a_rstride`` apart (an output row, or all pixels of a 1x1 convolution):
    ``runs(e, f)`` calls ``f(e, a_offset, out_offset)`` for each run.  Blocks
    of output channels (up to MAX_COL_VECTORS vectors) are the outer loop:
    for each, the block's weight rows are first transposed into a panel
    ``[K, block]`` (:func:`_transpose_kernel`) that stays in cache while
    every run streams through the GEMM kernel.  Each weight is read from
    memory once per execution, as with weights packed ahead of time."""
    e = ctx.e
    depth = 1
    for lv in levels:
        depth *= lv.size
    # Whole vectors of channels in balanced blocks (6 vectors: 3 + 3, not
    # 4 + 2), then the narrower tail.
    col_blocks = [(v0 * VW, v1 * VW, (VW,) * nv) for v0, v1, nv in _row_blocks(cols // VW, MAX_COL_VECTORS)] if cols >= VW else []
    if cols % VW:
        col_blocks.append((cols // VW * VW, cols, tuple(_widths(cols % VW))))
    panel = ctx.flat(ctx.alloc([depth * max(sum(wd) for _, _, wd in col_blocks)], f32))
    for c0, c1, widths in col_blocks:
        width = sum(widths)
        row_blocks = _row_blocks(run_len, max(1, min(MAX_ROWS, ACCUMULATORS // len(widths))))
        # b_step of a level: K-rows of the panel, each `width` long
        lv_args = [x for lv in levels for x in (lv.size, lv.a_step, lv.b_step * width)]

        def call(e: Emitter, rows: int, n0: IndexOrInt, a_off: IndexOrInt, o_off: IndexOrInt, widths=widths, lv_args=lv_args) -> None:
            name, body = _gemm_kernel(rows, widths, len(levels), act)
            kernel(ctx, e, name, [a, panel, bias, out, a_off, a_rstride, o_off, n0, cols, *lv_args], body)

        def per_run(e: Emitter, n0: IndexOrInt, a_off: IndexOrInt, o_off: IndexOrInt, row_blocks=row_blocks, call=call) -> None:
            for r0, r1, mr in row_blocks:
                _each(e, r0, r1, mr, lambda e2, m0, mr=mr: call(
                    e2, mr, n0, _Vec(e2).ix(a_off, (m0, a_rstride)), _Vec(e2).ix(o_off, (m0, cols))))

        def block(e: Emitter, n0: IndexOrInt, width=width, per_run=per_run) -> None:
            _transpose(ctx, e, w, _Vec(e).ix(0, (n0, depth)), panel, width, depth)
            runs(e, lambda e2, a_off, o_off: per_run(e2, n0, a_off, o_off))

        _each(e, c0, c1, width, block)


# -- dot products: out[m, n] = act(bias[n] + sum_i a[m, i] * w[n, i]) --------------------------


def _dot_kernel(rows: int, units: int, tails: tuple[int, ...], act: int):
    """Dot products of ``rows`` input rows (at ``a_base + r * a_rstride``)
    with ``units`` weight rows (``n0 + j``, ``depth`` apart) over ``kfull``
    elements in vectors of VW plus the ``tails`` widths, lanes added up at
    the end; outputs at ``out_base + r * cols + n0 + j``."""
    name = f"nnc_dot_{rows}x{units}_t{_tag(tails)}_{_act_tag(act)}"

    def body(e: Emitter, p: list[Value]) -> None:
        a, w, bias, out, a_base, a_rstride, n0, depth, kfull, out_base, cols = p
        v = _Vec(e)
        bases = [v.ix(a_base, (a_rstride, r)) for r in range(rows)]
        wrows = [v.ix(0, (v.ix(n0, j), depth)) for j in range(units)]
        pairs = [(r, j) for r in range(rows) for j in range(units)]

        def step(e: Emitter, i0: IndexOrInt, accs: list[Value]) -> list[Value]:
            v = _Vec(e)
            xs = [v.load(a, v.ix(bases[r], i0), VW) for r in range(rows)]
            ws = [v.load(w, v.ix(wrows[j], i0), VW) for j in range(units)]
            return [v.fma(xs[r], ws[j], acc) for (r, j), acc in zip(pairs, accs)]

        accs = e.for_(0, kfull, lambda e2, i, args: step(e2, i, list(args)), [v.const(0.0, VW) for _ in pairs], VW)
        sums = [v.hsum(acc) for acc in accs]
        for o, tw in zip(_offsets(tails), tails):
            i = v.ix(kfull, o)
            xs = [v.load(a, v.ix(bases[r], i), tw) for r in range(rows)]
            ws = [v.load(w, v.ix(wrows[j], i), tw) for j in range(units)]
            for k, (r, j) in enumerate(pairs):
                sums[k] = e.add(sums[k], v.hsum(e.op(arith.MulfOp(xs[r], ws[j]))))
        for (r, j), s in zip(pairs, sums):
            n = v.ix(n0, j)
            y = e.add(e.load(bias, [e.index(n)]), s)
            e.store(activation(e, y, act), out, [e.index(v.ix(out_base, (cols, r), n))])

    return name, body


def _dot(
    ctx: LoweringContext, a: Value, w: Value, bias: Value, out: Value,
    rows: int, a_rstride: int, cols: int, depth: int, act: int,
) -> None:
    """``out[m, n] = act(bias[n] + sum_i a[m * a_rstride + i] * w[n, i])``
    with ``w`` in its original ``[cols, depth]`` layout: for few rows (a
    FULLY_CONNECTED of batch 1), where transposing the weights would cost as
    much as the product.  Blocks of DOT_UNITS output channels share the
    input vector loads."""  # fmt: skip
    e = ctx.e
    kfull = depth // VW * VW
    tails = tuple(_widths(depth - kfull))

    def call(e: Emitter, n0: IndexOrInt, units: int) -> None:
        name, body = _dot_kernel(rows, units, tails, act)
        kernel(ctx, e, name, [a, w, bias, out, 0, a_rstride, n0, depth, kfull, 0, cols], body)

    full = cols // DOT_UNITS * DOT_UNITS
    _each(e, 0, full, DOT_UNITS, lambda e2, n0: call(e2, n0, DOT_UNITS))
    if cols > full:
        call(e, full, cols - full)


# -- transposition (weight panels for the GEMM) ---------------------------------------------


def _transpose_kernel(bs: int):
    """``dst[c * rows + r] = src[s0 + r * cols + c]`` for r < rows, c < cols:
    the ``bs`` x ``bs`` blocks below (rfull, cfull) with ``bs`` vector loads,
    log2(bs) rounds of two-vector shuffles that swap the off-diagonal
    half-blocks and ``bs`` vector stores; the leftover columns and rows
    element by element (``bs`` 0: everything element by element)."""

    def body(e: Emitter, p: list[Value]) -> None:
        src, dst, s0, rows, cols, rfull, cfull = p

        def block(e: Emitter, r0: IndexOrInt, c0: IndexOrInt) -> None:
            v = _Vec(e)
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
                v.store(vs[i], dst, v.ix(r0, (v.ix(c0, i), rows)))

        def elem(e: Emitter, r: IndexOrInt, c: IndexOrInt) -> None:
            v = _Vec(e)
            e.store(e.load(src, [e.index(v.ix(s0, c, (r, cols)))]), dst, [e.index(v.ix(r, (c, rows)))])

        if bs:
            _each(e, 0, rfull, bs, lambda e2, r0: _each(e2, 0, cfull, bs, lambda e3, c0: block(e3, r0, c0)))
        for r0, r1, c0 in ((0, rfull, cfull), (rfull, rows, 0)):
            _each(e, r0, r1, 1, lambda e2, r, c0=c0: _each(e2, c0, cols, 1, lambda e3, c: elem(e3, r, c)))

    return f"nnc_transpose_{bs}", body


def _transpose(ctx: LoweringContext, e: Emitter, src: Value, s0: IndexOrInt, dst: Value, rows: int, cols: int) -> None:
    """``dst [cols, rows]`` = the ``[rows, cols]`` matrix at ``src[s0:]``,
    transposed (square blocks of 16 or 8 in registers)."""
    bs = VW if min(rows, cols) >= VW else 8 if min(rows, cols) >= 8 else 0
    rfull = rows // bs * bs if bs else 0
    cfull = cols // bs * bs if bs else 0
    name, body = _transpose_kernel(bs)
    kernel(ctx, e, name, [src, dst, s0, rows, cols, rfull, cfull], body)


# -- depthwise ---------------------------------------------------------------------------------


def _segments(out_size: int, in_size: int, stride: int, dilation: int, pad: int, taps: int):
    """Runs of output positions whose window sees the same range of taps
    inside the input: [(first, end, tap_lo, tap_hi)].  The interior is one
    run; the borders (where the window reaches into the padding) are short."""
    runs: list[tuple[int, int, int, int]] = []
    for o in range(out_size):
        origin = o * stride - pad
        valid = [k for k in range(taps) if 0 <= origin + k * dilation < in_size]
        lo, hi = (valid[0], valid[-1] + 1) if valid else (0, 0)
        if runs and runs[-1][1] == o and runs[-1][2:] == (lo, hi):
            runs[-1] = (runs[-1][0], o + 1, lo, hi)
        else:
            runs.append((o, o + 1, lo, hi))
    return runs


def _dw_kernel(npix: int, taps: tuple[int, int] | None, tails: tuple[int, ...], act: int):
    """``npix`` output pixels along a row, all channels: per vector of
    channels, one accumulator per pixel; per tap one weight vector serves
    every pixel.  ``taps`` (fh, fw) unrolls the whole window; None loops over
    the taps [kh0, kh1) x [kw0, kw1) given at run time (border pixels, whose
    window is clipped to the input)."""
    name = f"nnc_dw_{npix}p_{'%dx%d' % taps if taps else 'clip'}_t{_tag(tails)}_{_act_tag(act)}"

    def body(e: Emitter, p: list[Value]) -> None:
        x, w, bias, out, cfull, chans, x_base, x_pix, x_kh, x_kw, w_kh, kh0, kh1, kw0, kw1, out_base = p

        def block(e: Emitter, c0: IndexOrInt, width: int) -> None:
            v = _Vec(e)
            xb = [v.ix(x_base, (x_pix, q), c0) for q in range(npix)]
            acc = [v.load(bias, c0, width)] * npix

            def tap(e: Emitter, kh: IndexOrInt, kw: IndexOrInt, acc: list[Value]) -> list[Value]:
                v = _Vec(e)
                wv = v.load(w, v.ix(c0, (kh, w_kh), (kw, chans)), width)
                toff = v.ix(0, (kh, x_kh), (kw, x_kw))
                return [v.fma(v.load(x, v.ix(xb[q], toff), width), wv, acc[q]) for q in range(npix)]

            if taps is not None:
                for kh in range(taps[0]):
                    for kw in range(taps[1]):
                        acc = tap(e, kh, kw, acc)
            else:
                acc = e.for_(kh0, kh1, lambda e2, kh, a2: e2.for_(
                    kw0, kw1, lambda e3, kw, a3: tap(e3, kh, kw, list(a3)), list(a2)), acc)
            for q in range(npix):
                v.store(v.activation(acc[q], act), out, v.ix(out_base, (chans, q), c0))

        _each(e, 0, cfull, VW, lambda e2, c0: block(e2, c0, VW))
        for o, tw in zip(_offsets(tails), tails):
            block(e, _Vec(e).ix(cfull, o), tw)

    return name, body


def _depthwise_nhwc(ctx: LoweringContext, g: ConvGeometry, x: Value, w: Value, b: Value, out: Value) -> None:
    """DEPTHWISE_CONV_2D, NHWC float32, depth multiplier 1, straight from the
    unpadded input: the output is split into runs of rows and of columns
    whose windows see the same taps (:func:`_segments`), so border pixels
    skip the taps in the padding (which would add zeros) and no padded copy
    is made.  The interior uses the kernel with the window unrolled."""
    e = ctx.e
    xf, wf, of = ctx.flat(x), ctx.flat(w), ctx.flat(out)
    C, H, W = g.out_c, g.in_h, g.in_w
    row_runs = _segments(g.out_h, H, g.stride_h, g.dilation_h, g.pad_top, g.filter_h)
    col_runs = _segments(g.out_w, W, g.stride_w, g.dilation_w, g.pad_left, g.filter_w)
    cfull = C // VW * VW
    tails = tuple(_widths(C - cfull))

    def call(e: Emitter, n: IndexOrInt, oh: IndexOrInt, ow0: IndexOrInt, npix: int, kh: tuple[int, int], kw: tuple[int, int]) -> None:
        v = _Vec(e)
        whole = kh == (0, g.filter_h) and kw == (0, g.filter_w)
        name, body = _dw_kernel(npix, (g.filter_h, g.filter_w) if whole else None, tails, g.activation)
        row = v.ix(0, (n, H), (oh, g.stride_h), -g.pad_top)
        col = v.ix(0, (ow0, g.stride_w), -g.pad_left)
        pix = v.ix(0, (n, g.out_h * g.out_w), (oh, g.out_w), ow0)
        args = [
            xf, wf, b, of, cfull, C,
            v.ix(0, (v.ix(col, (row, W)), C)), g.stride_w * C, g.dilation_h * W * C, g.dilation_w * C,
            g.filter_w * C, *kh, *kw, v.ix(0, (pix, C)),
        ]  # fmt: skip
        kernel(ctx, e, name, args, body)

    def image(e: Emitter, n: IndexOrInt) -> None:
        for r0, r1, kh0, kh1 in row_runs:
            def row(e: Emitter, oh: IndexOrInt, kh=(kh0, kh1)) -> None:
                for q0, q1, kw0, kw1 in col_runs:
                    npix = min(DW_PIXELS, q1 - q0)
                    full = q0 + (q1 - q0) // npix * npix
                    _each(e, q0, full, npix, lambda e2, ow0, npix=npix, kw=(kw0, kw1): call(e2, n, oh, ow0, npix, kh, kw))
                    if q1 > full:
                        call(e, n, oh, full, q1 - full, kh, (kw0, kw1))

            _each(e, r0, r1, 1, row)

    _each(e, 0, g.batches, 1, image)


# -- quantised variants ----------------------------------------------------------------------



class QuantConvError(q.QuantError):
    """A quantised call nnc does not implement (or the reference rejects)."""


def _conv_multiplier(input_scale: float, filter_scale: float, output_scale: float) -> tuple[int, int]:
    """Android's ``GetQuantizedConvolutionMultipler`` then ``QuantizeMultiplier``:
    ``(multiplier, shift)`` for ``MultiplyByQuantizedMultiplier`` (shift > 0 is a
    left shift).  ``input_scale * filter_scale`` is a C float product, the
    division is in double."""
    input_product_scale = q.f32(q.f32(input_scale) * q.f32(filter_scale))
    out = q.f32(output_scale)
    if not input_product_scale >= 0 or not out > 0:
        raise QuantConvError(f"scales {input_scale} * {filter_scale} / {output_scale} are invalid")
    try:
        m, shift = q.quantize_multiplier(input_product_scale / out)
    except (ValueError, OverflowError) as e:  # QuantError is a ValueError
        raise QuantConvError(str(e)) from e
    if shift > 31:
        # x * (1 << shift) in MultiplyByQuantizedMultiplier: undefined in C.
        raise QuantConvError(
            f"multiplier {input_product_scale / out} (scales {input_scale} * {filter_scale} / "
            f"{output_scale}) is too large"
        )
    return m, shift


@dataclass(frozen=True)
class QuantConv:
    """The integer parameters of one quantised CONV_2D / DEPTHWISE_CONV_2D /
    FULLY_CONNECTED call."""

    in_type: T
    in_zp: int
    filter_type: T
    filter_zp: int
    out_type: T
    out_zp: int
    act_min: int
    act_max: int
    #: (multiplier, shift) of every output channel; one entry when per tensor
    multipliers: tuple[tuple[int, int], ...]

    @staticmethod
    def of(call: OpCall, channel_dim: int | None, activation: int) -> QuantConv:
        """``channel_dim``: the filter dimension a per-channel filter may be
        quantised along (None when per-channel filters are not allowed)."""
        x, w, b, out = call.inputs[0], call.inputs[1], call.inputs[2], call.outputs[0]
        if x.type not in QUANT8:
            raise QuantConvError(f"input type {x.type.name} is not quantised")
        if out.type != x.type:
            raise QuantConvError(f"output type {out.type.name} differs from the input's {x.type.name}")
        if b.type != T.TENSOR_INT32:
            raise QuantConvError(f"bias type {b.type.name} is not TENSOR_INT32")
        if w.type == x.type:
            multipliers = (_conv_multiplier(x.scale, w.scale, out.scale),)
        elif w.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL and channel_dim is not None:
            if w.channel_quant is None:
                raise QuantConvError("per-channel filter without channel quantisation parameters")
            scales, dim = w.channel_quant
            if dim != channel_dim:
                raise QuantConvError(
                    f"per-channel filter quantised along dimension {dim}, not {channel_dim}"
                )
            channels = w.dims[dim] if w.dims is not None and len(w.dims) > dim else 0
            if channels > 0 and len(scales) != channels:
                raise QuantConvError(f"{len(scales)} per-channel scales for {channels} channels")
            multipliers = tuple(_conv_multiplier(x.scale, s, out.scale) for s in scales)
        else:
            raise QuantConvError(
                f"filter type {w.type.name} with input type {x.type.name} not implemented"
            )
        try:
            lo, hi = q.calculate_activation_range(out.type, activation, out.scale, out.zero_point)
        except q.QuantError as e:
            raise QuantConvError(str(e)) from e
        filter_zp = 0 if w.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL else int(w.zero_point)
        return QuantConv(
            x.type, int(x.zero_point), w.type, filter_zp,
            out.type, int(out.zero_point), lo, hi, multipliers,
        )  # fmt: skip

    @property
    def per_channel(self) -> bool:
        """Whether the output channels need different multipliers."""
        return len(set(self.multipliers)) > 1

    def mac(self, e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        """acc + (x - input_zp) * (w - filter_zp) for generics with ins (x, w) and
        outs (acc: i32); x and w are the 8-bit stored values."""
        xv = q.load_q(e, a[0], self.in_type)
        if self.in_zp:
            xv = e.sub(xv, e.i32(self.in_zp))
        wv = q.load_q(e, a[1], self.filter_type)
        if self.filter_zp:
            wv = e.sub(wv, e.i32(self.filter_zp))
        return [e.add(a[2], e.mul(xv, wv))]

    def requantize(self, ctx: LoweringContext, acc: Value, out: Value, channel_dim: int) -> None:
        """``out = clamp(MultiplyByQuantizedMultiplier(acc) + output_zp)`` with the
        multiplier of the channel at ``channel_dim`` of ``out``."""
        shape = ctx.shape(out)
        rank = len(shape)
        ident = identity_map(rank)

        def finish(e: Emitter, v: Value) -> Value:
            v = e.add(v, e.i32(self.out_zp)) if self.out_zp else v
            v = e.max(e.min(v, e.i32(self.act_max)), e.i32(self.act_min))
            return q.store_q(e, v, self.out_type, saturate=False)

        if not self.per_channel:
            m, shift = self.multipliers[0]
            ctx.generic(
                shape,
                [(acc, ident)],
                [(out, ident)],
                lambda e, a, idx: [finish(e, q.emit_mbqm(e, a[0], m, shift))],
            )
            return
        # One multiplier, left shift and right shift per output channel, read
        # from small tables indexed by the channel coordinate.
        n = len(self.multipliers)
        mult, left, right = (ctx.alloc([n], i32) for _ in range(3))
        top = ctx.e
        for k, (m, shift) in enumerate(self.multipliers):
            top.store(top.i32(m), mult, [k])
            top.store(top.i32(max(shift, 0)), left, [k])
            top.store(top.i32(max(-shift, 0)), right, [k])
        cmap = affine_map(rank, lambda *d: (d[channel_dim],))
        ctx.generic(
            shape,
            [(acc, ident), (mult, cmap), (left, cmap), (right, cmap)],
            [(out, ident)],
            lambda e, a, idx: [finish(e, _mbqm_dynamic(e, a[0], a[1], a[2], a[3]))],
        )


def _mbqm_dynamic(e: Emitter, x: Value, multiplier: Value, left: Value, right: Value) -> Value:
    """TFLite's ``MultiplyByQuantizedMultiplier`` with the multiplier (in
    [0, 2^31)) and the shifts (in [0, 31]) known only at run time:
    ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << left, m), right)``.

    (:mod:`quant`'s emitters take compile-time shifts.)  A non-negative
    multiplier is never INT32_MIN, so the high multiply cannot saturate; it is
    ``(x * m + 2^30) >> 31``, which rounds like gemmlowp's sign-dependent nudge
    followed by a truncating division."""
    x = e.op(arith.ShLIOp(x, left))
    ab = e.op(arith.MuliOp(e.op(arith.ExtSIOp(x, i64)), e.op(arith.ExtSIOp(multiplier, i64))))
    hi = e.op(arith.ShRSIOp(e.op(arith.AddiOp(ab, e.const(1 << 30, i64))), e.const(31, i64)))
    v = e.op(arith.TruncIOp(hi, i32))
    # RoundingDivideByPOT(v, right): round half away from zero.
    one = e.i32(1)
    mask = e.sub(e.op(arith.ShLIOp(one, right)), one)
    remainder = e.and_(v, mask)
    threshold = e.op(arith.ShRSIOp(mask, one))
    threshold = e.add(threshold, e.op(arith.ExtUIOp(e.cmp("lt", v, e.i32(0)), i32)))
    up = e.op(arith.ExtUIOp(e.cmp("gt", remainder, threshold), i32))
    return e.add(e.op(arith.ShRSIOp(v, right)), up)


def _quant_of(ctx: LoweringContext, channel_dim: int | None, activation: int) -> QuantConv | None:
    if ctx.info(0).type not in QUANT8:
        return None
    return QuantConv.of(ctx.call, channel_dim, activation)


def _check(call: OpCall, channel_dim: int | None, activation: Callable[[OpCall], int]) -> str | None:
    """The ``check`` hook: which filter/bias types (and quantisation
    parameters) of a supported input type are implemented."""
    x, w, b = call.inputs[0], call.inputs[1], call.inputs[2]
    if x.type == T.TENSOR_FLOAT32:
        if w.type != T.TENSOR_FLOAT32 or b.type != T.TENSOR_FLOAT32:
            return (
                f"filter {w.type.name} / bias {b.type.name} with a TENSOR_FLOAT32 input not implemented"
            )
        return None
    try:
        QuantConv.of(call, channel_dim, activation(call))
    except QuantConvError as e:
        return f"quantised {call.type.name}: {e}"
    return None


def _check_conv(call: OpCall) -> str | None:
    return _check(call, 0, lambda c: _conv_window(c, depthwise=False).activation)


def _check_depthwise(call: OpCall) -> str | None:
    return _check(call, 3, lambda c: _conv_window(c, depthwise=True).activation)


def _check_fully_connected(call: OpCall) -> str | None:
    return _check(call, None, lambda c: c.scalar(3))


# -- CONV_2D -------------------------------------------------------------------------------


@lowering(Op.CONV_2D, check=_check_conv)
def conv_2d(ctx: LoweringContext) -> None:
    """out[n, oh, ow, oc] = bias[oc] + sum_{kh, kw, ic} xpad[n, oh*sh + kh*dh, ow*sw + kw*dw, ic]
    * filter[oc, kh, kw, ic] (filter [depth_out, fh, fw, depth_in] in either layout).

    Quantised: accumulated in int32 with the zero points subtracted, then
    requantised per output channel (see :class:`QuantConv`)."""
    g = ConvGeometry.of(ctx, depthwise=False)
    qc = _quant_of(ctx, 0, g.activation)
    x, w, b, out = ctx.input(0), ctx.input(1), ctx.input(2), ctx.output()
    if qc is None and not g.nchw:
        _conv_2d_nhwc(ctx, g, x, w, b, out)
        return
    channel_dim = 1 if g.nchw else 3
    xp = padded_input(ctx, x, g, 0.0 if qc is None else qc.in_zp)
    acc = _accumulator(ctx, qc, out, b, channel_dim)
    wfn: Callable[[Loops], tuple] = lambda d: (d["oc"], d["kh"], d["kw"], d["ic"])  # noqa: E731
    if g.nchw:
        # The innermost loop walks along an output row; the filter tap is invariant.
        order = ("n", "oc", "ic", "kh", "kw", "oh", "ow")
    elif g.batches * g.out_h * g.out_w >= TRANSPOSE_MIN_ROWS:
        # Per pixel and tap: out[pixel, :] += x[tap, ic] * wt[kh, kw, ic, :].
        w = permuted(ctx, w, (1, 2, 3, 0))
        wfn = lambda d: (d["kh"], d["kw"], d["ic"], d["oc"])  # noqa: E731
        order = ("n", "oh", "ow", "kh", "kw", "ic", "oc")
    else:
        # A dot product per output element over (kh, kw, ic).
        order = ("n", "oh", "ow", "oc", "kh", "kw", "ic")
    sizes = dict(n=g.batches, oh=g.out_h, ow=g.out_w, oc=g.out_c, kh=g.filter_h, kw=g.filter_w, ic=g.in_c)
    named_generic(
        ctx,
        [(k, sizes[k]) for k in order],
        ("kh", "kw", "ic"),
        [
            (xp, lambda d: g.window_index_of(d["n"], d["oh"], d["ow"], d["kh"], d["kw"], d["ic"])),
            (w, wfn),
        ],
        [(acc, lambda d: g.layout(d["n"], d["oh"], d["ow"], d["oc"]))],
        _mac if qc is None else qc.mac,
    )
    _epilogue(ctx, qc, acc, out, g.activation, channel_dim)


def _conv_2d_nhwc(ctx: LoweringContext, g: ConvGeometry, x: Value, w: Value, b: Value, out: Value) -> None:
    """Float32 NHWC CONV_2D as a GEMM over output pixels x output channels,
    the reduction over (filter row, filter column, input channel) read
    straight from the (padded) input: :func:`_gemm`, or :func:`_dot` for a
    1x1 filter applied to very few pixels."""
    xp = padded_input(ctx, x, g)
    hp, wp = g.padded_hw
    c, cols = g.in_c, g.out_c
    pixels = g.batches * g.out_h * g.out_w
    xf, of = ctx.flat(xp), ctx.flat(out)
    e = ctx.e
    plain = g.filter_h == g.filter_w == 1 and g.stride_h == g.stride_w == 1 and not g.needs_padding
    if plain and pixels < DOT_MAX_ROWS:
        _dot(ctx, xf, ctx.flat(w), b, of, pixels, c, cols, c, g.activation)
        return
    wf = ctx.flat(w)
    levels = [
        _Level(g.filter_h, g.dilation_h * wp * c, g.filter_w * c),
        _Level(g.filter_w, g.dilation_w * c, c),
        _Level(c, 1, 1),
    ]
    levels = [lv for lv in levels if lv.size > 1] or levels[-1:]

    if plain:
        # All pixels are one run: pixel p's input is x[p, :].
        _gemm(ctx, xf, wf, b, of, lambda e, f: f(e, 0, 0), pixels, c, cols, levels, g.activation)
        return

    def rows(e: Emitter, f: Callable[[Emitter, IndexOrInt, IndexOrInt], None]) -> None:
        """One run per output row (n, oh): its windows start stride_w * c apart."""

        def image(e: Emitter, n: IndexOrInt) -> None:
            _each(e, 0, g.out_h, 1, lambda e2, oh: f(
                e2,
                _Vec(e2).ix(0, (n, hp * wp * c), (oh, g.stride_h * wp * c)),
                _Vec(e2).ix(0, (n, g.out_h * g.out_w * cols), (oh, g.out_w * cols)),
            ))

        _each(e, 0, g.batches, 1, image)

    _gemm(ctx, xf, wf, b, of, rows, g.out_w, g.stride_w * c, cols, levels, g.activation)


def _accumulator(ctx: LoweringContext, qc, out: Value, bias: Value, channel_dim: int) -> Value:
    """The buffer the reduction accumulates into, initialised with the bias:
    the output itself for float, an int32 temporary when quantised."""
    acc = out if qc is None else ctx.alloc(ctx.shape(out), i32)
    init_with_bias(ctx, acc, bias, channel_dim)
    return acc


def _epilogue(ctx: LoweringContext, qc, acc: Value, out: Value, activation: int, channel_dim: int) -> None:
    """Fused activation in place (float) or requantisation into ``out``."""
    if qc is None:
        apply_activation(ctx, out, activation)
    else:
        qc.requantize(ctx, acc, out, channel_dim)


# -- DEPTHWISE_CONV_2D ----------------------------------------------------------------------


@lowering(Op.DEPTHWISE_CONV_2D, check=_check_depthwise)
def depthwise_conv_2d(ctx: LoweringContext) -> None:
    """out[n, oh, ow, ic*M + m] = bias[ic*M + m] + sum_{kh, kw}
    xpad[n, oh*sh + kh*dh, ow*sw + kw*dw, ic] * filter[0, kh, kw, ic*M + m]
    (filter [1, fh, fw, depth_out], M the depth multiplier).

    Quantised: accumulated in int32 with the zero points subtracted, then
    requantised per output channel (see :class:`QuantConv`)."""
    g = ConvGeometry.of(ctx, depthwise=True)
    qc = _quant_of(ctx, 3, g.activation)
    x, w, b, out = ctx.input(0), ctx.input(1), ctx.input(2), ctx.output()
    m = g.multiplier
    if qc is None and not g.nchw and m == 1:
        _depthwise_nhwc(ctx, g, x, w, b, out)
        return
    channel_dim = 1 if g.nchw else 3
    xp = padded_input(ctx, x, g, 0.0 if qc is None else qc.in_zp)
    acc = _accumulator(ctx, qc, out, b, channel_dim)
    # With a multiplier, the output channel ic*M + m is split into two loops
    # over views of the output and the filter ([.., ic, M, ..]), which keeps
    # every index a plain sum (no floordiv in the window index).
    wfn: Callable[[Loops], tuple]
    ofn: Callable[[Loops], tuple]
    if m > 1:
        w = ctx.reshaped(w, [g.filter_h, g.filter_w, g.in_c, m])
        wfn = lambda d: (d["kh"], d["kw"], d["ic"], d["m"])  # noqa: E731
        if g.nchw:
            ov = ctx.reshaped(acc, [g.batches, g.in_c, m, g.out_h, g.out_w])
            ofn = lambda d: (d["n"], d["ic"], d["m"], d["oh"], d["ow"])  # noqa: E731
        else:
            ov = ctx.reshaped(acc, [g.batches, g.out_h, g.out_w, g.in_c, m])
            ofn = lambda d: (d["n"], d["oh"], d["ow"], d["ic"], d["m"])  # noqa: E731
    else:
        ov = acc
        wfn = lambda d: (0, d["kh"], d["kw"], d["ic"])  # noqa: E731
        ofn = lambda d: g.layout(d["n"], d["oh"], d["ow"], d["ic"])  # noqa: E731
    if g.nchw:
        # The innermost loop walks along an output row.
        order = ("n", "ic", "m", "oh", "kh", "kw", "ow")
    else:
        # The channels are the innermost parallel loops (contiguous in input,
        # filter and output); LLVM unrolls the small tap loops inside them.
        order = ("n", "oh", "ow", "ic", "m", "kh", "kw")
    sizes = dict(n=g.batches, oh=g.out_h, ow=g.out_w, ic=g.in_c, m=m, kh=g.filter_h, kw=g.filter_w)
    named_generic(
        ctx,
        [(k, sizes[k]) for k in order if k != "m" or m > 1],
        ("kh", "kw"),
        [
            (xp, lambda d: g.window_index_of(d["n"], d["oh"], d["ow"], d["kh"], d["kw"], d["ic"])),
            (w, wfn),
        ],
        [(ov, ofn)],
        _mac if qc is None else qc.mac,
    )
    _epilogue(ctx, qc, acc, out, g.activation, channel_dim)


# -- FULLY_CONNECTED ------------------------------------------------------------------------


@lowering(Op.FULLY_CONNECTED, check=_check_fully_connected)
def fully_connected(ctx: LoweringContext) -> None:
    """out[b, u] = bias[u] + sum_i x[b, i] * weights[u, i], the input flattened to
    [batch, input_size].

    Quantised (weights of the input's type): accumulated in int32 with the zero
    points subtracted, then requantised (see :class:`QuantConv`)."""
    qc = _quant_of(ctx, None, ctx.scalar(3))
    w, bias, out = ctx.input(1), ctx.input(2), ctx.output()
    units, size = ctx.shape(w)
    batch = ctx.shape(out)[0]
    x = ctx.reshaped(ctx.input(0), [batch, size])
    if qc is None:
        fully_connected_f32(ctx, x, w, bias, out, batch, units, size, ctx.scalar(3))
        return
    acc = _accumulator(ctx, qc, out, bias, 1)
    mac = _mac if qc is None else qc.mac
    if batch >= TRANSPOSE_MIN_ROWS:
        # Per batch and input element: out[b, :] += x[b, i] * wt[i, :].
        wt = permuted(ctx, w, (1, 0))
        named_generic(
            ctx,
            [("b", batch), ("i", size), ("u", units)],
            ("i",),
            [(x, lambda d: (d["b"], d["i"])), (wt, lambda d: (d["i"], d["u"]))],
            [(acc, lambda d: (d["b"], d["u"]))],
            mac,
        )
    else:
        # A dot product per output element.
        named_generic(
            ctx,
            [("b", batch), ("u", units), ("i", size)],
            ("i",),
            [(x, lambda d: (d["b"], d["i"])), (w, lambda d: (d["u"], d["i"]))],
            [(acc, lambda d: (d["b"], d["u"]))],
            mac,
        )
    _epilogue(ctx, qc, acc, out, ctx.scalar(3), 1)


def fully_connected_f32(
    ctx: LoweringContext, x: Value, w: Value, bias: Value, out: Value, batch: int, units: int, size: int, act: int
) -> None:
    """Float32 FULLY_CONNECTED: dot products for a small batch, else the
    GEMM (weight panels transposed on the fly).  ``x`` [batch, size] and
    ``out`` [batch, units] are any contiguous buffers (views included); the
    recurrent lowerings use it for their gate products."""
    xf, of = ctx.flat(x), ctx.flat(out)
    if batch < DOT_MAX_ROWS:
        _dot(ctx, xf, ctx.flat(w), bias, of, batch, size, units, size, act)
        return
    _gemm(ctx, xf, ctx.flat(w), bias, of, lambda e, f: f(e, 0, 0), batch, size, units, [_Level(size, 1, 1)], act)
