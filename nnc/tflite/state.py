"""The conversion context: the NNAPI model being built, TFLite tensor ->
NNAPI operand (with the type and quantisation mapping), state tensors as
extra inputs/outputs, and :class:`_Call`, what a converter sees of one
operator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from nnc.enums import OperandType, OperationType
from nnc.model import Model
from nnc.tflite.reader import _TFL_TYPE_NAMES, _options, _Tensor

T = OperandType


class _Unsupported(Exception):
    """Raised by a converter: this operator (with these options) has no mapping."""


@dataclass
class _Importer:
    model: Model
    tensors: list[_Tensor]
    feature_level: int
    #: TFLite tensor index -> NNAPI operand index
    operands: dict[int, int] = field(default_factory=dict)
    #: extra model inputs/outputs for variable tensors: (operand, name)
    state_inputs: list[tuple[int, str]] = field(default_factory=list)
    state_outputs: list[tuple[int, str]] = field(default_factory=list)
    #: NNAPI operation k -> (TFLite operator index, operator name)
    op_index: list[tuple[int, str]] = field(default_factory=list)
    #: TFLite operator index -> how it was imported without an operation (folded)
    notes: dict[int, str] = field(default_factory=dict)
    #: the subgraph's output tensors (never folded into constants)
    graph_outputs: frozenset[int] = frozenset()
    #: (subgraph index, what the caller calls it) -> that subgraph as a
    #: finished model, for WHILE and IF (raises _Unsupported)
    subgraph: Callable[[int, str], Model] | None = None

    # operand creation -----------------------------------------------------------------------
    def nn_type(self, t: _Tensor) -> tuple[OperandType, float, int, np.ndarray | None]:
        """(NNAPI type, scale, zero point, converted value) of a TFLite tensor."""
        scale = float(t.scales[0]) if t.quantized else 0.0
        zp = int(t.zero_points[0]) if t.zero_points.size else 0
        data = t.data
        match t.tfl_type:
            case 0:
                return T.TENSOR_FLOAT32, 0.0, 0, data
            case 1:
                return T.TENSOR_FLOAT16, 0.0, 0, data
            case 2:
                return T.TENSOR_INT32, scale, 0, data
            case 4:
                return T.TENSOR_INT32, 0.0, 0, None if data is None else _narrowed(t.name, data)
            case 6:
                return T.TENSOR_BOOL8, 0.0, 0, data
            case 3:
                if not t.quantized:
                    raise _Unsupported(f"tensor '{t.name}' is uint8 without quantisation parameters")
                return T.TENSOR_QUANT8_ASYMM, scale, zp, data
            case 7:
                if not t.quantized or zp != 0:
                    raise _Unsupported(f"tensor '{t.name}' is int16 but not symmetric-quantised")
                return T.TENSOR_QUANT16_SYMM, scale, 0, data
            case 9:
                if not t.quantized:
                    raise _Unsupported(f"tensor '{t.name}' is int8 without quantisation parameters")
                if t.scales.size > 1:
                    return T.TENSOR_QUANT8_SYMM_PER_CHANNEL, 0.0, 0, data
                if self.feature_level < 4:
                    shifted = None if data is None else (data.astype(np.int16) + 128).astype(np.uint8)
                    return T.TENSOR_QUANT8_ASYMM, scale, zp + 128, shifted
                return T.TENSOR_QUANT8_ASYMM_SIGNED, scale, zp, data
        raise _Unsupported(f"tensor '{t.name}' has type {_TFL_TYPE_NAMES.get(t.tfl_type, t.tfl_type)}, "
                           "which NNAPI has no operand type for")  # fmt: skip

    def operand(self, tensor_index: int, *, bias_of: tuple[int, int] | None = None) -> int:
        """The NNAPI operand for a TFLite tensor (created on first use).

        ``bias_of`` = (input tensor, filter tensor) gives a quantised bias the
        scale NNAPI expects (input scale x filter scale; 0 for per-channel)."""
        if tensor_index in self.operands:
            return self.operands[tensor_index]
        t = self.tensors[tensor_index]
        nn_t, scale, zp, value = self.nn_type(t)
        if bias_of is not None and nn_t == T.TENSOR_INT32:
            inp, flt = (self.tensors[i] for i in bias_of)
            scale = 0.0 if flt.scales.size > 1 else float(inp.scales[0]) * float(flt.scales[0]) if inp.quantized else 0.0
        # A rank-0 tensor (a scalar factor, a MEAN axis, a loop counter) is a
        # one-element tensor: NNAPI's dims () mean "rank unknown", [1]
        # broadcasts alike, and a WHILE condition is TENSOR_BOOL8 [1].
        shape = t.shape or (1,)
        idx = self.model.add_operand(nn_t, shape, scale, zp)
        if nn_t == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            self.model.set_operand_symm_per_channel_quant_params(idx, [float(s) for s in t.scales], t.quantized_dim)
        if value is not None:
            self.model.set_operand_value(idx, value.reshape(shape))
        self.operands[tensor_index] = idx
        return idx

    def temp_like(self, tensor_index: int, shape: tuple[int, ...]) -> int:
        """An intermediate operand of a decomposition: the type and quantisation
        of a TFLite tensor, another shape."""
        nn_t, scale, zp, _ = self.nn_type(self.tensors[tensor_index])
        return self.model.add_operand(nn_t, shape, scale, zp)

    def constant_as(self, tensor_index: int, shape: tuple[int, ...]) -> int:
        """A constant TFLite tensor as a new operand of another shape (same
        type and per-channel scales; the values reshaped, or broadcast to
        ``shape``: e.g. an FC filter as a 1x1 conv's, a BATCH_MATMUL
        operand repeated over the batch)."""
        t = self.tensors[tensor_index]
        nn_t, scale, zp, value = self.nn_type(t)
        if value is None:
            raise _Unsupported(f"tensor '{t.name}' must be constant")
        idx = self.model.add_operand(nn_t, shape, scale, zp)
        if nn_t == T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            self.model.set_operand_symm_per_channel_quant_params(idx, [float(s) for s in t.scales], t.quantized_dim)
        fits = value.size == int(np.prod(shape))
        self.model.set_operand_value(idx, value.reshape(shape) if fits else np.broadcast_to(value, shape).copy())
        return idx

    def new_like(self, tensor_index: int) -> int:
        """A fresh operand of the same type as a TFLite tensor (e.g. a state output)."""
        t = self.tensors[tensor_index]
        nn_t, scale, zp, _ = self.nn_type(t)
        return self.model.add_operand(nn_t, t.shape or (1,), scale, zp)

    def reshaped(self, value: int, like: int, shape: Sequence[int]) -> int:
        """A RESHAPE of operand ``value`` to ``shape``: a new operand of TFLite
        tensor ``like``'s type and quantisation."""
        out = self.temp_like(like, tuple(shape))
        self.model.add_operation(OperationType.RESHAPE, [value, self.const(np.array(shape, np.int32))], [out])
        return out

    def copy_of(self, tensor_index: int) -> int:
        """A new operand holding a TFLite tensor's value (a RESHAPE to its
        own shape: NNAPI has no identity operation)."""
        return self.reshaped(self.operand(tensor_index), tensor_index, self.tensors[tensor_index].shape or (1,))

    def model_operand(self, subgraph_index: int, role: str) -> int:
        """A MODEL operand referencing subgraph ``subgraph_index``."""
        if self.subgraph is None:
            raise _Unsupported("control flow is not available here")
        idx = self.model.add_operand(T.MODEL)
        self.model.set_operand_value_from_model(idx, self.subgraph(subgraph_index, role))
        return idx

    def state_input(self, tensor_index: int, name: str) -> int:
        """A variable tensor read by an operation: an extra model input (zero at first)."""
        if tensor_index not in self.operands:
            idx = self.new_like(tensor_index)
            self.operands[tensor_index] = idx
            self.state_inputs.append((idx, name))
        return self.operands[tensor_index]

    def state_output(self, tensor_index: int, name: str) -> int:
        """The final value of a variable tensor: an extra model output."""
        idx = self.new_like(tensor_index)
        self.state_outputs.append((idx, name + ":out"))
        return idx

    def scalar(self, t: OperandType, value) -> int:
        idx = self.model.add_operand(t)
        self.model.set_operand_value(idx, value)
        return idx

    def int32(self, v: int) -> int:
        return self.scalar(T.INT32, int(v))

    def float32(self, v: float) -> int:
        return self.scalar(T.FLOAT32, float(v))

    def bool8(self, v: bool) -> int:
        return self.scalar(T.BOOL, bool(v))

    def const(self, value: np.ndarray, t: OperandType = T.TENSOR_INT32) -> int:
        idx = self.model.add_operand(t, value.shape)
        self.model.set_operand_value(idx, value)
        return idx

    def omitted(self, t: OperandType = T.TENSOR_FLOAT32) -> int:
        idx = self.model.add_operand(t)
        self.model.set_operand_value(idx, None)
        return idx

    def dequantize_hybrid(self, ins: Sequence[int], outs: Sequence[int]) -> list[str]:
        """Dynamic-range ("hybrid") operators: a float32 result from int8 or
        uint8 constant weights (TFLite's default post-training quantisation).
        LiteRT quantises the activations on the fly, which NNAPI has no
        operation for; the weights are dequantised here once instead
        (``scale x (q - zero_point)``, per channel), so the operator is the
        float32 one: the computation the quantised weights stand for.
        Returns the names of the tensors dequantised."""
        if not outs or any(o < 0 or self.tensors[o].tfl_type != 0 for o in outs):
            return []
        done = []
        for i in ins:
            t = self.tensors[i] if i >= 0 else None
            if t is None or t.data is None or t.tfl_type not in (3, 9) or not t.quantized or i in self.operands:
                continue
            self.tensors[i] = dequantized(t)
            done.append(t.name)
        return done

    def constant_value(self, tensor_index: int, what: str) -> np.ndarray:
        data = self.tensors[tensor_index].data
        if data is None:
            raise _Unsupported(f"{what} must be a constant tensor")
        return data


