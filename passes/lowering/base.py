"""Shared builders for lowering nnapi ops to linalg on memrefs.

Each op family (``elementwise.py``, ``conv.py``, ...) registers one function per
group of NNAPI operations with :func:`lowering`; importing the package
:mod:`nnc.passes.lowering` imports every family.  Families (and the vector
kernels in :mod:`nnc.passes.kernels`) import this module, never the package,
so the registry has no import cycle.  A lowering receives a
:class:`LoweringContext` that already holds the memref of every input and
output (destination-passing style: outputs are written in place) and the
:class:`~nnc.dialects.rules.OpCall` with every shape and constant known.  It
emits ``linalg.generic`` ops through :meth:`LoweringContext.generic` (or the
``elementwise``/``fill``/``copy`` shortcuts), allocating temporaries with
:meth:`LoweringContext.alloc`; the buffer planner later places those in the
arena.

Bodies of generics are written against :class:`Emitter`, a thin layer over
xDSL's builder with the arithmetic nnc needs, dispatching on float/int types so
one body serves several element types.
"""

from __future__ import annotations

import functools
import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from xdsl.builder import Builder
from xdsl.dialects import arith, math, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    UnrealizedConversionCastOp,
    f32,
    i32,
)
from xdsl.dialects.builtin import f32 as F32
from xdsl.dialects.builtin import i8 as I8
from xdsl.dialects.builtin import i32 as I32
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects.optable import SPECS
from nnc.dialects.rules import OpCall, OperandInfo
from nnc.enums import FuseCode, OperandType, OperationType
from nnc.operand_types import FLOAT16_COMPUTE_TYPES, QUANT8_ASYMM_TYPES, in_float32
from nnc.passes.build import integer_attr, new_op
from nnc.passes.kernels import vmath
from nnc.passes.kernels.tiles import AVX512, DepthwiseForm, DepthwiseStrides, GemmForm, TilePolicy, tile_policy
from nnc.passes.lowering import quant as q
from nnc.passes.lowering.byte_table import NotTabulable, byte_table

Value = SSAValue
IndexLike = SSAValue | int
#: the 8-bit asymmetric operand types (stored as i8), re-exported for the lowerings
QUANT8 = QUANT8_ASYMM_TYPES

_INDEX = IndexType()
#: an element-wise operation from one int8 tensor to another becomes a table
#: lookup (:mod:`~nnc.passes.lowering.byte_table`) from this many elements,
#: as many as its table has entries ...
TABLE_MIN_ELEMENTS = 256
#: ... when its body has at least this many operations besides constants: a
#: requantisation (a multiply, a rounding shift, a clamp) has about 12, a
#: clamp between the same quantisations 4, a copy none
TABLE_MIN_BODY_OPS = 8
_I64 = IntegerType(64)


def _binary(cls: type[Operation], a: Value, b: Value) -> Operation:
    """``cls(a, b)`` for an arith binary operation (result of ``a``'s type,
    default flags), built as :func:`~nnc.passes.build.new_op` builds: the
    lowering emits thousands, and the IRDL constructor costs three times as much."""
    return new_op(cls, (a, b), (a.type,))


#: What identifies a constant in a :class:`ConstScope`: an ``index``
#: constant by its value, any other by (type, value's repr) (so that 0.0
#: and -0.0 stay two constants)
ConstKey = int | tuple[Attribute, str]


@dataclass
class ConstScope:
    """Constants made once for a whole scope: every constant an
    :class:`Emitter` of the scope asks for is built at the end of the
    scope's outermost block (``builder``) the first time, and that value
    serves every later use, in that block or in the loops and branches
    nested in it.

    Valid because nnc's builders construct a nested region completely
    before inserting its op: a constant appended to the outer block while a
    region is built lands in front of the op that holds the region, so it
    dominates every use.  Lowerings otherwise emit the same small sizes,
    strides and vector constants at every index computation (a third of a
    convolution network's ops), which every later pass and LLVM then carry.
    A scope never crosses into a region that must not capture values from
    outside (a shared kernel's body has its own scope)."""

    builder: Builder
    table: dict[ConstKey, Value] = field(default_factory=dict)

    def get(self, key: ConstKey, make: Callable[[], Operation]) -> Value:
        v = self.table.get(key)
        if v is None:
            op = make()
            self.builder.insert(op)
            v = self.table[key] = op.results[0]
        return v


