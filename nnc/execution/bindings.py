"""An execution's argument table: what each model input and output is bound to.

Every check of a set call lives here -- index, dimensions against the model,
dtype, exact byte size (or at least it, with padding), a memory's own rules --
so a computation only ever reads bindings that fit the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nnc.compilation import Compilation
from nnc.errors import BadDataError, BadStateError
from nnc.memory import INPUT, OUTPUT, Memory, fully_known
from nnc.model import Operand
from nnc.operand_types import OperandInfo, dtype_of, is_int

UINT32_MAX = 0xFFFFFFFF


@dataclass
class Binding:
    """One bound input or output.

    ``kind``: "buffer" (a numpy array), "memory" (a client Memory region),
    "device" (a device Memory) or "omitted".  ``dims``: the execution-time
    dimensions (the model's, refined by the set call).  ``array``: for inputs
    the data in its shape, for outputs a flat view of the whole buffer."""

    kind: str
    dims: tuple[int, ...] | None
    array: np.ndarray | None = None
    memory: Memory | None = None


def product(dims) -> int:
    return math.prod(dims) if dims else 1


def resolve_dims(
    fn: str, operand: Operand, dims, what: str, allow_unspecified: bool = True
) -> tuple[int, ...] | None:
    """NNAPI's checkDimensionInfo: the execution-time dimensions ``dims``
    (None: the model's) against the model operand."""
    if dims is None:
        return operand.dims
    try:
        dims = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        raise BadDataError(fn, f"{what}: dimensions must be integers") from None
    if operand.type.is_scalar:
        if dims:
            raise BadDataError(fn, f"{what}: a scalar cannot have dimensions")
        return ()
    if any(d < 0 or d > UINT32_MAX for d in dims):
        raise BadDataError(fn, f"{what}: invalid dimensions {list(dims)}")
    if not dims:  # rank 0 for a tensor: an unknown rank
        if operand.dims is not None:
            raise BadDataError(fn, f"{what}: rank unknown, the model's is {len(operand.dims)}")
        if not allow_unspecified:
            raise BadDataError(fn, f"{what}: the rank must be given")
        return None
    if not allow_unspecified and any(d == 0 for d in dims):
        raise BadDataError(fn, f"{what}: dimensions {list(dims)} are not fully specified")
    if operand.dims is not None:
        if len(dims) != len(operand.dims):
            raise BadDataError(fn, f"{what}: rank {len(dims)} differs from the model's {len(operand.dims)}")
        for m, d in zip(operand.dims, dims):
            if m and d != m:
                raise BadDataError(
                    fn, f"{what}: dimensions {list(dims)} conflict with the model's {list(operand.dims)}"
                )
    if product(d for d in dims if d) * dtype_of(operand.type).itemsize > UINT32_MAX:
        raise BadDataError(fn, f"{what}: the byte size of dimensions {list(dims)} overflows uint32")
    return dims


class Bindings:
    """The inputs and outputs bound to one execution, by model input/output
    index.  The execution checks its state and holds its lock around every
    call that binds."""

    def __init__(self, compilation: Compilation):
        self.compilation = compilation
        self.model = compilation.model
        self.inputs: dict[int, Binding] = {}
        self.outputs: dict[int, Binding] = {}
        #: buffers and regions may be longer than their data
        self.padding = False
        #: whether anything was bound (padding can no longer be enabled)
        self.bound = False
        #: (index, memory) of the outputs bound to device memories, which a computation initialises
        self.device_outputs: list[tuple[int, Memory]] = []

    def clear(self) -> None:
        self.inputs.clear()
        self.outputs.clear()
        self.device_outputs.clear()

    # -- binding ---------------------------------------------------------------------------------------
    def _operand(self, fn: str, index: int, roles: list[int], what: str) -> Operand:
        if not is_int(index) or not 0 <= index < len(roles):
            raise BadDataError(fn, f"{what} index {index} out of range [0, {len(roles)})")
        return self.model.operands[roles[int(index)]]

    def _check_length(self, fn: str, what: str, have: int, dims: tuple[int, ...] | None, itemsize: int) -> None:
        """The exact size, or at least it with padding enabled."""
        if have == 0:
            raise BadDataError(fn, f"{what}: a buffer of length 0 (pass None to omit an optional argument)")
        if not fully_known(dims):
            return  # an output shaped by the computation: any size now
        need = product(dims) * itemsize
        if have < need or (have != need and not self.padding):
            padding = " (padding is enabled)" if self.padding else ""
            raise BadDataError(
                fn, f"{what}: {have} bytes for dimensions {list(dims or ())}, which need {need}{padding}"
            )

    def _bind(self, fn: str, table: dict[int, Binding], index: int, binding: Binding) -> None:
        if int(index) in table:
            raise BadStateError(fn, f"argument {index} is already set")
        table[int(index)] = binding
        self.bound = True

    def set_input(self, fn: str, index: int, array, dimensions) -> None:
        """setInput: ``array`` (None: omitted) as input ``index``."""
        operand = self._operand(fn, index, self.model.inputs, "input")
        what = f"input {index}"
        dims = resolve_dims(fn, operand, dimensions, what, allow_unspecified=array is None)
        if array is None:
            self._bind(fn, self.inputs, index, Binding("omitted", dims))
            return
        arr = self._array(fn, operand, array, what)
        if dimensions is None and not fully_known(dims):
            shape = arr.shape if operand.type.is_tensor else ()
            dims = resolve_dims(fn, operand, shape, what, allow_unspecified=False)
        if int(index) in self.inputs:
            raise BadStateError(fn, f"input {index} is already set")
        self._check_length(fn, what, arr.nbytes, dims, arr.itemsize)
        data = np.ascontiguousarray(arr).reshape(-1)[: product(dims)].reshape(dims)
        self._bind(fn, self.inputs, index, Binding("buffer", dims, data))

    def set_output(self, fn: str, index: int, array, dimensions) -> None:
        """setOutput: ``array`` (None: omitted) as output ``index``."""
        operand = self._operand(fn, index, self.model.outputs, "output")
        what = f"output {index}"
        dims = resolve_dims(fn, operand, dimensions, what)
        if array is None:
            self._bind(fn, self.outputs, index, Binding("omitted", dims))
            return
        if not isinstance(array, np.ndarray):
            raise BadDataError(fn, f"{what}: expected a numpy array, got {type(array).__name__}")
        arr = self._array(fn, operand, array, what)
        if not arr.flags.writeable or not arr.flags.c_contiguous:
            raise BadDataError(fn, f"{what}: array must be writeable and C-contiguous")
        if int(index) in self.outputs:
            raise BadStateError(fn, f"output {index} is already set")
        self._check_length(fn, what, arr.nbytes, dims, arr.itemsize)
        self._bind(fn, self.outputs, index, Binding("buffer", dims, arr.reshape(-1)))

    def set_from_memory(self, fn: str, io: str, index, memory, offset, length, dimensions) -> None:
        """setInputFromMemory / setOutputFromMemory after the NULL and state
        checks, in the runtime's order: index, dimensions, the memory's own
        rules (range, roles), already set, length."""
        roles = self.model.inputs if io == INPUT else self.model.outputs
        operand = self._operand(fn, index, roles, io)
        what = f"{io} {index}"
        dims = resolve_dims(fn, operand, dimensions, what, allow_unspecified=io == OUTPUT)
        if io == INPUT and not fully_known(dims):
            raise BadDataError(fn, f"{what}: dimensions {dims} are not fully specified")
        if not isinstance(memory, Memory):
            raise BadDataError(fn, f"expected an nnc.Memory, got {type(memory).__name__}")
        memory.check_open(fn)
        table = self.inputs if io == INPUT else self.outputs
        dtype = dtype_of(operand.type)
        if memory.kind == "device":
            memory.check_role(fn, self.compilation, io, int(index), offset, length, dims)
            if int(index) in table:
                raise BadStateError(fn, f"{what} is already set")
            self._bind(fn, table, index, Binding("device", dims, None, memory))
            if io == OUTPUT:
                self.device_outputs.append((int(index), memory))
            return
        view = memory.region_array(fn, io, offset, length, dtype)
        if int(index) in table:
            raise BadStateError(fn, f"{what} is already set")
        self._check_length(fn, what, int(length), dims, dtype.itemsize)
        if io == INPUT:
            view = view[: product(dims)].reshape(dims)
        self._bind(fn, table, index, Binding("memory", dims, view, memory))

    @staticmethod
    def _array(fn: str, operand: Operand, array, what: str) -> np.ndarray:
        dtype = dtype_of(operand.type)
        if isinstance(array, np.ndarray):
            arr = array
        else:
            # Numbers or (nested) sequences of numbers; anything else (str,
            # bytes, dict, objects) is BAD_DATA, never a numpy exception.
            try:
                arr = np.asarray(array)
                if arr.dtype.kind not in "biuf":
                    raise TypeError(f"not numeric ({type(array).__name__})")
                if arr.dtype != dtype:
                    arr = arr.astype(dtype)
            except (TypeError, ValueError, OverflowError) as e:
                raise BadDataError(fn, f"{what}: expected a numpy array or numbers: {e}") from None
        if arr.dtype != dtype:
            raise BadDataError(fn, f"{what}: dtype {arr.dtype} does not match {operand.type.name} ({dtype})")
        if arr.nbytes > UINT32_MAX:
            raise BadDataError(fn, f"{what}: buffer larger than 4 GiB")
        return arr

    # -- checks when a computation starts ----------------------------------------------------------
    def check_complete(self, fn: str) -> None:
        """Every argument bound (omitted counts), and device-memory inputs
        initialised with the shape of their last producer."""
        arguments = (("input", self.model.inputs, self.inputs), ("output", self.model.outputs, self.outputs))
        for what, roles, table in arguments:
            for k in range(len(roles)):
                if k not in table:
                    raise BadDataError(fn, f"{what} {k} is not set")
        for b in self.inputs.values():
            if b.kind == "device":
                assert b.memory is not None and b.dims is not None
                b.memory.input_data(fn, b.dims)

    def check_fenced_outputs(self, fn: str) -> None:
        """A fenced computation cannot report shapes: outputs must be fully
        specified by the model and the set call."""
        for k in range(len(self.model.outputs)):
            if not fully_known(self.outputs[k].dims):
                raise BadDataError(fn, f"output {k} has dimensions {self.outputs[k].dims} that are not fully "
                                       "specified; fenced computations cannot report dynamic shapes")  # fmt: skip

    # -- reading the inputs ------------------------------------------------------------------------
    def input_infos(self, fn: str) -> list[OperandInfo]:
        """The inputs as the compilation selects a variant by: their types and
        dimensions, and the values of the inputs it specialises on."""
        infos = []
        for k, idx in enumerate(self.model.inputs):
            b = self.inputs[k]
            operand = self.model.operands[idx]
            if b.kind == "omitted":
                infos.append(OperandInfo(operand.type, b.dims, operand.scale, operand.zero_point,
                                         operand.channel_quant, omitted=True))  # fmt: skip
                continue
            value = self.input_array(b, operand, fn) if k in self.compilation.specialised else None
            infos.append(OperandInfo(operand.type, b.dims, operand.scale, operand.zero_point,
                                     operand.channel_quant, value))  # fmt: skip
        return infos

    @staticmethod
    def input_array(b: Binding, operand: Operand, fn: str) -> np.ndarray:
        """An input's data in its shape (a device memory's as last written)."""
        if b.kind == "device":
            assert b.memory is not None and b.dims is not None
            raw = b.memory.input_data(fn, b.dims)
            return raw.view(dtype_of(operand.type)).reshape(b.dims)
        assert b.array is not None
        return b.array
