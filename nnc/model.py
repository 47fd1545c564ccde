"""``nnc.Model``: building an NNAPI model (ANeuralNetworksModel_*).

The builder records operands and operations exactly as the NDK does, with the
NDK's argument checks and result codes at each call, in Android's order: a
``None`` where C takes a required pointer first (UNEXPECTED_NULL), then the
model's state (BAD_STATE), then the data (BAD_DATA).

State machine:

* BUILDING after construction: only this state accepts modifications.  A
  modifier that fails with BAD_DATA leaves the model unchanged, so a corrected
  call afterwards succeeds.
* FINISHED after :meth:`Model.finish` succeeded: immutable, may be shared by
  threads, compiled and queried.
* INVALID after :meth:`Model.finish` failed validation: sticky; every later
  modifier, ``finish`` and ``Compilation`` creation is BAD_STATE.

:meth:`Model.add_operation` checks an operation's signature as far as nnc's
rules can judge it when it is added (operand types, ranks, counts, IF/WHILE
subgraph compatibility); :meth:`Model.finish` validates the
whole graph (every operation's rule with all constants known, shapes, graph
well-formedness) and sorts the operations topologically, remembering the
order they were added in (:attr:`Model.operations_as_added`).
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from nnc import modelfile
from nnc.details import TensorDetails, tensor_details
from nnc.device import check_device_entries, device_list
from nnc.dialects.optable import SPECS
from nnc.dialects.rules import OpCall, RuleError, Unsupported, infer
from nnc.enums import MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES, Lifetime, OperandType, OperationType
from nnc.errors import BadDataError, BadStateError, NNError, UnexpectedNullError, error_for, ndk
from nnc.operand_types import DimensionMismatch, OperandInfo, dtype_of, element_bytes, is_int, unify_bounded, unify_dims

T = OperandType
_UINT32_MAX = 0xFFFFFFFF


class ConstantMemory(abc.ABC):
    """A memory a model constant can be read from: :class:`nnc.Memory` is the
    one implementation.  Declared here because the memory module sits above
    this one (a memory descriptor takes compilations, which take models), so
    :meth:`Model.set_operand_value_from_memory` checks its argument against
    this base instead of importing :mod:`nnc.memory`."""

    @property
    @abc.abstractmethod
    def size(self) -> int:
        """The memory's size in bytes."""

    @abc.abstractmethod
    def view(self, offset: int, length: int, function: str) -> memoryview:
        """``length`` bytes at ``offset`` (an NNError if they cannot be read)."""


@dataclass
class Operand:
    type: OperandType
    dims: tuple[int, ...] | None
    scale: float = 0.0
    zero_point: int = 0
    channel_quant: tuple[tuple[float, ...], int] | None = None
    lifetime: Lifetime = Lifetime.TEMPORARY_VARIABLE
    value: np.ndarray | None = None
    subgraph: Model | None = None
    #: (memory, offset, length) of a value set from an nnc.Memory; read at finish
    memory: tuple[ConstantMemory, int, int] | None = None

    def info(self, with_value: bool = True) -> OperandInfo:
        return OperandInfo(
            self.type,
            self.dims,
            self.scale,
            self.zero_point,
            self.channel_quant,
            self.value if with_value else None,
            self.lifetime == Lifetime.NO_VALUE,
        )

    @property
    def is_constant(self) -> bool:
        return self.lifetime in (Lifetime.CONSTANT_COPY, Lifetime.CONSTANT_REFERENCE)

    @property
    def fully_specified(self) -> bool:
        """A known rank and no unknown (0) dimension."""
        return self.dims is not None and all(d > 0 for d in self.dims)

    def byte_size(self) -> int | None:
        """Bytes of a fully specified value, None if dims are not all known."""
        if self.type == T.MODEL:
            return None
        if self.dims is None or any(d == 0 for d in self.dims):
            return None
        n = 1
        for d in self.dims:
            n *= d
        return n * element_bytes(self.type)


@dataclass
class Operation:
    type: OperationType | int
    inputs: list[int]
    outputs: list[int]


# -- argument checks shared by the builder methods ------------------------------------------------


def int_arg(fn: str, x: object, what: str) -> int:
    """``x`` as an int; a wrong Python type is BAD_DATA (binding rule 3)."""
    if is_int(x):
        return int(x)
    if isinstance(x, float | np.floating) and float(x).is_integer():
        return int(x)
    raise BadDataError(fn, f"{what} must be an integer, got {x!r}")


def enum_arg(fn: str, enum_type, x: object, what: str):
    """``x`` as a member of ``enum_type`` (BAD_DATA for anything else)."""
    if not is_int(x):
        raise BadDataError(fn, f"invalid {what} {x!r}")
    try:
        return enum_type(int(x))
    except ValueError:
        raise BadDataError(fn, f"invalid {what} {x}") from None


