"""Flatbuffer access: the file's bytes, its tensors (type, shape,
quantisation, constant data), operator codes and builtin options, signature
names.  Nothing here knows NNAPI; a malformed file is a BadDataError."""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass

import numpy as np

from nnc.errors import BadDataError, NNError, UnexpectedNullError
from nnc.modelfile import FileIdentity, map_path

FN = "nnc.import_tflite"


def _tflite():
    import tflite  # the maintained generated parser of the TFLite schema

    return tflite


_OPCODE_NAMES: dict[int, str] | None = None


def _opcode_name(code: int) -> str:
    global _OPCODE_NAMES
    if _OPCODE_NAMES is None:
        from tflite.utils import BUILTIN_OPCODE2NAME

        _OPCODE_NAMES = dict(BUILTIN_OPCODE2NAME)
    return _OPCODE_NAMES.get(code, f"BUILTIN_{code}")


def _options(op, option_class: str):
    """The operator's builtin options as the generated ``option_class`` (or None)."""
    table = op.BuiltinOptions()
    if table is None:
        return None
    opts = getattr(_tflite(), option_class)()
    opts.Init(table.Bytes, table.Pos)
    return opts


#: TFLite TensorType -> numpy dtype of its buffer.
_TFL_DTYPES = {0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 6: np.bool_,
               7: np.int16, 9: np.int8}  # fmt: skip
_TFL_TYPE_NAMES = {0: "FLOAT32", 1: "FLOAT16", 2: "INT32", 3: "UINT8", 4: "INT64", 5: "STRING",
                   6: "BOOL", 7: "INT16", 8: "COMPLEX64", 9: "INT8", 10: "FLOAT64"}  # fmt: skip


@dataclass
class _Tensor:
    """What the importer needs of one TFLite tensor."""

    index: int
    name: str
    tfl_type: int
    shape: tuple[int, ...]
    scales: np.ndarray
    zero_points: np.ndarray
    quantized_dim: int
    data: np.ndarray | None  # constant value, or None
    variable: bool

    @property
    def quantized(self) -> bool:
        return self.scales.size > 0 and float(self.scales[0]) != 0.0


def _read_tensors(fb, sub) -> list[_Tensor]:
    tensors = []
    for k in range(sub.TensorsLength()):
        t = sub.Tensors(k)
        q = t.Quantization()
        scales = q.ScaleAsNumpy() if q is not None and not q.ScaleIsNone() else np.zeros(0, np.float32)
        zps = q.ZeroPointAsNumpy() if q is not None and not q.ZeroPointIsNone() else np.zeros(0, np.int64)
        qdim = q.QuantizedDimension() if q is not None else 0
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if not t.ShapeIsNone() else ()
        if not t.ShapeSignatureIsNone() and any(int(d) < 0 for d in t.ShapeSignatureAsNumpy()):
            shape = tuple(0 if int(d) < 0 else int(d) for d in t.ShapeSignatureAsNumpy())
        data = _buffer_data(fb, t, shape)
        name = t.Name().decode("utf-8", "replace") if t.Name() else f"tensor{k}"
        tensors.append(_Tensor(k, name, t.Type(), shape, np.asarray(scales, np.float64),
                               np.asarray(zps, np.int64), qdim, data, bool(t.IsVariable())))  # fmt: skip
    return tensors


def _buffer_data(fb, t, shape: tuple[int, ...]) -> np.ndarray | None:
    """The constant value of tensor ``t``: a read-only view of the
    flatbuffer's bytes (None for a tensor without data)."""
    buf = fb.Buffers(t.Buffer())
    if buf is None or buf.DataIsNone() or buf.DataLength() == 0:
        if buf is not None and buf.Offset() > 1:
            raise BadDataError(FN, "buffers stored outside the flatbuffer (models over 2 GiB) are not supported")
        return None
    dtype = _TFL_DTYPES.get(t.Type())
    if dtype is None:
        raise BadDataError(FN, f"constant tensor of type {_TFL_TYPE_NAMES.get(t.Type(), t.Type())}")
    raw = buf.DataAsNumpy()
    n = int(np.prod(shape)) if shape else 1
    if raw.nbytes != n * np.dtype(dtype).itemsize:
        raise BadDataError(FN, f"tensor '{t.Name()!r}': buffer holds {raw.nbytes} bytes, shape {list(shape)} needs "
                               f"{n * np.dtype(dtype).itemsize}")  # fmt: skip
    # A read-only view of the file's bytes, not a copy: Model.set_operand_value
    # keeps such a view by reference (it cannot change through it).
    return raw.view(dtype).reshape(shape)


def _signature_names(fb, sub_index: int, sub) -> tuple[dict[int, str], dict[int, str]]:
    """Tensor index -> signature name, for inputs and for outputs."""
    ins: dict[int, str] = {}
    outs: dict[int, str] = {}
    for k in range(fb.SignatureDefsLength()):
        sig = fb.SignatureDefs(k)
        if sig.SubgraphIndex() != sub_index:
            continue
        for j in range(sig.InputsLength()):
            ins[sig.Inputs(j).TensorIndex()] = sig.Inputs(j).Name().decode()
        for j in range(sig.OutputsLength()):
            outs[sig.Outputs(j).TensorIndex()] = sig.Outputs(j).Name().decode()
        break
    return ins, outs


def _load(source: str | os.PathLike | bytes) -> tuple[bytes | mmap.mmap, str, FileIdentity | None]:
    """(contents, name, identity) of a TFLite source: bytes, or a path,
    mapped read-only (:func:`nnc.modelfile.map_path`): the constants are
    views of these contents (:func:`_buffer_data`), so a path's weights stay
    the file's pages."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source), "<bytes>", None
    if source is None:
        raise UnexpectedNullError(FN, "the model is null")
    if not isinstance(source, str | os.PathLike):
        raise BadDataError(FN, f"expected a path or bytes, got {type(source).__name__}")
    return map_path(source, FN)


def is_tflite_file(path: str | bytes | os.PathLike) -> bool:
    """Whether ``path`` names a TFLite flatbuffer (by suffix or identifier)."""
    if os.fsdecode(os.fspath(path)).endswith(".tflite"):  # a bytes path too
        return True
    try:
        with open(path, "rb") as f:
            return f.read(8)[4:8] == b"TFL3"
    except (OSError, ValueError):  # ValueError: an embedded NUL (the reader reports it)
        return False


def _parse(data: bytes | mmap.mmap, where: str):
    tflite = _tflite()
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise BadDataError(FN, f"{where} is not a TFLite flatbuffer (no TFL3 identifier)")
    try:
        fb = tflite.Model.GetRootAs(data, 0)
        if fb.SubgraphsLength() < 1:
            raise BadDataError(FN, f"{where} has no subgraph")
        return fb
    except NNError:
        raise
    except Exception as e:  # noqa: BLE001 - a truncated/corrupt flatbuffer raises anything
        raise BadDataError(FN, f"{where} is not a valid TFLite flatbuffer: {e}") from None


def _operator_code(fb, op) -> tuple[int, str]:
    code = fb.OperatorCodes(op.OpcodeIndex())
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    if builtin == 32:  # CUSTOM
        return builtin, "CUSTOM:" + (code.CustomCode() or b"?").decode("utf-8", "replace")
    return builtin, _opcode_name(builtin)