class Emitter:
    """Builds scalar arithmetic at one insertion point.  With a ``scope``
    (:class:`ConstScope`), constants are shared through it, and the
    emitters of nested loops and branches (:meth:`for_`, :meth:`if_`) use
    the same scope."""

    def __init__(self, builder: Builder, scope: ConstScope | None = None):
        self.b = builder
        self.scope = scope

    def op(self, op: Operation) -> Value:
        self.b.insert(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def nested(self, builder: Builder) -> Emitter:
        """An emitter of a region nested in this one's (same constant scope)."""
        return Emitter(builder, self.scope)

    # -- constants --------------------------------------------------------------
    def constant(self, key: ConstKey, make: Callable[[], Operation]) -> Value:
        """The constant ``make()`` builds, identified by ``key``: through the
        scope when there is one (built once), else built here."""
        if self.scope is not None:
            return self.scope.get(key, make)
        return self.op(make())

    def const(self, value: float | int, type: Attribute) -> Value:
        if isinstance(type, AnyFloat):
            return self.constant((type, repr(float(value))), lambda: _constant(FloatAttr(float(value), type)))
        if isinstance(type, IndexType):
            return self.index(int(value))
        return self.constant((type, repr(int(value))), lambda: _constant(integer_attr(int(value), type)))

    def f32(self, value: float) -> Value:
        return self.const(value, f32)

    def i32(self, value: int) -> Value:
        return self.const(value, i32)

    def index(self, value: IndexLike) -> Value:
        if isinstance(value, SSAValue):
            return value
        n = int(value)
        return self.constant(n, lambda: _constant(integer_attr(n, _INDEX)))

    def like(self, value: float | int, other: Value) -> Value:
        """A constant of ``other``'s type."""
        return self.const(value, other.type)

    # -- arithmetic (float or int by operand type) ---------------------------------
    @staticmethod
    def is_float(v: Value) -> bool:
        return isinstance(v.type, AnyFloat)

    def add(self, a: Value, b: Value) -> Value:
        return self.op(_binary(arith.AddfOp if self.is_float(a) else arith.AddiOp, a, b))

    def sub(self, a: Value, b: Value) -> Value:
        return self.op(_binary(arith.SubfOp if self.is_float(a) else arith.SubiOp, a, b))

    def mul(self, a: Value, b: Value) -> Value:
        return self.op(_binary(arith.MulfOp if self.is_float(a) else arith.MuliOp, a, b))

    def div(self, a: Value, b: Value) -> Value:
        """Float division; for integer tensor elements NNAPI's division: floor
        division where x // 0 is 0 and INT_MIN // -1 wraps, so no input can
        trap; for ``index`` values (loop arithmetic) plain signed division."""
        if self.is_float(a):
            return self.op(_binary(arith.DivfOp, a, b))
        if isinstance(a.type, IndexType):
            # Index arithmetic from lowerings divides by compile-time
            # constants; keep C semantics and the cheap instruction.
            return self.op(_binary(arith.DivSIOp, a, b))
        zero, one, minus_one = self.like(0, a), self.like(1, a), self.like(-1, a)
        by_zero = self.cmp("eq", b, zero)
        by_minus_one = self.cmp("eq", b, minus_one)
        safe = self.select(self.or_(by_zero, by_minus_one), one, b)
        q = self.op(_binary(arith.FloorDivSIOp, a, safe))
        q = self.select(by_minus_one, self.sub(zero, a), q)
        return self.select(by_zero, zero, q)

    def rem(self, a: Value, b: Value) -> Value:
        return self.op(_binary(arith.RemSIOp, a, b))

    def max(self, a: Value, b: Value) -> Value:
        return self.op(_binary(arith.MaxnumfOp if self.is_float(a) else arith.MaxSIOp, a, b))

    def min(self, a: Value, b: Value) -> Value:
        return self.op(_binary(arith.MinnumfOp if self.is_float(a) else arith.MinSIOp, a, b))

    def neg(self, a: Value) -> Value:
        if self.is_float(a):
            return self.op(arith.NegfOp(a))
        return self.sub(self.like(0, a), a)

    def clamp(self, x: Value, lo: float | None, hi: float | None) -> Value:
        if lo is not None:
            x = self.max(x, self.like(lo, x))
        if hi is not None:
            x = self.min(x, self.like(hi, x))
        return x

    _FPRED = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
    _IPRED = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge",
              "ult": "ult", "ule": "ule", "ugt": "ugt", "uge": "uge"}  # fmt: skip

    def cmp(self, pred: str, a: Value, b: Value) -> Value:
        """``pred`` in eq/ne/lt/le/gt/ge (signed for ints) or ult/ule/ugt/uge."""
        if self.is_float(a):
            return self.op(arith.CmpfOp(a, b, self._FPRED[pred]))
        return self.op(arith.CmpiOp(a, b, self._IPRED[pred]))

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return self.op(new_op(arith.SelectOp, (cond, a, b), (a.type,)))

    def and_(self, a: Value, b: Value) -> Value:
        return self.op(_binary(arith.AndIOp, a, b))

    def or_(self, a: Value, b: Value) -> Value:
        return self.op(_binary(arith.OrIOp, a, b))

    # -- math ------------------------------------------------------------------------
    def exp(self, a: Value) -> Value:
        return self.op(math.ExpOp(a))

    def log(self, a: Value) -> Value:
        return self.op(math.LogOp(a))

    def tanh(self, a: Value) -> Value:
        return self.op(math.TanhOp(a))

    def sqrt(self, a: Value) -> Value:
        return self.op(math.SqrtOp(a))

    def rsqrt(self, a: Value) -> Value:
        return self.op(math.RsqrtOp(a))

    def floor(self, a: Value) -> Value:
        return self.op(math.FloorOp(a))

    def abs(self, a: Value) -> Value:
        return self.op(math.AbsFOp(a))

    def pow(self, a: Value, b: Value) -> Value:
        return self.op(math.PowFOp(a, b))

    def sigmoid(self, a: Value) -> Value:
        """LOGISTIC: of float32 by :func:`~nnc.passes.kernels.vmath.logistic`,
        of other floats as ``1 / (1 + exp(-a))``."""
        if a.type == F32:
            return vmath.logistic(self, a)
        one = self.like(1.0, a)
        return self.div(one, self.add(one, self.exp(self.neg(a))))

    # -- conversions -------------------------------------------------------------------
    def index_cast(self, v: Value, to: Attribute = _INDEX) -> Value:
        return self.op(arith.IndexCastOp(v, to))

    def to_float(self, v: Value, to: AnyFloat = F32) -> Value:
        if isinstance(v.type, IndexType):
            v = self.index_cast(v, IntegerType(64))
        return self.op(arith.SIToFPOp(v, to))

    def to_int(self, v: Value, to: IntegerType = I32) -> Value:
        return self.op(arith.FPToSIOp(v, to))

    # -- memory -------------------------------------------------------------------------
    def load(self, buf: Value, indices: Sequence[IndexLike]) -> Value:
        assert isinstance(buf.type, MemRefType)
        return self.op(new_op(memref.LoadOp, (buf, *[self.index(i) for i in indices]), (buf.type.element_type,)))

    def store(self, value: Value, buf: Value, indices: Sequence[IndexLike]) -> None:
        self.op(new_op(memref.StoreOp, (value, buf, *[self.index(i) for i in indices])))

    # -- structured control flow -----------------------------------------------------------
    def if_(
        self,
        cond: Value,
        then: Callable[[Emitter], Sequence[Value]],
        otherwise: Callable[[Emitter], Sequence[Value]] | None = None,
        result_types: Sequence[Attribute] = (),
    ) -> list[Value]:
        """``scf.if``; each branch returns the values to yield."""

        def region(fn: Callable[[Emitter], Sequence[Value]] | None) -> Region:
            block = Block()
            e = self.nested(Builder(InsertPoint.at_end(block)))
            vals = fn(e) if fn is not None else ()
            e.op(new_op(scf.YieldOp, tuple(vals)))
            return Region(block)

        op = new_op(scf.IfOp, (cond,), tuple(result_types), regions=(region(then), region(otherwise)))
        self.b.insert(op)
        return list(op.results)

    def for_(
        self,
        lb: IndexLike,
        ub: IndexLike,
        body: Callable[[Emitter, Value, list[Value]], Sequence[Value]],
        iter_args: Sequence[Value] = (),
        step: IndexLike = 1,
    ) -> list[Value]:
        """``scf.for``; ``body(e, iv, iter_args)`` returns the next iter_args."""
        block = Block(arg_types=[IndexType(), *[a.type for a in iter_args]])
        e = self.nested(Builder(InsertPoint.at_end(block)))
        nxt = body(e, block.args[0], list(block.args[1:]))
        e.op(new_op(scf.YieldOp, tuple(nxt)))
        bounds = (self.index(lb), self.index(ub), self.index(step))
        op = new_op(scf.ForOp, (*bounds, *iter_args), [a.type for a in iter_args], regions=(Region(block),))
        self.b.insert(op)
        return list(op.results)