def _check_operand_type(fn: str, t: OperandType, dims, scale: float, zp: int) -> None:
    """NNAPI's validateOperandType: dimensions, scale and zero point per
    type.  TENSOR_INT32 is deliberately lenient about scale and zero point, as
    in Android (quantised biases carry a scale)."""

    def bad(msg: str) -> BadDataError:
        return BadDataError(fn, f"{t.name}: {msg}")

    if t.is_scalar:
        if dims:
            raise bad("a scalar type cannot have dimensions")
    if t in (T.TENSOR_QUANT8_ASYMM,) and not 0 <= zp <= 255:
        raise bad(f"zero point {zp} outside [0, 255]")
    if t == T.TENSOR_QUANT8_ASYMM_SIGNED and not -128 <= zp <= 127:
        raise bad(f"zero point {zp} outside [-128, 127]")
    if t == T.TENSOR_QUANT16_ASYMM and not 0 <= zp <= 65535:
        raise bad(f"zero point {zp} outside [0, 65535]")
    if t in (T.TENSOR_QUANT8_SYMM, T.TENSOR_QUANT16_SYMM) and zp != 0:
        raise bad("zero point must be 0")
    if t in (T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM,
             T.TENSOR_QUANT16_ASYMM, T.TENSOR_QUANT16_SYMM):  # fmt: skip
        if not scale > 0:
            raise bad(f"scale must be > 0, got {scale}")
    elif t == T.TENSOR_INT32:
        pass
    elif t == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        if scale != 0 or zp != 0:
            raise bad("scale and zero point must be 0 (set per-channel parameters instead)")
    else:
        if scale != 0 or zp != 0:
            raise bad("scale and zero point must be 0 for this type")


def _check_byte_size(fn: str, t: OperandType, dims: tuple[int, ...] | None) -> None:
    """The value's byte size (element size x the known dimensions) must fit a
    uint32."""
    if t == T.MODEL or not dims:
        return
    n = element_bytes(t)
    for d in dims:
        if d:
            n *= d
    if n > _UINT32_MAX:
        raise BadDataError(fn, f"{t.name}{list(dims)}: byte size {n} overflows uint32")


def _compatible(a: Operand, b: Operand) -> str | None:
    """Android's ``compatible`` for IF/WHILE operand pairs: same type, scale,
    zero point and per-channel parameters; same rank and dimensions where both
    are known.  Returns what differs (None if compatible)."""
    if a.type != b.type:
        return f"type {a.type.name} vs {b.type.name}"
    if a.dims and b.dims:
        try:
            unify_dims(a.dims, b.dims)
        except DimensionMismatch as e:
            return str(e)  # "rank 2 vs 3", "dimensions [1, 2] vs [1, 3]"
    if a.scale != b.scale or a.zero_point != b.zero_point:
        return f"quantisation ({a.scale}, {a.zero_point}) vs ({b.scale}, {b.zero_point})"
    if a.channel_quant != b.channel_quant:
        return "per-channel quantisation parameters differ"
    return None


def _immutable(arr: np.ndarray) -> bool:
    """Whether nothing can write into ``arr``'s memory: C-contiguous (a
    reshape is then a view), read-only, and on its ``base`` chain no writable
    array, ending in a read-only buffer (``bytes``, an ``mmap`` opened
    ACCESS_READ).  An array that owns its memory does not qualify: its
    owner may make it writable again."""
    if not arr.flags.c_contiguous:
        return False
    x: object = arr
    while isinstance(x, np.ndarray):
        if x.flags.writeable:
            return False
        x = x.base
    if x is None:
        return False
    try:
        with memoryview(x) as view:  # type: ignore[arg-type]
            return view.readonly
    except TypeError:
        return False


def is_sequence(x: object) -> TypeGuard[Iterable[Any]]:
    """Whether ``x`` can stand for a C array argument (a list of indices or
    dimensions): iterable, but not a str, bytes, dict or a numpy array that is
    not 1-d (a 0-d array has ``__iter__`` yet cannot be iterated)."""
    if isinstance(x, str | bytes | dict) or not hasattr(x, "__iter__"):
        return False
    return not (isinstance(x, np.ndarray) and x.ndim != 1)


