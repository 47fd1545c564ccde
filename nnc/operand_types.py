"""Operand-type facts: the one table every layer reads.

This is the bottom of nnc's import graph (with :mod:`nnc.enums`, which
re-exports :class:`OperandType`, :mod:`nnc.errors` and :mod:`nnc.version`):
it imports nothing of nnc, so the runtime, the dialects, the passes, the
driver and the public API can all use it without importing upwards.  Every
fact about an NNAPI operand type -- its element kind, numpy dtype, byte size,
whether it is a scalar, its quantisation kind and representable range -- is
one row of :data:`FACTS`; the other tables (the dialect's xDSL storage types,
the lowerings' quantised ranges, the C header's element types) are derived
from it, so adding float16 or a new quantised type is one row here.

It also holds the small value helpers more than one layer needs
(:class:`OperandInfo`, :func:`is_int`, :func:`unify_dim`/:func:`unify_dims`),
so each exists once.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TypeGuard

import numpy as np


class OperandType(enum.IntEnum):
    """ANEURALNETWORKS_* operand codes."""

    FLOAT32 = 0
    INT32 = 1
    UINT32 = 2
    TENSOR_FLOAT32 = 3
    TENSOR_INT32 = 4
    TENSOR_QUANT8_ASYMM = 5
    BOOL = 6
    TENSOR_QUANT16_SYMM = 7
    TENSOR_FLOAT16 = 8
    TENSOR_BOOL8 = 9
    FLOAT16 = 10
    TENSOR_QUANT8_SYMM_PER_CHANNEL = 11
    TENSOR_QUANT16_ASYMM = 12
    TENSOR_QUANT8_SYMM = 13
    TENSOR_QUANT8_ASYMM_SIGNED = 14
    MODEL = 15

    @property
    def facts(self) -> OperandTypeFacts:
        return FACTS[self]

    @property
    def is_scalar(self) -> bool:
        return FACTS[self].scalar

    @property
    def is_tensor(self) -> bool:
        return not FACTS[self].scalar

    @property
    def is_quantized(self) -> bool:
        return FACTS[self].quant is not None


class ElementKind(enum.Enum):
    """What the stored numbers mean (before any quantisation)."""

    FLOAT = "float"
    INT = "int"  # signed or unsigned integer, by the dtype
    BOOL = "bool"  # stored as one byte, 0 or 1
    MODEL = "model"  # a reference to a subgraph: no element


class QuantKind(enum.Enum):
    """How a quantised type maps stored integers to reals."""

    ASYMM = "asymm"  # real = scale * (q - zero_point)
    SYMM = "symm"  # zero_point is 0
    SYMM_PER_CHANNEL = "symm_per_channel"  # one scale per channel, zero_point 0


@dataclass(frozen=True)
class OperandTypeFacts:
    """One row of :data:`FACTS`."""

    kind: ElementKind
    #: numpy dtype of values (what users pass and what the constant pool holds);
    #: None for MODEL
    dtype: np.dtype | None
    scalar: bool
    quant: QuantKind | None = None

    @property
    def byte_size(self) -> int:
        """Bytes per element (0 for MODEL)."""
        return 0 if self.dtype is None else self.dtype.itemsize

    @property
    def qrange(self) -> tuple[int, int] | None:
        """Representable range of a quantised type's stored integers."""
        if self.quant is None or self.dtype is None:
            return None
        info = np.iinfo(self.dtype)
        return int(info.min), int(info.max)


def _row(kind: ElementKind, dtype, scalar: bool, quant: QuantKind | None = None) -> OperandTypeFacts:
    return OperandTypeFacts(kind, None if dtype is None else np.dtype(dtype), scalar, quant)


_F, _I, _B = ElementKind.FLOAT, ElementKind.INT, ElementKind.BOOL
T = OperandType

