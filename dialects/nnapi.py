"""The ``nnapi`` xDSL dialect: one operation per NNAPI OperationType.

The 106 operation classes (plus OEM) are generated from :mod:`optable`, not
written by hand: every NNAPI operation has the same structure (a list of
operands, some optional, and a list of results), and everything specific to one
operation type (counts, names, shape rules) is data.

Operand types map onto builtin types so that shapes stay ordinary xDSL shapes:

==============================  ===============================================
NNAPI                           xDSL
==============================  ===============================================
FLOAT32 / FLOAT16               ``f32`` / ``f16``
INT32 / UINT32 / BOOL           ``i32`` / ``ui32`` / ``i1``
TENSOR_FLOAT32/FLOAT16          ``tensor<...xf32>`` / ``tensor<...xf16>``
TENSOR_INT32 (no scale)         ``tensor<...xi32>``
TENSOR_BOOL8                    ``tensor<...xi1>``
quantised tensors, scaled int   ``tensor<...x!nnapi.quant<"KIND", scale, zp>>``
per-channel quantised           ``tensor<...x!nnapi.quant_per_channel<...>>``
unknown rank                    ``tensor<*x...>``
omitted optional operand        its declared type, defined by ``nnapi.no_value``
==============================  ===============================================

A dimension that is not specified is ``?``.  Constants are ``nnapi.constant``
ops holding either the value inline (a dense attribute) or, for large weights,
an ``#nnapi.blob<offset, size>`` reference into the model's constant pool, which
is kept outside the IR so that printing and rewriting stay cheap.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnrankedTensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    VarOperand,
    VarOpResult,
    irdl_attr_definition,
    irdl_op_definition,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects.optable import OPS, OpSpec
from nnc.dialects.rules import OpCall
from nnc.enums import OperandType, OperationType
from nnc.operand_types import FACTS, QRANGE, VALUE_TYPES, DynamicDim, ElementKind, OperandInfo, OperandTypeFacts

T = OperandType
ui32 = IntegerType(32, Signedness.UNSIGNED)

# ---------------------------------------------------------------------------------
# Types and attributes
# ---------------------------------------------------------------------------------


@irdl_attr_definition
class QuantType(ParametrizedAttribute, TypeAttribute):
    """A quantised (or scaled integer) tensor element: real = scale * (q - zp)."""

    name = "nnapi.quant"

    kind: StringAttr
    scale: FloatAttr
    zero_point: IntAttr


@irdl_attr_definition
class PerChannelQuantType(ParametrizedAttribute, TypeAttribute):
    """TENSOR_QUANT8_SYMM_PER_CHANNEL element: one scale per index of ``channel_dim``."""

    name = "nnapi.quant_per_channel"

    #: float32 scales as one packed array: a model's per-channel filters
    #: carry thousands, one FloatAttr each took most of the import time
    scales: DenseArrayBase[Float32Type]
    channel_dim: IntAttr


@irdl_attr_definition
class BoundedAttr(ParametrizedAttribute):
    """Tensor encoding of an operand with a data-dependent dimension
    (:class:`~nnc.operand_types.DynamicDim`): ``tensor<38x4xf32,
    #nnapi.bounded<0, 0, 1>>`` holds at most 38 rows, actually ``factor *
    counts[count]``, known only at run time.  Shape inference writes it;
    the lowering reads it (buffers hold the bound, loops that must not go
    past the actual size read the count)."""

    name = "nnapi.bounded"

    axis: IntAttr
    count: IntAttr
    factor: IntAttr


@irdl_attr_definition
class BlobAttr(ParametrizedAttribute):
    """A constant stored in the model's constant pool at ``offset``, ``size`` bytes."""

    name = "nnapi.blob"

    offset: IntAttr
    size: IntAttr