def _constant(value: Attribute) -> Operation:
    """``arith.ConstantOp(value)``, built as :func:`_binary` builds."""
    return new_op(arith.ConstantOp, (), (value.type,), {"value": value})  # type: ignore[attr-defined]


def swish(e: Emitter, x: Value) -> Value:
    """``x * logistic(x)`` as the LOGISTIC and MUL operations compute it
    (:meth:`Emitter.sigmoid`, then the product), for scalars; vector kernels
    build the same operations on vectors (:func:`nnc.passes.kernels.f32.vswish`)."""
    return e.mul(x, e.sigmoid(x))


def activation(e: Emitter, x: Value, code: int) -> Value:
    """Apply a fused activation (FuseCode) to a float or int value."""
    if code == FuseCode.NONE:
        return x
    if code == FuseCode.RELU:
        return e.clamp(x, 0.0, None)
    if code == FuseCode.RELU1:
        return e.clamp(x, -1.0, 1.0)
    if code == FuseCode.RELU6:
        return e.clamp(x, 0.0, 6.0)
    raise ValueError(f"bad fuse code {code}")


def identity_map(rank: int) -> AffineMap:
    return AffineMap.identity(rank)


def affine_map(rank: int, fn: Callable[..., Sequence[AffineExpr | int]]) -> AffineMap:
    """``affine_map(3, lambda i, j, k: (i, k))``: ints become constants."""
    dims = [AffineDimExpr(i) for i in range(rank)]
    results = tuple(AffineConstantExpr(r) if isinstance(r, int) else r for r in fn(*dims))
    return AffineMap(rank, 0, results)


def broadcast_map(in_shape: Sequence[int], out_shape: Sequence[int]) -> AffineMap:
    """Map from the output's iteration space to a right-aligned broadcast input."""
    r = len(out_shape)
    off = r - len(in_shape)
    exprs: list[AffineExpr] = []
    for k, d in enumerate(in_shape):
        if d == 1 and out_shape[off + k] != 1:
            exprs.append(AffineConstantExpr(0))
        else:
            exprs.append(AffineDimExpr(off + k))
    return AffineMap(r, 0, tuple(exprs))