#: Every operand type's facts (NeuralNetworksTypes.h, OperandCode).
FACTS: dict[OperandType, OperandTypeFacts] = {
    T.FLOAT32: _row(_F, np.float32, True),
    T.INT32: _row(_I, np.int32, True),
    T.UINT32: _row(_I, np.uint32, True),
    T.BOOL: _row(_B, np.bool_, True),
    T.FLOAT16: _row(_F, np.float16, True),
    T.MODEL: _row(ElementKind.MODEL, None, True),
    T.TENSOR_FLOAT32: _row(_F, np.float32, False),
    T.TENSOR_FLOAT16: _row(_F, np.float16, False),
    T.TENSOR_INT32: _row(_I, np.int32, False),
    T.TENSOR_BOOL8: _row(_B, np.bool_, False),
    T.TENSOR_QUANT8_ASYMM: _row(_I, np.uint8, False, QuantKind.ASYMM),
    T.TENSOR_QUANT8_ASYMM_SIGNED: _row(_I, np.int8, False, QuantKind.ASYMM),
    T.TENSOR_QUANT8_SYMM: _row(_I, np.int8, False, QuantKind.SYMM),
    T.TENSOR_QUANT8_SYMM_PER_CHANNEL: _row(_I, np.int8, False, QuantKind.SYMM_PER_CHANNEL),
    T.TENSOR_QUANT16_ASYMM: _row(_I, np.uint16, False, QuantKind.ASYMM),
    T.TENSOR_QUANT16_SYMM: _row(_I, np.int16, False, QuantKind.SYMM),
}

#: Operand types that hold values (every type but MODEL).
VALUE_TYPES: tuple[OperandType, ...] = tuple(t for t, f in FACTS.items() if f.dtype is not None)
#: Representable range of each quantised type's stored integers.
QRANGE: dict[OperandType, tuple[int, int]] = {t: f.qrange for t, f in FACTS.items() if f.qrange is not None}
#: Asymmetric quantised types stored in 8 bits (QUANT8_ASYMM and its signed twin).
QUANT8_ASYMM_TYPES: tuple[OperandType, ...] = tuple(
    t for t, f in FACTS.items() if f.quant == QuantKind.ASYMM and f.byte_size == 1
)
#: Quantised types stored in 8 bits.
QUANT8_TYPES: tuple[OperandType, ...] = tuple(t for t, f in FACTS.items() if f.quant and f.byte_size == 1)
#: Quantised types whose stored integers are unsigned.
UNSIGNED_QUANT_TYPES: tuple[OperandType, ...] = tuple(t for t, r in QRANGE.items() if r[0] == 0)


#: Float16 operand types and the float32 type nnc computes them in (storage
#: stays IEEE half; see ``nnc.passes.lowering.float16``).
FLOAT16_COMPUTE_TYPES: dict[OperandType, OperandType] = {T.TENSOR_FLOAT16: T.TENSOR_FLOAT32, T.FLOAT16: T.FLOAT32}


def dtype_of(t: OperandType) -> np.dtype:
    """The numpy dtype used for values of operand type ``t`` (KeyError for MODEL)."""
    dtype = FACTS[t].dtype
    if dtype is None:
        raise KeyError(t)
    return dtype


def element_bytes(t: OperandType) -> int:
    """Bytes per element of operand type ``t`` (KeyError for MODEL)."""
    return dtype_of(t).itemsize


# -- what is known about one operand ---------------------------------------------------------------


#: :attr:`DynamicDim.count` of an output whose producer creates a new count
#: (BOX_WITH_NMS_LIMIT's rule); shape inference numbers it.
NEW_COUNT = -1


@dataclass(frozen=True)
class DynamicDim:
    """A data-dependent dimension: the operand's static ``dims``
    hold the BOUND at ``axis`` (the most it can be), and its actual size
    there is ``factor * counts[count]``, where ``counts`` is the small int32
    buffer the generated code writes at run time (one entry per operation
    that produces a data-dependent size).  Buffers are planned for the
    bound; rows beyond the actual size hold zeros, so an operation that
    computes every row independently may compute over the bound."""

    axis: int
    count: int
    factor: int = 1

    def actual(self, dims: Sequence[int], counts: Sequence[int] | np.ndarray) -> tuple[int, ...]:
        """The actual dimensions of an operand of bound ``dims``, given the
        counts a run wrote (clamped to the bound: native code never writes
        more, but the runtime does not trust that)."""
        out = list(dims)
        out[self.axis] = max(0, min(self.factor * int(counts[self.count]), dims[self.axis]))
        return tuple(out)