class Model:
    """An NNAPI model under construction (ANeuralNetworksModel)."""

    #: tensor names of the inputs and outputs, when the model file has them
    input_names: list[str] | None = None
    output_names: list[str] | None = None
    #: state the model carries between runs (a TFLite model's variable
    #: tensors, such as an LSTM's), as (input position, output position or
    #: None): NNAPI models are stateless, so the state is an input, and the
    #: output that holds its next value, if any.  :class:`nnc.CompiledModel`
    #: keeps it between runs; NDK-style code passes it explicitly.
    state: list[tuple[int, int | None]] | None = None
    #: asked by a compilation before it compiles the model (not on a cache
    #: hit), with its function's name: raises an NNError listing every
    #: operation that cannot be compiled, in the terms the model came in (a
    #: TFLite import's operators; ``nnc.import_tflite`` defers this check)
    support_report: Callable[[str], None] | None = None

    def __init__(self) -> None:
        self.operands: list[Operand] = []
        self.operations: list[Operation] = []
        #: The operations in the order add_operation was called (set by finish;
        #: ``operations`` is then in execution order).
        self.operations_as_added: list[Operation] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.relaxed = False
        self.finished = False
        self._closed = False
        self._identified = False
        #: why finish failed (the INVALID state), None otherwise
        self._invalid: str | None = None
        self._lock = threading.Lock()
        #: What this finished model was read from, when a reader can tell
        #: (a hashable: the reader, the file's identity, the reader's options;
        #: see :func:`nnc.modelfile.read_regular_file`): equal keys mean
        #: equal models, so the compilation cache fingerprints such a model
        #: once per process (:func:`nnc.runtime.cache.model_fingerprint`).
        self.source_key: tuple | None = None

    # -- helpers --------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """Whether close() (ANeuralNetworksModel_free) was called."""
        return self._closed

    @property
    def invalid(self) -> bool:
        """Whether finish() failed validation (the sticky INVALID state)."""
        return self._invalid is not None

    def _mutable(self, fn: str) -> None:
        if self.finished:
            raise BadStateError(fn, "the model is already finished")
        if self._invalid is not None:
            raise BadStateError(fn, f"the model is invalid (finish failed: {self._invalid})")

    def _operand(self, fn: str, index: object) -> Operand:
        if not is_int(index) or not 0 <= int(index) < len(self.operands):
            raise BadDataError(fn, f"operand index {index!r} out of range [0, {len(self.operands)})")
        return self.operands[int(index)]

    def _indices(self, fn: str, indices: object, what: str) -> list[int]:
        """A list of operand indices, each in range."""
        if not is_sequence(indices):
            raise BadDataError(fn, f"{what} must be a sequence of operand indices, got {indices!r}")
        result = []
        for i in indices:
            self._operand(fn, i)
            result.append(int(i))
        return result

    # -- NDK API ----------------------------------------------------------------------
    @ndk("ANeuralNetworksModel_addOperand")
    def add_operand(
        self,
        type: OperandType | int,
        dimensions: Sequence[int] | None = None,
        scale: float = 0.0,
        zero_point: int = 0,
    ) -> int:
        """ANeuralNetworksModel_addOperand; returns the new operand's index.

        ``type=None`` is the NDK's NULL operand type (UNEXPECTED_NULL).
        ``dimensions`` None or ``[]`` leaves a tensor's rank unknown; a 0 in a
        dimension leaves that dimension unknown."""
        fn = "ANeuralNetworksModel_addOperand"
        if type is None:
            raise UnexpectedNullError(fn, "operand type is null")
        self._mutable(fn)
        t = enum_arg(fn, OperandType, type, "operand type")
        dims = self._dimensions(fn, t, dimensions)
        if isinstance(scale, bool) or not isinstance(scale, int | float | np.integer | np.floating):
            raise BadDataError(fn, f"scale must be a number, got {scale!r}")
        zp = int_arg(fn, zero_point, "zero point")
        _check_operand_type(fn, t, dims, float(scale), zp)
        _check_byte_size(fn, t, dims)
        self.operands.append(Operand(t, dims, float(scale), zp))
        return len(self.operands) - 1

    @staticmethod
    def _dimensions(fn: str, t: OperandType, dimensions) -> tuple[int, ...] | None:
        if dimensions is None:
            return None if t.is_tensor else ()
        if not is_sequence(dimensions):
            raise BadDataError(fn, f"dimensions must be a sequence of integers, got {dimensions!r}")
        dims = tuple(int_arg(fn, d, "a dimension") for d in dimensions)
        if any(d < 0 or d > _UINT32_MAX for d in dims):
            raise BadDataError(fn, f"invalid dimensions {list(dims)}")
        if t.is_tensor and len(dims) == 0:
            return None  # rank 0 tensor in the NDK = unknown rank
        return dims

    @ndk("ANeuralNetworksModel_setOperandValue")
    def set_operand_value(self, index: int, value) -> None:
        """ANeuralNetworksModel_setOperandValue; ``None`` omits an optional
        operand (the NDK's NULL buffer with length 0).

        Values of at most 128 bytes
        (``MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES``) are copied now.  Larger
        ones Android keeps by reference, leaving later changes undefined;
        nnc keeps a reference only to a value that cannot change, and copies
        the rest now, so the caller may change or drop a buffer of its own at
        once.  A value that cannot change is ``bytes``, or a numpy array of
        the operand's dtype, C-contiguous, read-only, whose memory belongs to
        a read-only buffer (``bytes``, a read-only ``mmap``) with no writable
        array between them (:func:`_immutable`): what
        :func:`nnc.import_tflite` gives, views of the mapped file.  So a
        model of large weights holds them once, in the caller's buffer.
        Either way the model's value is read-only: nothing writes into it."""
        fn = "ANeuralNetworksModel_setOperandValue"
        self._mutable(fn)
        op = self._operand(fn, index)
        if value is None:
            op.lifetime, op.value, op.memory, op.subgraph = Lifetime.NO_VALUE, None, None, None
            return
        if op.type == T.MODEL:
            raise BadDataError(fn, "use set_operand_value_from_model for a MODEL operand")
        arr = self._coerce(fn, op, value)
        op.value, op.memory, op.subgraph = arr, None, None
        small = arr.nbytes <= MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES
        op.lifetime = Lifetime.CONSTANT_COPY if small else Lifetime.CONSTANT_REFERENCE

    @staticmethod
    def _coerce(fn: str, op: Operand, value) -> np.ndarray:
        """A read-only numpy array of the operand's type holding ``value``:
        ``value`` itself when it is large and cannot change (see
        :meth:`set_operand_value`), else a private copy; nothing is copied
        before the size is known good."""
        dtype = dtype_of(op.type)
        expected = op.byte_size()
        if expected is None:
            raise BadDataError(fn, "cannot set the value of an operand with unspecified dimensions")
        if isinstance(value, bytes | bytearray | memoryview):
            raw = memoryview(value).cast("B")
            if raw.nbytes > _UINT32_MAX:
                raise BadDataError(fn, f"value length {raw.nbytes} exceeds the maximum 0xFFFFFFFF")
            if raw.nbytes != expected:
                raise BadDataError(fn, f"value has {raw.nbytes} bytes, operand needs {expected}")
            arr = np.frombuffer(raw, dtype=dtype)
            if not (isinstance(value, bytes) and raw.nbytes > MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES):
                arr = arr.copy()
        else:
            try:
                src = np.asarray(value)
            except Exception as e:  # noqa: BLE001 - any unconvertible object is bad data
                raise BadDataError(fn, f"cannot convert value: {e}") from None
            if src.dtype == object or (src.dtype != dtype and not np.can_cast(src.dtype, dtype, "same_kind")
                                       and not (src.dtype.kind in "iub" and dtype.kind in "iub")):  # fmt: skip
                raise BadDataError(fn, f"value of dtype {src.dtype} does not fit {op.type.name}")
            nbytes = src.size * dtype.itemsize
            if nbytes > _UINT32_MAX:
                raise BadDataError(fn, f"value length {nbytes} exceeds the maximum 0xFFFFFFFF")
            if nbytes != expected:
                raise BadDataError(fn, f"value has {nbytes} bytes ({src.size} elements), operand needs {expected}")
            referenced = src.dtype == dtype and nbytes > MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES and _immutable(src)
            arr = src if referenced else np.array(src, dtype=dtype, copy=True)
        arr = arr.reshape(op.dims if op.dims else ())
        arr.flags.writeable = False
        return arr

    @ndk("ANeuralNetworksModel_setOperandValueFromMemory")
    def set_operand_value_from_memory(self, index: int, memory, offset: int, length: int) -> None:
        """ANeuralNetworksModel_setOperandValueFromMemory.

        ``length`` must be the operand's exact byte size and ``[offset,
        offset + length)`` must lie inside the memory; device memory (from
        :meth:`nnc.Memory.from_desc`) cannot hold a constant.  The bytes are
        read when the model is finished (as Android's driver reads them when
        it compiles); the memory must stay open until then.  NNAPI requires
        data in a memory to be aligned to its element size; Android does not
        check it, nnc does (BAD_DATA), as for execution arguments."""
        fn = "ANeuralNetworksModel_setOperandValueFromMemory"
        if memory is None:
            raise UnexpectedNullError(fn, "memory is null")
        self._mutable(fn)
        op = self._operand(fn, index)
        if not isinstance(memory, ConstantMemory):
            raise BadDataError(fn, f"expected an nnc.Memory, got {type(memory).__name__}")
        if op.type == T.MODEL:
            raise BadDataError(fn, "a MODEL operand takes its value from set_operand_value_from_model")
        if not op.fully_specified:
            raise BadDataError(fn, "cannot set the value of an operand with unspecified dimensions")
        offset = int_arg(fn, offset, "offset")
        length = int_arg(fn, length, "length")
        expected = op.byte_size()
        if length != expected:
            raise BadDataError(fn, f"length {length} does not match the operand's size {expected}")
        if getattr(memory, "kind", None) == "device":
            raise BadDataError(fn, "device memory (from a MemoryDesc) cannot hold a model constant")
        size = int(memory.size)
        if offset < 0 or offset > size or offset + length > size:
            raise BadDataError(fn, f"[{offset}, {offset + length}) is outside the {size}-byte memory")
        if offset % element_bytes(op.type):
            raise BadDataError(fn, f"offset {offset} is not aligned to the {element_bytes(op.type)}-byte "
                                   f"elements of {op.type.name}")  # fmt: skip
        op.memory, op.value, op.subgraph = (memory, offset, length), None, None
        op.lifetime = Lifetime.CONSTANT_REFERENCE

    @ndk("ANeuralNetworksModel_setOperandValueFromModel")
    def set_operand_value_from_model(self, index: int, model: Model) -> None:
        """ANeuralNetworksModel_setOperandValueFromModel (IF/WHILE bodies).

        The referenced model must be finished (BAD_STATE otherwise);
        it is kept alive by this model."""
        fn = "ANeuralNetworksModel_setOperandValueFromModel"
        if model is None:
            raise UnexpectedNullError(fn, "model is null")
        self._mutable(fn)
        if not isinstance(model, Model):
            raise BadDataError(fn, f"expected an nnc.Model, got {type(model).__name__}")
        if not model.finished or model.invalid or model.closed:
            raise BadStateError(fn, "the referenced model is not finished")
        op = self._operand(fn, index)
        if op.type != T.MODEL:
            raise BadDataError(fn, f"operand {index} is {op.type.name}, not MODEL")
        op.subgraph, op.lifetime, op.value, op.memory = model, Lifetime.SUBGRAPH, None, None

    @ndk("ANeuralNetworksModel_setOperandSymmPerChannelQuantParams")
    def set_operand_symm_per_channel_quant_params(self, index: int, scales: Sequence[float], channel_dim: int) -> None:
        """ANeuralNetworksModel_setOperandSymmPerChannelQuantParams.

        The NDK's params struct is spread over ``scales`` and ``channel_dim``;
        ``scales=None`` is the struct's NULL ``scales`` pointer, which Android
        reports as BAD_DATA."""
        fn = "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams"
        self._mutable(fn)
        op = self._operand(fn, index)
        if op.type != T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            raise BadDataError(fn, f"operand {index} is {op.type.name}, not TENSOR_QUANT8_SYMM_PER_CHANNEL")
        cd = int_arg(fn, channel_dim, "channel_dim")
        if op.dims is None or not 0 <= cd < len(op.dims):
            rank = "unknown" if op.dims is None else len(op.dims)
            raise BadDataError(fn, f"channel_dim {cd} out of range for rank {rank}")
        if scales is None:
            raise BadDataError(fn, "scales is null")
        try:
            values = tuple(float(s) for s in scales)
        except (TypeError, ValueError):
            raise BadDataError(fn, f"scales must be a sequence of numbers, got {scales!r}") from None
        n = op.dims[cd]
        if n == 0:
            raise BadDataError(fn, f"channel dimension {cd} is unspecified (0)")
        if len(values) != n:
            raise BadDataError(fn, f"{len(values)} scales for a channel dimension of {n}")
        if any(not s > 0 for s in values):
            raise BadDataError(fn, "every scale must be > 0")
        op.channel_quant = (values, cd)

    @ndk("ANeuralNetworksModel_addOperation")
    def add_operation(self, type: OperationType | int, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        """ANeuralNetworksModel_addOperation.

        ``None`` for ``inputs`` or ``outputs`` is UNEXPECTED_NULL; an empty list
        is a count of 0, judged by the operation's signature.  The
        signature is checked now, as far as nnc's rules can with what is
        known: counts, operand types and ranks, output types, and for IF/WHILE
        the referenced models.  What needs constants that are not set
        yet, and output shapes, is checked by finish()."""
        fn = "ANeuralNetworksModel_addOperation"
        if inputs is None or outputs is None:
            raise UnexpectedNullError(fn, "inputs and outputs must not be null")
        self._mutable(fn)
        t = enum_arg(fn, OperationType, type, "operation type")
        ins = self._indices(fn, inputs, "inputs")
        outs = self._indices(fn, outputs, "outputs")
        spec = SPECS[t]
        if not spec.accepts_input_count(len(ins)):
            raise BadDataError(fn, f"{t.name} does not take {len(ins)} inputs")
        if not spec.accepts_output_count(len(outs)):
            raise BadDataError(fn, f"{t.name} does not produce {len(outs)} outputs")
        if t == OperationType.IF:
            self._check_if(fn, ins, outs)
        elif t == OperationType.WHILE:
            self._check_while(fn, ins, outs)
        else:
            self._check_signature(fn, Operation(t, ins, outs))
        self.operations.append(Operation(t, ins, outs))

    def _check_signature(self, fn: str, op: Operation) -> None:
        """Run the operation's rule on what is known now: an invalid operand
        type, rank or count is BAD_DATA; a rule that needs a constant not set
        yet (Unsupported) leaves the judgement to finish()."""
        call = self.call_for(len(self.operations), op)
        try:
            inferred = infer(call)
        except RuleError as e:
            raise BadDataError(fn, f"{call.type.name}: {e}") from None
        except (Unsupported, ValueError, IndexError, TypeError):
            return  # judged with every constant known, at finish
        check_outputs(call, inferred, fn, shapes=False)

    def _subgraph(self, fn: str, index: int, what: str) -> Model:
        op = self.operands[index]
        if op.type != T.MODEL or op.lifetime != Lifetime.SUBGRAPH or op.subgraph is None:
            raise BadDataError(
                fn, f"{what} (operand {index}) must be a MODEL operand set with set_operand_value_from_model"
            )
        return op.subgraph

    def _check_pairs(self, fn: str, what: str, pairs) -> None:
        for inner, outer, label in pairs:
            diff = _compatible(inner, outer)
            if diff is not None:
                raise BadDataError(fn, f"{what}: {label} is not compatible ({diff})")

    @staticmethod
    def _check_count(fn: str, what: str, inner: int, leading: int, outer: int, op: str) -> None:
        """The operation has ``leading`` + the referenced model's inputs."""
        if outer != leading + inner:
            raise BadDataError(fn, f"{what} has {inner} inputs, so {op} needs {leading + inner} inputs, got {outer}")

    @staticmethod
    def _condition_operand(fn: str, op: Operand, what: str) -> None:
        if op.type != T.TENSOR_BOOL8 or op.dims != (1,):
            dims = "?" if op.dims is None else list(op.dims)
            raise BadDataError(fn, f"{what} must be TENSOR_BOOL8 of shape [1], got {op.type.name}{dims}")

    def _check_if(self, fn: str, ins: list[int], outs: list[int]) -> None:
        """Android's validateIfOperation."""
        self._condition_operand(fn, self.operands[ins[0]], "IF condition (input 0)")
        for pos, branch in ((1, "then"), (2, "else")):
            sub = self._subgraph(fn, ins[pos], f"IF {branch} model")
            what = f"IF {branch} model"
            self._check_count(fn, what, len(sub.inputs), 3, len(ins), "IF")
            if len(outs) != len(sub.outputs):
                raise BadDataError(fn, f"{what} has {len(sub.outputs)} outputs, IF has {len(outs)}")
            self._check_pairs(fn, what, [
                *((sub.operands[j], self.operands[ins[3 + i]], f"input {3 + i}") for i, j in enumerate(sub.inputs)),
                *((sub.operands[j], self.operands[outs[i]], f"output {i}") for i, j in enumerate(sub.outputs)),
            ])  # fmt: skip

    def _check_while(self, fn: str, ins: list[int], outs: list[int]) -> None:
        """Android's validateWhileOperation: m = len(outs) input-output
        operands, k state-only and n input-only ones."""
        cond = self._subgraph(fn, ins[0], "WHILE condition model")
        self._check_count(fn, "WHILE condition model", len(cond.inputs), 2, len(ins), "WHILE")
        if len(cond.outputs) != 1:
            raise BadDataError(fn, f"WHILE condition model must have 1 output, has {len(cond.outputs)}")
        self._check_pairs(fn, "WHILE condition model", [
            (cond.operands[j], self.operands[ins[2 + i]], f"input {2 + i}") for i, j in enumerate(cond.inputs)
        ])  # fmt: skip
        self._condition_operand(fn, cond.operands[cond.outputs[0]], "WHILE condition model output")
        body = self._subgraph(fn, ins[1], "WHILE body model")
        self._check_count(fn, "WHILE body model", len(body.inputs), 2, len(ins), "WHILE")
        if not len(outs) <= len(body.outputs) <= len(body.inputs):
            raise BadDataError(
                fn, f"WHILE body model has {len(body.inputs)} inputs and {len(body.outputs)} outputs; "
                f"WHILE has {len(outs)} outputs (need outputs <= body outputs <= body inputs)"
            )  # fmt: skip
        self._check_pairs(fn, "WHILE body model", [
            *((body.operands[j], self.operands[ins[2 + i]], f"input {2 + i}") for i, j in enumerate(body.inputs)),
            *((body.operands[body.outputs[i]], self.operands[o], f"output {i}") for i, o in enumerate(outs)),
            *((body.operands[body.inputs[i]], body.operands[body.outputs[i]], f"its input/output {i}")
              for i in range(len(body.outputs))),
        ])  # fmt: skip

    @ndk("ANeuralNetworksModel_identifyInputsAndOutputs")
    def identify_inputs_and_outputs(self, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        """ANeuralNetworksModel_identifyInputsAndOutputs.

        Every listed operand must still be a plain temporary: one that has a
        value, is omitted, is a subgraph reference, or is already an input or
        output (listed twice, in both lists, or in an earlier call) is
        BAD_DATA, and a failed call changes nothing."""
        fn = "ANeuralNetworksModel_identifyInputsAndOutputs"
        if inputs is None or outputs is None:
            raise UnexpectedNullError(fn, "inputs and outputs must not be null")
        self._mutable(fn)
        ins = self._indices(fn, inputs, "inputs")
        outs = self._indices(fn, outputs, "outputs")
        roles: dict[int, str] = {}
        for role, indices in (("input", ins), ("output", outs)):
            for i in indices:
                if i in roles:
                    what = "twice as an input" if roles[i] == role == "input" else (
                        "twice as an output" if roles[i] == role else "as both an input and an output")
                    raise BadDataError(fn, f"operand {i} is listed {what}")
                lifetime = self.operands[i].lifetime
                if lifetime != Lifetime.TEMPORARY_VARIABLE:
                    raise BadDataError(
                        fn, f"operand {i} cannot be a model {role}: it is a {lifetime.name.lower()} "
                        "(a constant, an omitted value, a subgraph, or already an input or output)"
                    )
                roles[i] = role
        for i in ins:
            self.operands[i].lifetime = Lifetime.SUBGRAPH_INPUT
        for i in outs:
            self.operands[i].lifetime = Lifetime.SUBGRAPH_OUTPUT
        self.inputs, self.outputs = ins, outs
        self._identified = True

    @ndk("ANeuralNetworksModel_relaxComputationFloat32toFloat16")
    def relax_computation_float32_to_float16(self, allow: bool) -> None:
        """ANeuralNetworksModel_relaxComputationFloat32toFloat16 (``allow``: a
        bool or an int, C's bool; anything else, an array say, is BAD_DATA)."""
        fn = "ANeuralNetworksModel_relaxComputationFloat32toFloat16"
        self._mutable(fn)
        if not isinstance(allow, bool | np.bool_) and not is_int(allow):
            raise BadDataError(fn, f"allow must be a bool, got {type(allow).__name__}")
        self.relaxed = bool(allow)

    @ndk("ANeuralNetworksModel_finish")
    def finish(self) -> None:
        """ANeuralNetworksModel_finish: validate and freeze the model.

        A second call is BAD_STATE.  A validation failure is BAD_DATA and
        leaves the model INVALID for good; so does a constant that can
        no longer be read from its memory (closed: BAD_STATE, unmappable:
        UNMAPPABLE, as the memory reports it)."""
        fn = "ANeuralNetworksModel_finish"
        if self.finished:
            raise BadStateError(fn, "finish was already called")
        if self._invalid is not None:
            raise BadStateError(fn, f"the model is invalid (an earlier finish failed: {self._invalid})")
        added = list(self.operations)
        try:
            self._read_memory_values(fn)
            validate_graph(self, fn)
        except NNError as e:
            self._invalid = e.message
            raise
        self.operations_as_added = added
        self.finished = True

    def _read_memory_values(self, fn: str) -> None:
        """Snapshot every value set from a memory (see set_operand_value_from_memory)."""
        for k, op in enumerate(self.operands):
            if op.memory is None:
                continue
            memory, offset, length = op.memory
            try:
                raw = bytes(memory.view(offset, length, fn))
            except NNError as e:  # e.g. the memory was closed, or cannot be mapped: same code, finish's name
                raise error_for(e.code, fn, f"operand {k}: cannot read its value from memory: {e.message}") from e
            if len(raw) != length:
                raise BadDataError(fn, f"operand {k}: memory gave {len(raw)} bytes, expected {length}")
            op.value = np.frombuffer(raw, dtype=dtype_of(op.type)).copy().reshape(op.dims or ())
            op.memory = None

    @ndk("ANeuralNetworksModel_getSupportedOperationsForDevices")
    def get_supported_operations_for_devices(self, devices) -> list[bool]:
        """ANeuralNetworksModel_getSupportedOperationsForDevices.

        One flag per operation, in the order the operations were added (not
        execution order): True when at least one of ``devices`` can run it.
        nnc answers from its own tables, exactly as
        ``Compilation.finish`` will decide: the operation has a lowering for
        these operand types and parameters.  The model must be finished and
        valid; the device list is checked as the NDK checks it (None or a
        None entry: UNEXPECTED_NULL; empty or a device twice: BAD_DATA)."""
        fn = "ANeuralNetworksModel_getSupportedOperationsForDevices"
        items = device_list(fn, devices)
        if self.closed or not self.finished or self._invalid is not None:
            raise BadStateError(fn, "the model is not finished or is invalid")
        devs = check_device_entries(fn, items)
        return [
            any(d.unsupported_reason(self.call_for(k, op)) is None for d in devs)
            for k, op in enumerate(self.operations_as_added)
        ]

    # -- context manager / lifetime ----------------------------------------------------------
    @ndk("ANeuralNetworksModel_free", free=True)
    def close(self) -> None:
        """ANeuralNetworksModel_free.  Compilations keep their own reference
        to the model, so closing never affects them; later calls on this
        object are BAD_STATE.  Closing twice is harmless."""
        self._closed = True

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- files ---------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the model in nnc's model file format (see nnc.modelfile)."""
        modelfile.save(self, path)

    @staticmethod
    def load(source) -> Model:
        """Read, validate and finish a model file: a path or a binary file
        object (read, never closed), not a bare file descriptor (see
        :func:`nnc.modelfile.read_identified_source`); BadDataError if corrupt."""
        return modelfile.load(source, Model)

    # -- conveniences ------------------------------------------------------------------------
    @property
    def input_details(self) -> list[TensorDetails]:
        """Name, shape, dtype, operand type and quantisation of each input
        (:mod:`nnc.details`).  Not ``inputs``: that is the NDK's list of
        operand indices (identify_inputs_and_outputs)."""
        return tensor_details(self, "input")

    @property
    def output_details(self) -> list[TensorDetails]:
        """As :attr:`input_details`, for the outputs."""
        return tensor_details(self, "output")

    def call_for(self, index: int, op: Operation) -> OpCall:
        return OpCall(
            OperationType(op.type),
            [self.operands[i].info() for i in op.inputs],
            [self.operands[i].info(with_value=False) for i in op.outputs],
            index,
        )


def validate_graph(model: Model, fn: str) -> None:
    """Graph rules of Model.finish; sorts operations
    topologically in place."""
    if not model.operations:
        raise BadDataError(fn, "the model has no operations")
    if not model._identified or not model.inputs and not model.outputs:
        raise BadDataError(fn, "inputs and outputs were not identified")
    if not model.outputs:
        raise BadDataError(fn, "the model has no outputs")
    if not model.inputs:
        raise BadDataError(fn, "the model has no inputs")
    for role, indices, lifetime in (("input", model.inputs, Lifetime.SUBGRAPH_INPUT),
                                    ("output", model.outputs, Lifetime.SUBGRAPH_OUTPUT)):  # fmt: skip
        for i in indices:
            if model.operands[i].lifetime != lifetime:
                raise BadDataError(fn, f"model {role} operand {i} was given a value after it was identified")
    for i, operand in enumerate(model.operands):
        if operand.type == T.TENSOR_QUANT8_SYMM_PER_CHANNEL and operand.channel_quant is None:
            raise BadDataError(fn, f"operand {i} is TENSOR_QUANT8_SYMM_PER_CHANNEL but has no per-channel parameters")
    writer: dict[int, int] = {}
    for k, op in enumerate(model.operations):
        for o in op.outputs:
            lt = model.operands[o].lifetime
            if lt not in (Lifetime.TEMPORARY_VARIABLE, Lifetime.SUBGRAPH_OUTPUT):
                raise BadDataError(fn, f"operation {k} ({OperationType(op.type).name}) writes operand {o}, "
                                       f"which is a {lt.name.lower()}")  # fmt: skip
            if o in writer:
                raise BadDataError(fn, f"operand {o} is written by operations {writer[o]} and {k}")
            writer[o] = k
    for i, operand in enumerate(model.operands):
        if operand.lifetime in (Lifetime.TEMPORARY_VARIABLE, Lifetime.SUBGRAPH_OUTPUT) and i not in writer:
            used = any(i in op.inputs for op in model.operations) or i in model.outputs
            raise BadDataError(fn, f"operand {i} is {'read but ' if used else ''}never written")
    # Topological sort (Kahn), stable in the given order.
    order = _toposort(model, writer, fn)
    model.operations = [model.operations[k] for k in order]
    # Per-operation rules: types, ranks, shapes.
    for k, op in enumerate(model.operations):
        call = model.call_for(k, op)
        try:
            inferred = infer(call)
        except Unsupported:
            continue  # valid-looking; whether nnc can run it is the compiler's question
        except RuleError as e:
            raise BadDataError(fn, f"operation {k} ({call.type.name}): {e}") from None
        check_outputs(call, inferred, fn)


def check_outputs(call: OpCall, inferred: list[OperandInfo], fn: str, shapes: bool = True) -> None:
    """Declared outputs must agree with what the rule inferred (their types;
    with ``shapes`` also their ranks and known dimensions)."""
    where = f"operation {call.index} ({call.type.name})"
    if len(inferred) != len(call.outputs):
        raise BadDataError(fn, f"{where}: expected {len(inferred)} outputs")
    for j, (decl, inf) in enumerate(zip(call.outputs, inferred)):
        what = f"{where} output {j}"
        if decl.type != inf.type:
            raise BadDataError(fn, f"{what}: type {decl.type.name}, expected {inf.type.name}")
        if shapes and decl.dims is not None and inf.dims is not None:
            if len(decl.dims) != len(inf.dims):
                raise BadDataError(fn, f"{what}: rank {len(decl.dims)}, expected {len(inf.dims)}")
            try:
                unify_bounded(decl.dims, inf.dims, inf.dynamic)
            except DimensionMismatch:
                raise BadDataError(fn, f"{what}: dimensions {list(decl.dims)}, expected {list(inf.dims)}") from None


def _toposort(model: Model, writer: dict[int, int], fn: str) -> list[int]:
    n = len(model.operations)
    deps: list[set[int]] = [set() for _ in range(n)]
    users: list[list[int]] = [[] for _ in range(n)]
    for k, op in enumerate(model.operations):
        for i in op.inputs:
            w = writer.get(i)
            if w is not None and w not in deps[k]:
                if w == k:
                    raise BadDataError(fn, f"operation {k} reads its own output")
                deps[k].add(w)
                users[w].append(k)
    ready = [k for k in range(n) if not deps[k]]
    order: list[int] = []
    import heapq

    heapq.heapify(ready)
    remaining = [len(d) for d in deps]
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for u in users[k]:
            remaining[u] -= 1
            if remaining[u] == 0:
                heapq.heappush(ready, u)
    if len(order) != n:
        raise BadDataError(fn, "the operations form a cycle")
    return order
