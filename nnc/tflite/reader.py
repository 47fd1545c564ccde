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
    sparsity = t.Sparsity()
    if sparsity is not None:
        if raw.nbytes % np.dtype(dtype).itemsize:
            raise BadDataError(FN, f"tensor '{t.Name()!r}': {raw.nbytes} bytes of sparse values")
        what = f"tensor '{(t.Name() or b'').decode('utf-8', 'replace')}'"
        return _densify(np.frombuffer(raw.tobytes(), dtype=dtype), shape, sparsity, what)
    n = int(np.prod(shape)) if shape else 1
    if raw.nbytes != n * np.dtype(dtype).itemsize:
        raise BadDataError(FN, f"tensor '{t.Name()!r}': buffer holds {raw.nbytes} bytes, shape {list(shape)} needs "
                               f"{n * np.dtype(dtype).itemsize}")  # fmt: skip
    # A read-only view of the file's bytes, not a copy: Model.set_operand_value
    # keeps such a view by reference (it cannot change through it).
    return raw.view(dtype).reshape(shape)


#: DimensionMetadata's formats (the schema's DimensionType)
_DENSE, _SPARSE_CSR = 0, 1
#: SparseIndexVector union member -> its generated class
_INDEX_VECTORS = {1: "Int32Vector", 2: "Uint16Vector", 3: "Uint8Vector"}


def _densify(values: np.ndarray, shape: tuple[int, ...], sp, what: str) -> np.ndarray:
    """A sparse constant (the tensor's ``sparsity``: traversal order, block
    map, a DENSE or SPARSE_CSR metadata per traversed dimension; the buffer
    holds the stored values in traversal order) as the dense array TFLite's
    ``FormatConverter::SparseToDense`` makes of it: every stored value at
    its coordinates, zeros elsewhere.  The stored values' coordinates are
    found level by level for all of them at once."""
    rank = len(shape)
    order = [int(v) for v in sp.TraversalOrderAsNumpy()] if not sp.TraversalOrderIsNone() else []
    block_map = [int(v) for v in sp.BlockMapAsNumpy()] if not sp.BlockMapIsNone() else []
    levels = [sp.DimMetadata(k) for k in range(sp.DimMetadataLength())]
    nb = len(block_map)
    if (sorted(order[:rank]) != list(range(rank)) or sorted(order[rank:]) != list(range(rank, rank + nb))
            or len(levels) != len(order) or sorted(set(block_map)) != sorted(block_map)
            or not all(0 <= d < rank for d in block_map)):  # fmt: skip
        raise BadDataError(FN, f"{what}: sparsity of traversal order {order}, block map {block_map} and "
                               f"{len(levels)} dimension metadata for shape {list(shape)}")  # fmt: skip
    block = [1] * rank
    for b, d in enumerate(block_map):
        inner = levels[order.index(rank + b)]
        if inner.Format() != _DENSE or inner.DenseSize() < 1 or shape[d] % inner.DenseSize():
            raise BadDataError(FN, f"{what}: block dimension {rank + b} must be DENSE and divide dimension {d}")
        block[d] = inner.DenseSize()
    for level, d in enumerate(order[:rank]):
        if levels[level].Format() == _DENSE and levels[level].DenseSize() != shape[d] // block[d]:
            raise BadDataError(FN, f"{what}: DENSE dimension {d} of size {levels[level].DenseSize()}, "
                                   f"not {shape[d] // block[d]}")  # fmt: skip
    pos = np.zeros(1, np.int64)
    cols: list[np.ndarray] = []
    for dm in levels:
        parent, index, pos = _expand_level(dm, pos, what)
        cols = [col[parent] for col in cols] + [index]
    if pos.size != values.size:
        raise BadDataError(FN, f"{what}: {values.size} sparse values for {pos.size} stored positions")
    coords: list[np.ndarray] = [np.zeros(0, np.int64)] * rank
    for level in range(rank):
        coords[order[level]] = cols[level]
    for level in range(rank, len(levels)):
        d = block_map[order[level] - rank]
        coords[d] = coords[d] * block[d] + cols[level]
    if any(((c < 0) | (c >= n)).any() for c, n in zip(coords, shape)):
        raise BadDataError(FN, f"{what}: a sparse index beyond the shape {list(shape)}")
    dense = np.zeros(shape, values.dtype)
    dense[tuple(coords)] = values
    return dense


def _expand_level(dm, pos: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One traversed dimension under the stored positions ``pos`` of the
    levels before it: for each position below, (its parent's number, its
    index in the dimension, its position, which a SPARSE_CSR level below
    looks its segment up by)."""
    if dm.Format() == _DENSE:
        size = dm.DenseSize()
        parent = np.repeat(np.arange(pos.size), size)
        index = np.tile(np.arange(size, dtype=np.int64), pos.size)
        return parent, index, pos[parent] * size + index
    if dm.Format() != _SPARSE_CSR:
        raise BadDataError(FN, f"{what}: dimension format {dm.Format()} (DENSE or SPARSE_CSR)")
    segments = _index_values(dm.ArraySegments(), dm.ArraySegmentsType(), what)
    indices = _index_values(dm.ArrayIndices(), dm.ArrayIndicesType(), what)
    if (segments.size <= pos.max(initial=-1) + 1 or segments[0] < 0 or (np.diff(segments) < 0).any()
            or segments[-1] > indices.size):  # fmt: skip
        raise BadDataError(FN, f"{what}: SPARSE_CSR segments that do not index its {indices.size} indices")
    start = segments[pos]
    counts = segments[pos + 1] - start
    parent = np.repeat(np.arange(pos.size), counts)
    below = np.arange(int(counts.sum())) + np.repeat(start - (np.cumsum(counts) - counts), counts)
    return parent, indices[below], below


def _index_values(table, kind: int, what: str) -> np.ndarray:
    """A SparseIndexVector (int32, uint16 or uint8 values) as int64."""
    cls = _INDEX_VECTORS.get(kind)
    if cls is None or table is None:
        raise BadDataError(FN, f"{what}: a SPARSE_CSR dimension without its segments or indices")
    v = getattr(_tflite(), cls)()
    v.Init(table.Bytes, table.Pos)
    return v.ValuesAsNumpy().astype(np.int64) if v.ValuesLength() else np.zeros(0, np.int64)


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