@dataclass(frozen=True)
class OperandInfo:
    """What is known about one operand at validation or compile time.  Shared by
    the rules, the passes, the runtime's ABI tables and the cache, so it lives
    at the bottom."""

    type: OperandType
    dims: tuple[int, ...] | None = ()
    scale: float = 0.0
    zero_point: int = 0
    channel_quant: tuple[tuple[float, ...], int] | None = None
    value: np.ndarray | None = field(default=None, compare=False, hash=False)
    omitted: bool = False
    #: a data-dependent dimension (its dims hold the bound there), or None
    dynamic: DynamicDim | None = None

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    @property
    def shape_known(self) -> bool:
        return self.dims is not None and all(d > 0 for d in self.dims)

    @property
    def byte_size(self) -> int:
        """Bytes of the whole operand (its dims must be known)."""
        n = element_bytes(self.type)
        for d in self.dims or ():
            n *= d
        return n

    def with_dims(self, dims: Sequence[int] | None) -> OperandInfo:
        return replace(self, dims=None if dims is None else tuple(int(d) for d in dims), value=None, dynamic=None)

    def describe(self) -> str:
        dims = "?" if self.dims is None else "x".join(str(d) for d in self.dims)
        bound = "" if self.dynamic is None else f" (dim {self.dynamic.axis} data-dependent, at most)"
        return f"{self.type.name}[{dims}]{bound}"


def in_float32(info: OperandInfo) -> OperandInfo:
    """``info`` as the float32 computation of a float16 operand sees it: the
    same operand with type TENSOR_FLOAT32/FLOAT32 and its value (if known)
    widened, which is exact; any other operand unchanged."""
    wide = FLOAT16_COMPUTE_TYPES.get(info.type)
    if wide is None:
        return info
    value = None if info.value is None else info.value.astype(np.float32)
    return replace(info, type=wide, value=value)


# -- value helpers -----------------------------------------------------------------------------------


def is_int(x: object) -> TypeGuard[int | np.integer]:
    """An integer argument: a Python or numpy integer, but not a bool.

    ``bool`` is a subclass of ``int`` in Python, and a flag passed where an
    index, a count or a type code is expected is a caller's mistake, so it is
    refused.  ``np.bool_`` needs no special case: it is not an ``np.integer``
    (nor an ``int``), so it is refused as well.  JSON and NDK callers only
    ever pass ``int``; the numpy case is for values taken from arrays."""
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


class DimensionMismatch(ValueError):
    """Two shapes (or dimensions) contradict each other."""


def unify_dim(a: int, b: int) -> int:
    """One dimension from two descriptions of it, where 0 means unknown."""
    if a and b and a != b:
        raise DimensionMismatch(f"{a} != {b}")
    return a or b


def unify_dims(a: Sequence[int] | None, b: Sequence[int] | None) -> tuple[int, ...] | None:
    """NNAPI's combineDimensions: one shape from two descriptions of it, where
    None is an unknown rank and 0 an unknown dimension.  Raises
    :class:`DimensionMismatch` when the ranks or a known dimension differ."""
    if a is None:
        return None if b is None else tuple(b)
    if b is None:
        return tuple(a)
    if len(a) != len(b):
        raise DimensionMismatch(f"rank {len(a)} vs {len(b)}")
    if any(x and y and x != y for x, y in zip(a, b)):
        raise DimensionMismatch(f"dimensions {list(a)} vs {list(b)}")
    return tuple(x or y for x, y in zip(a, b))


def unify_bounded(
    declared: Sequence[int] | None, inferred: Sequence[int] | None, dynamic: DynamicDim | None
) -> tuple[int, ...] | None:
    """:func:`unify_dims` where ``inferred`` may hold a bound at a
    data-dependent axis: a declared size there (the size the model's author
    expects at run time) must be at most the bound, and the bound is kept."""
    if dynamic is None or declared is None or inferred is None:
        return unify_dims(declared, inferred)
    if len(declared) != len(inferred):
        raise DimensionMismatch(f"rank {len(declared)} vs {len(inferred)}")
    a = dynamic.axis
    if declared[a] and inferred[a] and declared[a] > inferred[a]:
        raise DimensionMismatch(f"dimension {a}: {declared[a]} exceeds the bound {inferred[a]}")
    rest = unify_dims([*declared[:a], 0, *declared[a + 1 :]], [*inferred[:a], 0, *inferred[a + 1 :]])
    assert rest is not None
    return (*rest[:a], inferred[a], *rest[a + 1 :])