_SCALAR_TYPES: dict[OperandType, Attribute] = {
    T.FLOAT32: f32,
    T.FLOAT16: f16,
    T.INT32: i32,
    T.UINT32: ui32,
    T.BOOL: i1,
}
_PLAIN_TENSOR_ELEMENTS: dict[OperandType, Attribute] = {
    T.TENSOR_FLOAT32: f32,
    T.TENSOR_FLOAT16: f16,
    T.TENSOR_INT32: i32,
    T.TENSOR_BOOL8: i1,
}
def _dtype(facts: OperandTypeFacts) -> np.dtype:
    assert facts.dtype is not None  # every value type has one
    return facts.dtype


def _integer(t: Attribute) -> IntegerType:
    assert isinstance(t, IntegerType)
    return t


def _storage_element(facts: OperandTypeFacts) -> IntegerType | Float16Type | Float32Type:
    """How an element of that operand type is stored in memory: f32/f16 for
    floats, else an integer of the dtype's width (bool as i8, uint32 as i32)."""
    assert facts.dtype is not None
    if facts.kind == ElementKind.FLOAT:
        floats: dict[int, Float16Type | Float32Type] = {4: f32, 2: f16}
        return floats[facts.byte_size]
    return IntegerType(8 * facts.byte_size)


#: Storage element type and numpy dtype of every operand type (from the one
#: operand-type table, :data:`nnc.operand_types.FACTS`).
STORAGE: dict[OperandType, tuple[IntegerType | Float16Type | Float32Type, np.dtype]] = {
    t: (_storage_element(FACTS[t]), _dtype(FACTS[t])) for t in VALUE_TYPES
}

#: The storage integer type of each quantised type.
QUANT_STORAGE: dict[OperandType, IntegerType] = {t: _integer(STORAGE[t][0]) for t in QRANGE}

#: Attribute marking a function imported from a referenced model (IF/WHILE).
SUBGRAPH_ATTR = "nnapi.subgraph"
#: Attribute of an ``nnapi.while`` that shape inference unrolled (its loop
#: state changes shape between iterations): the body function of each
#: iteration, in order, each specialised to that iteration's shapes.
UNROLLED_ATTR = "nnc.unrolled"


def numpy_dtype(t: OperandType) -> np.dtype:
    """The numpy dtype a user passes for an operand of type ``t``."""
    return STORAGE[t][1]


def to_xdsl_type(info: OperandInfo) -> Attribute:
    """The xDSL type of an NNAPI operand (see the module docstring)."""
    if info.type in _SCALAR_TYPES:
        return _SCALAR_TYPES[info.type]
    if info.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        scales, dim = info.channel_quant or ((), 0)
        packed = DenseArrayBase(f32, BytesAttr(np.asarray(scales, np.float32).tobytes()))
        elem: Attribute = PerChannelQuantType(packed, IntAttr(dim))
    elif info.type in _PLAIN_TENSOR_ELEMENTS and not (info.scale or info.zero_point):
        elem = _PLAIN_TENSOR_ELEMENTS[info.type]
    elif info.type.is_tensor and info.type != T.MODEL:
        elem = QuantType(
            StringAttr(info.type.name), FloatAttr(float(info.scale), f64), IntAttr(info.zero_point)
        )
    else:
        raise ValueError(f"no xDSL type for {info.type.name}")
    if info.dims is None:
        return UnrankedTensorType(elem)
    shape = [d if d > 0 else DYNAMIC_INDEX for d in info.dims]
    if info.dynamic is not None:
        dyn = info.dynamic
        return TensorType(elem, shape, BoundedAttr(IntAttr(dyn.axis), IntAttr(dyn.count), IntAttr(dyn.factor)))
    return TensorType(elem, shape)


def dynamic_dim(t: Attribute) -> DynamicDim | None:
    """The data-dependent dimension a tensor type's encoding carries, if any."""
    if isinstance(t, TensorType) and isinstance(t.encoding, BoundedAttr):
        enc = t.encoding
        return DynamicDim(enc.axis.data, enc.count.data, enc.factor.data)
    return None