def _narrowed(name: str, data: np.ndarray) -> np.ndarray:
    """An int64 constant as int32 (NNAPI has no 64-bit integer operands),
    when every value fits."""
    info = np.iinfo(np.int32)
    if data.size and (int(data.min()) < info.min or int(data.max()) > info.max):
        raise _Unsupported(f"int64 tensor '{name}' holds values beyond int32 (NNAPI has no 64-bit integers)")
    return data.astype(np.int32)


def dequantized(t: _Tensor) -> _Tensor:
    """A quantised constant as the float32 constant it stands for."""
    assert t.data is not None
    shape = [1] * t.data.ndim
    if t.scales.size > 1:
        shape[t.quantized_dim] = t.scales.size
    scale, zp = t.scales.reshape(shape), (t.zero_points if t.zero_points.size else np.zeros(1, np.int64)).reshape(
        shape if t.zero_points.size > 1 else [1] * t.data.ndim)
    value = ((t.data.astype(np.int64) - zp) * scale).astype(np.float32)
    return replace(t, tfl_type=0, scales=np.zeros(0), zero_points=np.zeros(0, np.int64), data=value)


@dataclass
class _Call:
    """One TFLite operator being converted."""

    imp: _Importer
    index: int  # of the operator in the subgraph
    op: Any
    name: str
    ins: list[int]  # TFLite tensor indices, -1 = absent
    outs: list[int]

    def has(self, k: int) -> bool:
        return k < len(self.ins) and self.ins[k] >= 0

    def input(self, k: int, **kw) -> int:
        if not self.has(k):
            raise _Unsupported(f"input {k} is missing")
        return self.imp.operand(self.ins[k], **kw)

    def output(self, k: int) -> int:
        return self.imp.operand(self.outs[k])

    def tensor(self, k: int) -> _Tensor:
        return self.imp.tensors[self.ins[k]]

    def options(self, cls: str):
        opts = _options(self.op, cls)
        if opts is None:
            raise _Unsupported(f"{cls} missing")
        return opts

    def note(self, text: str) -> None:
        """Say how the operator was imported when it became no operation."""
        self.imp.notes[self.index] = text

    def emit(self, t: OperationType, inputs: list[int], outputs: list[int] | None = None) -> None:
        """Add NNAPI operation ``t`` (default outputs: the operator's)."""
        if outputs is None:
            outputs = [self.output(k) for k in range(len(self.outs))]
        self.imp.model.add_operation(t, inputs, outputs)

    # -- what converters of custom operators (nnc.tflite.register_custom) build with
    def int32(self, value: int) -> int:
        """A constant INT32 scalar operand (an activation code, an axis)."""
        return self.imp.int32(value)

    def float32(self, value: float) -> int:
        """A constant FLOAT32 scalar operand."""
        return self.imp.float32(value)

    def constant(self, value: np.ndarray, t: OperandType = T.TENSOR_INT32) -> int:
        """A constant tensor operand of NNAPI type ``t``."""
        return self.imp.const(np.asarray(value), t)

    def temporary(self, k: int, shape: Sequence[int]) -> int:
        """An operand for an intermediate result: input ``k``'s type and
        quantisation, ``shape``."""
        return self.imp.temp_like(self.ins[k], tuple(shape))


#: the converters' view of one TFLite operator: its inputs and outputs as
#: NNAPI operands (``input(k)``, ``output(k)``, ``tensor(k)``, ``has(k)``), its
#: options, and what adds operations and operands (``emit``, ``int32``,
#: ``float32``, ``constant``, ``temporary``); ``name`` is ``CUSTOM:<code>``
#: for a custom operator, ``op.CustomOptionsAsNumpy()`` its option bytes
OperatorCall = _Call



#: a converter: emits the NNAPI operations of one TFLite operator
Converter = Callable[[_Call], None]