def coalesced(out_shape: Sequence[int], in_shapes: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]] | None:
    """The shapes of an element-wise loop (``out_shape``, inputs broadcast
    to it numpy's way) with adjacent dimensions merged where every input
    either spans both or is broadcast over both, and size-1 dimensions
    dropped: (the output's shape, each input's), of equal ranks; None when
    no two dimensions merge."""
    rank = len(out_shape)
    padded = [[1] * (rank - len(s)) + list(s) for s in in_shapes]
    groups: list[list[int]] = []  # runs of output dimensions
    pattern: tuple[bool, ...] | None = None
    for k, d in enumerate(out_shape):
        if d == 1:
            continue
        spans = tuple(s[k] != 1 for s in padded)
        if groups and spans == pattern:
            groups[-1].append(k)
        else:
            groups.append([k])
            pattern = spans
    if len(groups) == sum(1 for d in out_shape if d != 1):
        return None  # no two dimensions merge (dropping size-1 ones alone changes no loop)
    new_out = [pymath.prod(out_shape[k] for k in g) for g in groups] or [1]
    new_ins = [[pymath.prod(s[k] for k in g) for g in groups] or [1] for s in padded]
    return new_out, new_ins


def plain(v: Value) -> bool:
    """A buffer in the default (contiguous, row-major) layout, which
    :meth:`LoweringContext.reshaped` may view with another shape."""
    t = v.type
    return isinstance(t, MemRefType) and isinstance(t.layout, NoneAttr)


def reduction_map(rank: int, axes: Sequence[int], keep: bool) -> AffineMap:
    """Map from a reduction's input iteration space to its output: the reduced
    ``axes`` become 0 (``keep``: kept as size-1 dims) or disappear (a rank-0
    result is stored as one element).  Shared by MEAN and the REDUCE_* ops."""

    def project(*d: AffineExpr) -> list:
        if keep:
            return [0 if k in axes else d[k] for k in range(rank)]
        return [d[k] for k in range(rank) if k not in axes] or [0]

    return affine_map(rank, project)


@dataclass
class EmissionState:
    """What the lowerings of one module remember from one operation to the
    next, owned by the pass run that lowers the module (never module-global,
    so two compilations in two threads cannot interfere).

    Keyed by the block a context's builder appends to: a function body, or a
    region of IF/WHILE or of a time-step loop."""

    #: shared kernels whose body was emitted (see
    #: :func:`nnc.passes.kernels.vector.kernel`): later uses are only a call
    kernel_bodies: dict[Block, set[str]] = field(default_factory=dict)
    #: constants at the top of the block (:class:`ConstScope`), shared by
    #: every later operation's emitters and kernel uses (they dominate
    #: everything emitted after them)
    constants: dict[Block, ConstScope] = field(default_factory=dict)


class ConstantSource(Protocol):
    """What the lowering knows of the model's compile-time constants (given
    by the pass that lowers the module, see ``convert-nnapi-to-linalg``)."""

    def value_of(self, buf: SSAValue) -> Any:
        """The numpy value of the constant ``buf`` is the buffer of (shape and
        storage dtype of its memref), or None when ``buf`` is not a constant
        or its bytes are not available to this compilation."""
        ...

    def packed(self, value: Any, elem: Attribute) -> SSAValue:
        """A read-only buffer holding ``value`` (a numpy array whose dtype
        matches ``elem``), made at compile time: a view into the constant
        pool when the compilation has one (never an LLVM global, however
        large), else a ``memref.global``."""
        ...


@dataclass(frozen=True)
class ElementwiseBody:
    """One element-wise body a fused group's member would have emitted:
    ``out[i] = body(ins[i]...)``, ``ins`` broadcast to ``out``'s shape."""

    out: Value
    ins: list[Value]
    body: Callable[[Emitter, list[Value]], Value]


@dataclass(frozen=True)
class QuantAdd:
    """A quantised ADD as an epilogue: its reference parameters with the
    producer's result as input 1 (:func:`~nnc.passes.lowering.quant.with_inputs_swapped`
    when it was input 2), and the 8-bit type of every operand."""

    params: q.AddParams
    type: OperandType


@dataclass(frozen=True)
class Epilogue:
    """An element-wise consumer computed in its producer's epilogue
    (``nnc-fuse-epilogues``): ``out = act(out + residual)`` per element, or
    ``act(out)`` without a residual; ``residual`` has the output's shape.
    With ``swish`` (the consumer is a LOGISTIC of the output and a MUL of
    both), ``out * logistic(out)`` comes first: ``act(swish(out))``.
    With ``quant`` (a quantised producer), the consumer is that quantised
    ADD of ``residual``, its activation part of its parameters."""

    residual: Value | None
    act: int
    swish: bool = False
    quant: QuantAdd | None = None