def from_xdsl_type(t: Attribute) -> OperandInfo:
    """Inverse of :func:`to_xdsl_type` (values are not carried by types)."""
    for ot, st in _SCALAR_TYPES.items():
        if t == st:
            return OperandInfo(ot, ())
    if isinstance(t, TensorType | UnrankedTensorType):
        dims = None if isinstance(t, UnrankedTensorType) else tuple(max(d, 0) for d in t.get_shape())
        elem = t.element_type
        dyn = dynamic_dim(t)
        if isinstance(elem, QuantType):
            return OperandInfo(
                OperandType[elem.kind.data], dims, elem.scale.value.data, elem.zero_point.data, dynamic=dyn
            )
        if isinstance(elem, PerChannelQuantType):
            scales = elem.scales.get_values()
            return OperandInfo(
                T.TENSOR_QUANT8_SYMM_PER_CHANNEL, dims, channel_quant=(scales, elem.channel_dim.data), dynamic=dyn
            )
        for ot, et in _PLAIN_TENSOR_ELEMENTS.items():
            if elem == et:
                return OperandInfo(ot, dims, dynamic=dyn)
    raise ValueError(f"not an nnapi operand type: {t}")


def element_storage_type(t: Attribute) -> Attribute:
    """The integer/float type a tensor's elements are stored as in memory."""
    return STORAGE[from_xdsl_type(t).type][0]


def memref_type(t: Attribute, what: str = "a value") -> MemRefType:
    """The memref holding a statically shaped nnapi tensor; ``what`` names
    the value in the error (an operation output, a function argument)."""
    if not isinstance(t, TensorType):
        raise PassFailedException(f"{what} is {t}, expected a ranked tensor")
    if any(d < 0 for d in t.get_shape()):
        raise PassFailedException(f"{what} has shape {t}, not static: run nnapi-shape-inference first")
    return _memref_of(t)


@functools.lru_cache(maxsize=4096)
def _memref_of(t: TensorType) -> MemRefType:
    """The memref type of a static tensor type, made once per type: types
    are immutable, and building and verifying a MemRefType (its shape an
    ArrayAttr of IntAttr, the element type mapped through the operand
    tables) costs more than the lookup; a model asks for the same few types
    at every operation."""
    return MemRefType(element_storage_type(t), t.get_shape())


# ---------------------------------------------------------------------------------
# Operations
# ---------------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A constant operand: ``value`` is a dense attribute or an ``#nnapi.blob``."""

    name = "nnapi.constant"
    value = prop_def(Attribute)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: Attribute, result_type: Attribute):
        super().__init__(properties={"value": value}, result_types=[result_type])


@irdl_op_definition
class NoValueOp(IRDLOperation):
    """An omitted optional operand (NNAPI lifetime NO_VALUE)."""

    name = "nnapi.no_value"
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, declared_type: Attribute):
        # The result keeps the operand's declared type: NNAPI validates an
        # omitted operand's type like any other.
        super().__init__(result_types=[declared_type])


class NNAPIOperation(IRDLOperation):
    """Base of the generated per-OperationType classes.

    ``args`` are the NNAPI inputs in order, ``outs`` the outputs; the class
    attribute ``SPEC`` is the operation's row of the op table.
    """

    SPEC: ClassVar[OpSpec]
    if TYPE_CHECKING:  # defined per class by _make_op_class
        args: VarOperand
        outs: VarOpResult

    def __init__(self, args: Sequence[SSAValue | Operation], result_types: Sequence[Attribute]):
        super().__init__(operands=[list(args)], result_types=[list(result_types)])

    def verify_(self) -> None:
        from xdsl.utils.exceptions import VerifyException

        if not self.SPEC.accepts_input_count(len(self.args)):
            raise VerifyException(
                f"{self.name}: {len(self.args)} inputs is not a valid signature"
            )
        if not self.SPEC.accepts_output_count(len(self.outs)):
            raise VerifyException(
                f"{self.name}: {len(self.outs)} outputs is not a valid signature"
            )


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Op"


