"""Write small TFLite flatbuffers for tests, with the ``tflite`` package's
generated builders (the same schema the importer reads).

    b = TFLiteBuilder()
    x = b.tensor("x", [1, 4], FLOAT32)
    y = b.tensor("y", [1, 4], FLOAT32)
    b.op("ADD", [x, x], [y], options=("AddOptions", {"FusedActivationFunction": 1}))
    data = b.build(inputs=[x], outputs=[y])
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import flatbuffers
import numpy as np
import tflite
from tflite.utils import BUILTIN_OPCODE2NAME

FLOAT32, FLOAT16, INT32, UINT8, INT64, BOOL, INT16, INT8 = 0, 1, 2, 3, 4, 6, 7, 9
_CODES = {name: code for code, name in BUILTIN_OPCODE2NAME.items()}
_DTYPES = {FLOAT32: np.float32, FLOAT16: np.float16, INT32: np.int32, UINT8: np.uint8, INT64: np.int64, BOOL: np.bool_,
           INT16: np.int16, INT8: np.int8}  # fmt: skip


@dataclass
class _T:
    name: str
    shape: list[int]
    type: int
    buffer: int
    scales: list[float] | None
    zero_points: list[int] | None
    qdim: int
    variable: bool
    sparsity: Sparsity | None = None


@dataclass
class Sparsity:
    """A tensor's sparsity parameters: ``dims`` in traversal order, each a
    DENSE size (an int) or SPARSE_CSR (segments, indices); ``index_type``
    the SparseIndexVector member they are written as (1 int32, 2 uint16,
    3 uint8).  The tensor's data are then its stored values."""

    traversal_order: list[int]
    block_map: list[int]
    dims: list[int | tuple[list[int], list[int]]]
    index_type: int = 1