@dataclass
class LoweringContext:
    """Everything a lowering needs for one nnapi op."""

    builder: Builder
    call: OpCall
    inputs: list[Value | None]
    outputs: list[Value]
    new_buffer: Callable[[Sequence[int], Attribute], Value]
    #: memref<1xi32> that receives ``operation index + 1`` on invalid runtime data
    status: Value | None = None
    #: makes a read-only constant buffer (a memref.global) from a numpy array
    new_constant: Callable[[Any, Attribute], Value] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: shared by every context of one module (a fresh one, the default, only
    #: means kernel bodies are emitted again: correct, but slower)
    emission: EmissionState = field(default_factory=EmissionState)
    #: blocking of the vector kernels (:mod:`nnc.passes.kernels.tiles`)
    tiles: TilePolicy = field(default_factory=lambda: tile_policy(AVX512))
    #: whether the target converts float16 <-> float32 in instructions
    #: (:attr:`~nnc.passes.target.TargetDescription.half_conversions`)
    half_conversions: bool = True
    #: the width in bits of the target's byte shuffle, which byte table
    #: lookups use (:attr:`~nnc.passes.target.TargetDescription.byte_shuffle_bits`; 0: none)
    byte_shuffle_bits: int = 0
    #: emits a byte table lookup with the byte shuffle, ``(ctx, x, out,
    #: table, n, bits)`` on flat buffers (:func:`nnc.passes.kernels.lut.lookup`,
    #: given by the pass: the kernels build on this module); None: a load
    #: from the table per element
    byte_lookup: Callable[[LoweringContext, Value, Value, Any, int, int], None] | None = None
    #: how this operation's int8 GEMM multiplies (:class:`~nnc.passes.kernels.tiles.GemmForm`):
    #: the form ``nnc-choose-kernels`` recorded on the operation, else the
    #: target's (:func:`~nnc.passes.kernels.tiles.target_form`)
    gemm_form: GemmForm = GemmForm.PAIR
    #: how this operation's int8 depthwise kernel multiplies
    #: (:class:`~nnc.passes.kernels.tiles.DepthwiseForm`, as ``gemm_form``)
    dw_form: DepthwiseForm = DepthwiseForm.WIDEN
    #: how this operation's int8 depthwise interior kernel gets the strides
    #: (:class:`~nnc.passes.kernels.tiles.DepthwiseStrides`) as
    #: ``nnc-choose-kernels`` recorded it; None: by the lowering's rule
    #: (:func:`~nnc.passes.kernels.tiles.depthwise_strides`)
    dw_strides: DepthwiseStrides | None = None
    #: the model's compile-time constants (None: none are known)
    constants: ConstantSource | None = None
    #: the fused consumer this operation computes, if any: a lowering that
    #: can apply it in its kernel takes it (:meth:`take_epilogue`); one left
    #: is applied after the lowering by :meth:`finish_epilogue`
    epilogue: Epilogue | None = None
    #: memref<Nxi32> of the data-dependent sizes (:mod:`nnc.dialects.rules.dynamic`),
    #: None in a module that has none
    counts: Value | None = None
    #: a member of a fused element-wise group (``nnc-fuse-elementwise``):
    #: :meth:`elementwise` appends its body here instead of emitting a loop,
    #: and any other loop is an error
    capture: list[ElementwiseBody] | None = None

    def take_epilogue(self) -> Epilogue | None:
        """The fused consumer, now the caller's to apply (None: there is none)."""
        ep, self.epilogue = self.epilogue, None
        return ep

    def finish_epilogue(self) -> None:
        """Apply a fused consumer no kernel took: ``out = act(out +
        residual)`` (or the quantised ADD) in place, as the consumer itself
        would have computed it."""
        ep = self.take_epilogue()
        if ep is None:
            return
        out = self.output()
        ins = [out] if ep.residual is None else [out, ep.residual]
        if (qa := ep.quant) is not None:
            self.elementwise(out, ins, lambda e, a: q.binary_stored(e, qa.params, qa.type, a[0], a[1]))
            return

        def body(e: Emitter, a: list[Value]) -> Value:
            y = swish(e, a[0]) if ep.swish else a[0]
            return activation(e, y if ep.residual is None else e.add(y, a[1]), ep.act)

        self.elementwise(out, ins, body)

    @property
    def e(self) -> Emitter:
        return Emitter(self.builder)

    def shared_e(self) -> Emitter:
        """An emitter at the builder whose constants (and those of the loops
        and branches it builds) are the block's, made once
        (:class:`ConstScope`) and shared with every later operation."""
        block = self.builder.insertion_point.block
        scope = self.emission.constants.get(block)
        if scope is None:
            scope = self.emission.constants[block] = ConstScope(self.builder)
        return Emitter(self.builder, scope)

    # -- operands -------------------------------------------------------------------
    def input(self, i: int) -> Value:
        v = self.inputs[i] if i < len(self.inputs) else None
        if v is None:
            raise ValueError(f"input {i} is omitted or a scalar")
        return v

    def has_input(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None

    def info(self, i: int) -> OperandInfo:
        return self.call.inputs[i]

    def out_info(self, i: int = 0) -> OperandInfo:
        return self.call.outputs[i]

    def output(self, i: int = 0) -> Value:
        return self.outputs[i]

    def scalar(self, i: int, default: Any = None) -> Any:
        return self.call.scalar(i, default)

    def shape(self, v: Value) -> tuple[int, ...]:
        t = v.type
        assert isinstance(t, MemRefType)
        return tuple(t.get_shape())

    def alloc(self, shape: Sequence[int], elem: Attribute) -> Value:
        """A temporary buffer (placed in the arena by the buffer planner)."""
        return self.new_buffer(shape, elem)

    def constant(self, value: Any, elem: Attribute) -> Value:
        """A read-only buffer holding ``value`` (a numpy array whose dtype
        matches ``elem``): lookup tables, per-channel parameters."""
        if self.new_constant is None:
            raise ValueError("this context cannot create constants")
        return self.new_constant(value, elem)

    def constant_value(self, buf: Value) -> Any:
        """The numpy value of ``buf`` when it is a model constant whose bytes
        this compilation has (to lay weights out at compile time), else None
        (a model input, a computed tensor, or a module compiled without its
        constant pool, as ``nnc-opt`` does)."""
        return None if self.constants is None else self.constants.value_of(buf)

    def packed_constant(self, value: Any, elem: Attribute) -> Value:
        """A read-only buffer holding ``value`` (a numpy array of any dtype,
        matching ``elem``) laid out at compile time, e.g. weights packed in
        the order a kernel reads them.  Appended (64-byte aligned, identical
        arrays shared) to the model's constant pool, which the driver hands
        to the runtime and the caches with the original weights; without a
        pool (``nnc-opt``) a ``memref.global``.  Returns a memref of
        ``value``'s shape."""
        if self.constants is None:
            return self.constant(value, elem)
        return self.constants.packed(value, elem)

    def error_if(self, e: Emitter, cond: Value) -> None:
        """Record a runtime data error of this operation when ``cond`` (i1) holds.

        Native code cannot raise: the generated code keeps running on safe
        (clamped) indices, and the runtime raises an NNError naming this
        operation after the call.  Use this together with a guarded access,
        never instead of one.
        """
        if self.status is None:
            return
        code = e.i32(self.call.index + 1)
        old = e.load(self.status, [0])
        e.store(e.select(cond, code, old), self.status, [0])

    # -- data-dependent sizes ---------------------------------------------------------------
    def count(self, k: int) -> Value | None:
        """The actual size (an ``index``) of input ``k``'s data-dependent
        dimension (its static size there is the bound), loaded from the
        counts buffer at the builder; None when input ``k`` has none.  Only
        operations that must not compute over the bound need it (the table
        of :mod:`nnc.dialects.rules.dynamic` lets the others)."""
        dyn = self.call.inputs[k].dynamic if k < len(self.call.inputs) else None
        if dyn is None:
            return None
        e = self.e
        n = e.index_cast(e.load(self._counts(), [dyn.count]))
        return n if dyn.factor == 1 else e.mul(n, e.index(dyn.factor))

    def set_count(self, k: int, value: Value, e: Emitter | None = None) -> None:
        """A producer's output ``k`` has ``value`` (i32 or index) rows: store it
        in the counts buffer (at ``e``, default the builder)."""
        dyn = self.call.outputs[k].dynamic
        if dyn is None:
            return
        e = e or self.e
        if isinstance(value.type, IndexType):
            value = e.index_cast(value, i32)
        e.store(value, self._counts(), [dyn.count])

    def _counts(self) -> Value:
        if self.counts is None:
            raise ValueError(f"{self.call.type.name}: a data-dependent size without a counts buffer")
        return self.counts

    # -- structured ops ------------------------------------------------------------------
    def generic(
        self,
        domain: Sequence[int],
        ins: Sequence[tuple[Value, AffineMap]],
        outs: Sequence[tuple[Value, AffineMap]],
        body: Callable[[Emitter, list[Value], list[Value]], Sequence[Value]],
        reduction_dims: Sequence[int] = (),
    ) -> None:
        """Emit ``linalg.generic`` over ``domain``.

        ``body(e, args, idx)`` gets the loaded input and current output
        elements (``args``) and the iteration indices (``idx``, from
        ``linalg.index``; indices that are not used vanish when the body is
        inlined into loops) and returns the values to store into ``outs``.
        Any other memref may be loaded in the body with ``e.load`` (gathers,
        padding windows).
        """
        if self.capture is not None:
            raise PassFailedException(
                f"convert-nnapi-to-linalg: {self.call.type.name} is in a fused element-wise group "
                "but its lowering is not one element-wise body"
            )
        rank = len(domain)
        # An input of rank 0 or a map of the wrong arity are lowering bugs.
        for buf, amap in (*ins, *outs):
            assert amap.num_dims == rank, f"map {amap} does not match domain {domain}"
            assert len(amap.results) == len(self.shape(buf)), f"map {amap} vs {buf.type}"
        if rank == 0:
            # linalg needs at least one loop to hold the body.
            domain, rank = (1,), 1
            ins = [(b, AffineMap(1, 0, m.results)) for b, m in ins]
            outs = [(b, AffineMap(1, 0, m.results)) for b, m in outs]
        elem_types = [memref_elem(b) for b, _ in (*ins, *outs)]
        block = Block(arg_types=elem_types)
        e = Emitter(Builder(InsertPoint.at_end(block)))
        index_ops = [new_op(linalg.IndexOp, (), (_INDEX,), {"dim": integer_attr(d, _I64)}) for d in range(rank)]
        idx = [e.op(op) for op in index_ops]
        results = body(e, list(block.args), idx)
        for index_op in index_ops:
            if not index_op.results[0].uses:
                index_op.detach()
                index_op.erase()
        e.op(new_op(linalg.YieldOp, tuple(results)))
        iterators = [
            IteratorTypeAttr(IteratorType.REDUCTION if d in reduction_dims else IteratorType.PARALLEL)
            for d in range(rank)
        ]
        # Loop bounds come from operand shapes; give linalg a dummy-free
        # domain by making sure every dim appears in some map.
        op = linalg.GenericOp(
            [b for b, _ in ins],
            [b for b, _ in outs],
            Region(block),
            [AffineMapAttr(m) for _, m in (*ins, *outs)],
            iterators,
        )
        _check_domain(op, domain)
        self.builder.insert(op)

    def elementwise(
        self,
        out: Value,
        ins: Sequence[Value],
        body: Callable[[Emitter, list[Value]], Value],
    ) -> None:
        """``out[i] = body(ins[i]...)`` with numpy broadcasting of ``ins``."""
        if self.capture is not None:
            self.capture.append(ElementwiseBody(out, list(ins), body))
            return
        values = self._byte_table(out, ins, body)
        if values is not None:
            self._lookup(ins[0], out, values)
            return
        self.elementwise_loop(out, list(ins), lambda e, args, idx: [body(e, args[: len(ins)])])

    def _byte_table(self, out: Value, ins: Sequence[Value], body: Callable[[Emitter, list[Value]], Value]) -> Any:
        """The table of ``body`` (:mod:`~nnc.passes.lowering.byte_table`,
        int8 numpy), when it maps one int8 tensor to another of its shape of
        at least :data:`TABLE_MIN_ELEMENTS` elements, has at least
        :data:`TABLE_MIN_BODY_OPS` operations and can be evaluated."""
        if len(ins) != 1 or self.shape(ins[0]) != self.shape(out):
            return None
        if memref_elem(ins[0]) != I8 or memref_elem(out) != I8 or pymath.prod(self.shape(out)) < TABLE_MIN_ELEMENTS:
            return None
        try:
            return byte_table(body, Emitter, TABLE_MIN_BODY_OPS)
        except NotTabulable:
            return None

    def _lookup(self, x: Value, out: Value, values: Any) -> None:
        """``out = values[x]``: with the target's byte shuffle on contiguous
        buffers (:attr:`byte_lookup`), else a load from the table per element."""
        if self.byte_lookup is not None and self.byte_shuffle_bits and plain(x) and plain(out):
            n = pymath.prod(self.shape(out))
            self.byte_lookup(self, self.flat(x), self.flat(out), values, n, self.byte_shuffle_bits)
            return
        table = self.flat(self.packed_constant(values, I8))
        lookup = lambda e, args, idx: [e.load(table, [e.index_cast(e.op(arith.ExtUIOp(args[0], I32)))])]
        self.elementwise_loop(out, [x], lookup)

    def elementwise_loop(self, out: Value, ins: list[Value], body: Callable) -> None:
        """One ``linalg.generic`` over ``out`` whose body reads ``ins`` with
        numpy broadcasting and ignores the indices, over the fewest
        dimensions that describe it (:func:`coalesced`): a ``[1, 40, 40, 24]``
        ADD is one loop of 38,400 elements, not 1,600 loops of 24, which LLVM
        vectorises with a remainder and runtime checks each."""
        oshape = self.shape(out)
        shapes = coalesced(oshape, [self.shape(b) for b in ins])
        if shapes is not None and all(plain(v) for v in (out, *ins)):
            new_out, new_ins = shapes
            out, ins = self.reshaped(out, new_out), [self.reshaped(b, t) for b, t in zip(ins, new_ins)]
            oshape = tuple(new_out)
        maps = [(b, broadcast_map(self.shape(b), oshape)) for b in ins]
        self.generic(oshape, maps, [(out, identity_map(len(oshape)))], body)

    def fill(self, out: Value, value: float | int) -> None:
        shape = self.shape(out)
        self.generic(
            shape, [], [(out, identity_map(len(shape)))], lambda e, args, idx: [e.like(value, args[0])]
        )

    def copy(self, src: Value, dst: Value) -> None:
        """Copy ``src`` into ``dst`` (same shape)."""
        self.elementwise(dst, [src], lambda e, a: a[0])

    def flat(self, buf: Value) -> Value:
        """A 1-D view of a contiguous buffer (no copy)."""
        n = 1
        for d in self.shape(buf):
            n *= d
        return self.reshaped(buf, [n])

    def reshaped(self, buf: Value, shape: Sequence[int]) -> Value:
        """View a contiguous buffer with another shape of the same size."""
        t = buf.type
        assert isinstance(t, MemRefType)
        if tuple(shape) == self.shape(buf):
            return buf
        return self.reinterpreted(buf, t.element_type, shape)

    def reinterpreted(self, buf: Value, elem: Attribute, shape: Sequence[int]) -> Value:
        """View a contiguous buffer's bytes with another element type and
        shape (``memref<4xf32>`` as ``memref<16xi8>``: hashing reads raw
        bytes, sequences take byte-offset views of their steps)."""
        op = UnrealizedConversionCastOp.get([buf], [memref_of(elem, tuple(shape))])
        self.builder.insert(op)
        return op.results[0]


@functools.lru_cache(maxsize=4096)
def memref_of(elem: Attribute, shape: tuple[int, ...]) -> MemRefType:
    """``memref<shape x elem>``, built once per (element type, shape): xDSL's
    MemRefType checks its shape argument against a type constraint it
    builds anew at every construction (a tenth of a network's lowering
    time), and types are immutable values, so one object serves every use."""
    return MemRefType(elem, shape)


def element_bytes(t: Attribute) -> int:
    """Bytes one element of type ``t`` takes in a buffer (i1 and i8: 1)."""
    width = t.bitwidth if hasattr(t, "bitwidth") else 32
    return max(1, (width + 7) // 8)


def memref_elem(buf: Value) -> Attribute:
    """The element type of a memref value."""
    t = buf.type
    assert isinstance(t, MemRefType)
    return t.element_type


def _check_domain(op: linalg.GenericOp, domain: Sequence[int]) -> None:
    """Loop ``d`` takes its bound from the first operand (inputs, then
    outputs) whose map has a plain ``d`` result, as linalg does; that
    dimension must equal ``domain[d]``."""
    bounds: dict[int, int] = {}
    for buf, amap in zip(op.operands, op.get_indexing_maps().data):
        assert isinstance(buf.type, MemRefType)
        shape = buf.type.get_shape()
        for k, expr in enumerate(amap.data.results):
            if isinstance(expr, AffineDimExpr):
                bounds.setdefault(expr.position, shape[k])
    for d, size in enumerate(domain):
        if bounds.get(d) != size:
            raise AssertionError(
                f"loop {d} of size {size} is not bounded by a plain operand dimension "
                f"(got {bounds.get(d)}); add an operand indexed by d{d}"
            )


# -- registry ------------------------------------------------------------------------------

LowerFn = Callable[[LoweringContext], None]


@dataclass(frozen=True)
class Lowering:
    fn: LowerFn
    #: optional implementation limit: returns why a call is unsupported (None: it is not)
    check: Callable[[OpCall], str | None] | None = None
    #: run even when every output is empty (the lowering checks its inputs at run time)
    on_empty: bool = False

    def __call__(self, ctx: LoweringContext) -> None:
        """Lower one operation.  An operation whose outputs all have a zero
        dimension has nothing to compute, so no lowering has to guard that."""
        if self.on_empty or any(all(ctx.shape(out)) for out in ctx.outputs):
            self.fn(ctx)


LOWERINGS: dict[OperationType, Lowering] = {}


def lowering(
    *ops: OperationType,
    check: Callable[[OpCall], str | None] | None = None,
    on_empty: bool = False,
) -> Callable[[LowerFn], LowerFn]:
    """Register ``fn`` as the lowering of ``ops``.

    Which operand types it handles is the operation's record
    (:attr:`~nnc.dialects.optable.OpSpec.implemented`), not the lowering's
    business; ``check`` adds limits that depend on more than the type.
    ``on_empty``: call ``fn`` even when every output is empty, for lowerings
    that report invalid input data (out-of-range indices) at run time."""

    def register(fn: LowerFn) -> LowerFn:
        for t in ops:
            LOWERINGS[t] = Lowering(fn, check, on_empty)
        return fn

    return register


def unsupported_reason(call: OpCall) -> str | None:
    """Why nnc cannot compile ``call`` (None if it can), from the operation's
    record (implemented types) and its lowering's ``check``."""
    spec = SPECS[call.type]
    low = LOWERINGS.get(call.type)
    if low is None or not spec.supported:
        return "no lowering for this operation"
    primary = spec.primary_operand(call.inputs, call.outputs)
    if primary is not None and primary.type not in spec.implemented:
        return f"operand type {primary.type.name} not implemented for {call.type.name}"
    if low.check is not None:
        # float16 operands are computed by the float32 lowering (lowering/float16.py),
        # so its limits are those of the float32 call.
        return low.check(float32_call(call))
    return None


def float32_call(call: OpCall) -> OpCall:
    """``call`` with every float16 operand as the float32 one nnc computes it
    in (:func:`~nnc.operand_types.in_float32`); ``call`` itself if it has none."""
    if not has_float16(call):
        return call
    return OpCall(call.type, [in_float32(i) for i in call.inputs], [in_float32(o) for o in call.outputs], call.index)


def has_float16(call: OpCall) -> bool:
    """Whether any operand of ``call`` is TENSOR_FLOAT16 or FLOAT16."""
    return any(o.type in FLOAT16_COMPUTE_TYPES for o in (*call.inputs, *call.outputs))