def _make_op_class(spec: OpSpec) -> type[NNAPIOperation]:
    namespace = {
        "name": f"nnapi.{spec.mnemonic}",
        "SPEC": spec,
        "__annotations__": {"SPEC": ClassVar[OpSpec]},
        "args": var_operand_def(),
        "outs": var_result_def(),
        "__doc__": f"NNAPI {spec.type.name} (since {spec.since.name}); inputs: "
        + ", ".join(spec.inputs),
        "__module__": __name__,
    }
    return irdl_op_definition(type(_camel(spec.mnemonic), (NNAPIOperation,), namespace))


#: OperationType -> generated op class.
OP_CLASSES: dict[OperationType, type[NNAPIOperation]] = {
    spec.type: _make_op_class(spec) for spec in OPS
}
globals().update({cls.__name__: cls for cls in OP_CLASSES.values()})


def op_class(t: OperationType) -> type[NNAPIOperation]:
    return OP_CLASSES[t]


def dense_attr(value: np.ndarray, t: Attribute) -> DenseIntOrFPElementsAttr:
    """A dense attribute holding ``value`` for an operand of xDSL type ``t``."""
    info = from_xdsl_type(t)
    storage, dtype = STORAGE[info.type]
    shape = list(value.shape) if info.type.is_tensor else []
    arr = np.ascontiguousarray(value, dtype=dtype)
    if storage == i8 and dtype == np.bool_:
        arr = arr.astype(np.int8)
    return DenseIntOrFPElementsAttr(TensorType(storage, shape), BytesAttr(arr.tobytes()))


def dense_value(attr: DenseIntOrFPElementsAttr, t: OperandType) -> np.ndarray:
    """The numpy value of a dense constant of operand type ``t``."""
    dtype = STORAGE[t][1]
    raw = np.frombuffer(attr.data.data, dtype=np.int8 if dtype == np.bool_ else dtype)
    return raw.astype(dtype).reshape(attr.get_shape())


# ---------------------------------------------------------------------------------
# Reading ops back as rule calls
# ---------------------------------------------------------------------------------


def operand_info(v: SSAValue) -> OperandInfo:
    """OperandInfo of an nnapi SSA value, with its value when it is a constant."""
    owner = v.owner
    info = from_xdsl_type(v.type)
    if isinstance(owner, NoValueOp):
        return OperandInfo(info.type, info.dims, omitted=True)
    if isinstance(owner, ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        return replace(info, value=dense_value(owner.value, info.type))
    return info


def op_call(op: NNAPIOperation, index: int = -1) -> OpCall:
    return OpCall(
        op.SPEC.type,
        [operand_info(a) for a in op.args],
        [from_xdsl_type(r.type) for r in op.outs],
        index,
    )


def referenced_function(functions: Mapping[str, func.FuncOp], model: SSAValue) -> func.FuncOp:
    """The function of the referenced model that a MODEL operand (an
    ``nnapi.constant`` holding a symbol) names, among ``functions`` by name.
    Raises ValueError when the operand names none: shape inference and the
    lowering report that in their own error types."""
    owner = model.owner
    if not isinstance(owner, ConstantOp) or not isinstance(owner.value, SymbolRefAttr):
        raise ValueError("a MODEL operand must name a referenced model")
    name = owner.value.root_reference.data
    fn = functions.get(name)
    if fn is None or SUBGRAPH_ATTR not in fn.attributes:
        raise ValueError(f"no referenced model @{name}")
    return fn


NNAPI = Dialect(
    "nnapi",
    [ConstantOp, NoValueOp, *OP_CLASSES.values()],
    [QuantType, PerChannelQuantType, BlobAttr, BoundedAttr],
)

__all__ = [
    "NNAPI",
    "BlobAttr",
    "BoundedAttr",
    "ConstantOp",
    "NoValueOp",
    "NNAPIOperation",
    "OP_CLASSES",
    "PerChannelQuantType",
    "QuantType",
    "STORAGE",
    "SUBGRAPH_ATTR",
    "UNROLLED_ATTR",
    "dense_attr",
    "dense_value",
    "dynamic_dim",
    "from_xdsl_type",
    "memref_type",
    "numpy_dtype",
    "op_call",
    "op_class",
    "operand_info",
    "referenced_function",
    "to_xdsl_type",
]