@dataclass
class TFLiteBuilder:
    tensors: list[_T] = field(default_factory=list)
    buffers: list[bytes] = field(default_factory=lambda: [b""])
    ops: list[tuple] = field(default_factory=list)
    opcodes: list[tuple[int, str]] = field(default_factory=list)
    #: further subgraphs (1, 2, ...): (builder, inputs, outputs)
    subgraphs: list[tuple[TFLiteBuilder, list[int], list[int]]] = field(default_factory=list)

    def child(self) -> TFLiteBuilder:
        """A builder for another subgraph of this file (a WHILE's body, an
        IF's branch): its own tensors and operators, this file's buffers
        and operator codes."""
        return TFLiteBuilder(buffers=self.buffers, opcodes=self.opcodes)

    def add_subgraph(self, sub: TFLiteBuilder, inputs, outputs) -> int:
        """Add ``sub`` (from :meth:`child`) as the next subgraph: its index."""
        self.subgraphs.append((sub, list(inputs), list(outputs)))
        return len(self.subgraphs)

    def tensor(self, name: str, shape, type: int, data=None, scale=None, zero_point=None,
               qdim: int = 0, variable: bool = False, sparsity: Sparsity | None = None) -> int:  # fmt: skip
        buf = 0
        if data is not None:
            self.buffers.append(np.asarray(data, _DTYPES[type]).tobytes())
            buf = len(self.buffers) - 1
        scales = None if scale is None else list(np.atleast_1d(scale).astype(float))
        zps = None if zero_point is None else [int(z) for z in np.atleast_1d(zero_point)]
        self.tensors.append(_T(name, list(shape), type, buf, scales, zps, qdim, variable, sparsity))
        return len(self.tensors) - 1

    def op(self, name: str, inputs, outputs, options: tuple[str, dict] | None = None, custom: str = "",
           custom_options: bytes = b"") -> None:  # fmt: skip
        """A builtin ``name``, or (``custom`` set) a custom operator with its
        ``custom_options`` bytes (a flexbuffer map)."""
        code = 32 if custom else _CODES[name]
        key = (code, custom)
        if key not in self.opcodes:
            self.opcodes.append(key)
        self.ops.append((self.opcodes.index(key), list(inputs), list(outputs), options, bytes(custom_options)))

    # -- serialisation ----------------------------------------------------------------------
    def build(self, inputs, outputs, signature: tuple[list[str], list[str]] | None = None) -> bytes:
        b = flatbuffers.Builder(1024)
        subs = [self._serialise(b, inputs, outputs)] + [g._serialise(b, i, o) for g, i, o in self.subgraphs]
        buffers = [self._buffer(b, d) for d in self.buffers]
        codes = [self._opcode(b, c, custom) for c, custom in self.opcodes]
        m = importlib.import_module("tflite.Model")
        vecs = {name: _vector(b, m, f"Start{name}Vector", items) for name, items in
                (("OperatorCodes", codes), ("Subgraphs", subs), ("Buffers", buffers))}  # fmt: skip
        m.Start(b)
        m.AddVersion(b, 3)
        m.AddOperatorCodes(b, vecs["OperatorCodes"])
        m.AddSubgraphs(b, vecs["Subgraphs"])
        m.AddBuffers(b, vecs["Buffers"])
        b.Finish(m.End(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def _serialise(self, b, inputs, outputs) -> int:
        tensors = [self._tensor(b, t) for t in self.tensors]
        ops = [self._operator(b, *o) for o in self.ops]
        return self._subgraph(b, tensors, ops, inputs, outputs)

    @staticmethod
    def _buffer(b, data: bytes) -> int:
        mod = importlib.import_module("tflite.Buffer")
        vec = b.CreateNumpyVector(np.frombuffer(data, np.uint8)) if data else None
        mod.Start(b)
        if vec is not None:
            mod.AddData(b, vec)
        return mod.End(b)

    @staticmethod
    def _tensor(b, t: _T) -> int:
        mod = importlib.import_module("tflite.Tensor")
        name = b.CreateString(t.name)
        shape = b.CreateNumpyVector(np.array(t.shape, np.int32))
        quant = None
        if t.scales is not None:
            q = importlib.import_module("tflite.QuantizationParameters")
            sc = b.CreateNumpyVector(np.array(t.scales, np.float32))
            zp = b.CreateNumpyVector(np.array(t.zero_points or [0] * len(t.scales), np.int64))
            q.Start(b)
            q.AddScale(b, sc)
            q.AddZeroPoint(b, zp)
            q.AddQuantizedDimension(b, t.qdim)
            quant = q.End(b)
        sparsity = None if t.sparsity is None else _sparsity(b, t.sparsity)
        mod.Start(b)
        mod.AddShape(b, shape)
        mod.AddType(b, t.type)
        mod.AddBuffer(b, t.buffer)
        mod.AddName(b, name)
        if quant is not None:
            mod.AddQuantization(b, quant)
        if sparsity is not None:
            mod.AddSparsity(b, sparsity)
        mod.AddIsVariable(b, t.variable)
        return mod.End(b)

    @staticmethod
    def _options(b, options: tuple[str, dict]) -> tuple[int, int]:
        cls, fields = options
        mod = importlib.import_module(f"tflite.{cls}")
        mod.Start(b)
        for k, v in fields.items():
            getattr(mod, f"Add{k}")(b, v)
        return getattr(tflite.BuiltinOptions, cls), mod.End(b)

    def _operator(self, b, opcode: int, inputs, outputs, options, custom_options: bytes) -> int:
        mod = importlib.import_module("tflite.Operator")
        opt = self._options(b, options) if options else None
        custom = b.CreateNumpyVector(np.frombuffer(custom_options, np.uint8)) if custom_options else None
        ins = b.CreateNumpyVector(np.array(inputs, np.int32))
        outs = b.CreateNumpyVector(np.array(outputs, np.int32))
        mod.Start(b)
        mod.AddOpcodeIndex(b, opcode)
        mod.AddInputs(b, ins)
        mod.AddOutputs(b, outs)
        if opt is not None:
            mod.AddBuiltinOptionsType(b, opt[0])
            mod.AddBuiltinOptions(b, opt[1])
        if custom is not None:
            mod.AddCustomOptions(b, custom)  # CustomOptionsFormat 0: FLEXBUFFERS
        return mod.End(b)

    @staticmethod
    def _subgraph(b, tensors, ops, inputs, outputs) -> int:
        mod = importlib.import_module("tflite.SubGraph")
        tv = _vector(b, mod, "StartTensorsVector", tensors)
        ov = _vector(b, mod, "StartOperatorsVector", ops)
        iv = b.CreateNumpyVector(np.array(inputs, np.int32))
        outv = b.CreateNumpyVector(np.array(outputs, np.int32))
        mod.Start(b)
        mod.AddTensors(b, tv)
        mod.AddInputs(b, iv)
        mod.AddOutputs(b, outv)
        mod.AddOperators(b, ov)
        return mod.End(b)

    @staticmethod
    def _opcode(b, code: int, custom: str) -> int:
        mod = importlib.import_module("tflite.OperatorCode")
        cc = b.CreateString(custom) if custom else None
        mod.Start(b)
        mod.AddDeprecatedBuiltinCode(b, min(code, 127))
        mod.AddBuiltinCode(b, code)
        if cc is not None:
            mod.AddCustomCode(b, cc)
        mod.AddVersion(b, 1)
        return mod.End(b)


def single_operator_model(name: str, in_shapes, out_shape, options=None, consts=()) -> bytes:
    """A model of one float TFLite operator: float32 inputs of ``in_shapes``,
    then constant inputs ``consts`` (INT32 for integer arrays, else FLOAT32;
    a 0-d array is a rank-0 tensor), one float32 output."""
    b = TFLiteBuilder()
    ins = [b.tensor(f"x{k}", s, FLOAT32) for k, s in enumerate(in_shapes)]
    cs = [b.tensor(f"c{k}", np.shape(v), INT32 if np.asarray(v).dtype.kind == "i" else FLOAT32, v)
          for k, v in enumerate(consts)]  # fmt: skip
    y = b.tensor("y", out_shape, FLOAT32)
    b.op(name, [*ins, *cs], [y], options)
    return b.build(ins, [y])


def _vector(b, mod, start: str, items: list[int]) -> int:
    getattr(mod, start)(b, len(items))
    for x in reversed(items):
        b.PrependUOffsetTRelative(x)
    return b.EndVector()


_INDEX_VECTORS = {1: ("Int32Vector", np.int32), 2: ("Uint16Vector", np.uint16), 3: ("Uint8Vector", np.uint8)}


def _index_vector(b, kind: int, values) -> int:
    cls, dtype = _INDEX_VECTORS[kind]
    mod = importlib.import_module(f"tflite.{cls}")
    vec = b.CreateNumpyVector(np.asarray(values, dtype))
    mod.Start(b)
    mod.AddValues(b, vec)
    return mod.End(b)


def _dimension(b, dim: int | tuple[list[int], list[int]], kind: int) -> int:
    mod = importlib.import_module("tflite.DimensionMetadata")
    if isinstance(dim, int):
        mod.Start(b)
        mod.AddFormat(b, 0)
        mod.AddDenseSize(b, dim)
        return mod.End(b)
    segments, indices = (_index_vector(b, kind, v) for v in dim)
    mod.Start(b)
    mod.AddFormat(b, 1)
    mod.AddArraySegmentsType(b, kind)
    mod.AddArraySegments(b, segments)
    mod.AddArrayIndicesType(b, kind)
    mod.AddArrayIndices(b, indices)
    return mod.End(b)


def _sparsity(b, sp: Sparsity) -> int:
    mod = importlib.import_module("tflite.SparsityParameters")
    dims = [_dimension(b, d, sp.index_type) for d in sp.dims]
    order = b.CreateNumpyVector(np.array(sp.traversal_order, np.int32))
    block_map = b.CreateNumpyVector(np.array(sp.block_map, np.int32))
    dim_vec = _vector(b, mod, "StartDimMetadataVector", dims)
    mod.Start(b)
    mod.AddTraversalOrder(b, order)
    mod.AddBlockMap(b, block_map)
    mod.AddDimMetadata(b, dim_vec)
    return mod.End(b)


def dequantized_copy(data: bytes) -> bytes:
    """The model with every int8 constant tensor rewritten as the float32
    constant it stands for (``scale x (q - zero_point)``, per channel): a
    dynamic-range model's float twin.  Uses LiteRT's generated schema (its
    object API can repack a model); ImportError without LiteRT."""
    import ai_edge_litert.schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf(bytearray(data), 0)
    for sub in model.subgraphs:
        for t in sub.tensors:
            buf = model.buffers[t.buffer]
            if t.type != INT8 or buf.data is None or not len(buf.data):
                continue
            q = t.quantization
            scale, zp = np.asarray(q.scale, np.float64), np.asarray(q.zeroPoint if q.zeroPoint is not None else [0])
            shape = [1] * len(t.shape)
            if scale.size > 1:
                shape[q.quantizedDimension] = scale.size
            q8 = np.frombuffer(bytes(buf.data), np.int8).reshape(t.shape).astype(np.int64)
            value = ((q8 - zp.reshape(shape if zp.size > 1 else [1] * len(shape))) * scale.reshape(shape))
            buf.data = np.frombuffer(value.astype(np.float32).tobytes(), np.uint8)
            t.type, t.quantization = FLOAT32, None
    b = flatbuffers.Builder(0)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())
