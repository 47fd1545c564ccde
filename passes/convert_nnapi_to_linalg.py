"""``convert-nnapi-to-linalg``: nnapi ops on tensors to linalg on memrefs.

Runs after shape inference, when every shape is static.  The model function

    func.func @main(%in0: tensor<...>, ...) -> (tensor<...>, ...)

becomes, in destination-passing style,

    func.func @main(%in0: memref<...>, ..., %out0: memref<...>, ...,
                    %weights: memref<Wxi8>, %status: memref<1xi32>)

(a scalar result, RANK's INT32, is a rank-0 ``memref<i32>``) where
``%weights`` is the model's constant pool (large constants are views into
it; small ones become ``memref.global`` constants) and ``%status`` receives a
nonzero code when an operation finds invalid runtime data (an index out of
range, say): ``operation index + 1``, reported by the runtime as an error
naming that operation.  Intermediate results are
``memref.alloc`` buffers until the buffer planner places them.  Each nnapi op
is lowered by the family lowering registered for its type in
:mod:`nnc.passes.lowering`; the op's scalars are compile-time constants and
reach the lowering as Python values.  An op with float16 operands is lowered
by its float32 lowering on widened buffers (:mod:`nnc.passes.lowering.float16`).

Weights laid out at compile time: given the model's :class:`ConstantPool`
(the driver does; ``nnc-opt`` has none), a lowering may read a constant's
value (:meth:`LoweringContext.constant_value`) and append a rearranged copy
(:meth:`LoweringContext.packed_constant`: the GEMM's weight panels).  After
lowering, constants that no code reads any more are dropped from the pool
(:meth:`ConstantPool.compact`), the views are moved to the new offsets and
``nnapi.weights_size`` and ``%weights`` take the final size, which the
driver hands on with the pool's bytes.

A model with a WHILE gets one more argument after ``%status``,
``%loop_timeout: i64`` (nanoseconds, from ``nnc_run``; its position is the
module attribute ``nnc.loop_timeout_arg``, -1 without WHILE), and the module
declares the clock ``@nnc_monotonic_ns``.  IF and WHILE are lowered by
:mod:`nnc.passes.lowering.control_flow`, which inlines the referenced models'
functions (marked ``nnapi.subgraph``; they are dropped afterwards).

With the option ``profile`` the dispatch loop of ``@main`` stamps the clock
before each operation and after the last (:mod:`nnc.passes.profile`): the
one place that knows where each NNAPI operation's code begins and ends.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects import nnapi
from nnc.dialects.nnapi import (
    STORAGE,
    SUBGRAPH_ATTR,
    dense_value,
    element_storage_type,
    from_xdsl_type,
    memref_type,
    op_call,
)
from nnc.dialects.rules import OpCall
from nnc.enums import OperandType, OperationType
from nnc.passes.concat_in_place import in_place_positions, in_place_slot
from nnc.passes.counts import COUNTS_ATTR
from nnc.passes.fold_quantize_pairs import ELIDED_ATTR, REQUANTIZE_ATTR
from nnc.passes.fuse_elementwise import GROUP_ATTR, ROOT_ATTR
from nnc.passes.fuse_epilogues import CONSUMER_ATTR, PRODUCER_ATTR, FusedConsumer, fused_consumer
from nnc.passes.kernels.tiles import (
    FORM_ATTR,
    STRIDES_ATTR,
    DepthwiseForm,
    DepthwiseStrides,
    GemmForm,
    TilePolicy,
    target_depthwise_form,
    target_form,
    tile_policy,
)
from nnc.passes.lowering import (
    LOWERINGS,
    EmissionState,
    LoweringContext,
    byte_lookup,
    float16,
    quant,
    staged,
    unsupported_reason,
)
from nnc.passes.lowering.base import QUANT8, ElementwiseBody, Emitter, Epilogue, QuantAdd, element_bytes
from nnc.passes.lowering.control_flow import FUNCTION_LOWERINGS, LOOP_TIMEOUT_ARG_ATTR, clock_declaration
from nnc.passes.lowering.elementwise import requantize
from nnc.passes.lowering.elementwise_q8 import binary_params
from nnc.passes.profile import OperationStamps
from nnc.passes.target import DEFAULT_TARGET, TargetDescription
from nnc.runtime.chunks import ByteChunks, owned_copy, release_pages, return_freed_memory


@dataclass(eq=False)
class ConstantPool:
    """The model's constant pool (the bytes ``%weights`` points to at run
    time) during one compilation: the importer's ``data`` (pieces that are
    views of the model's values, :class:`~nnc.runtime.chunks.ByteChunks`),
    which the lowering reads to lay weights out at compile time, and the
    pieces it appends (:meth:`append`).  The driver creates it, gives it to
    the pass and takes the result (:meth:`take`) as the weights of the
    compiled model (runtime, caches, ``nnc compile``'s weights file)."""

    data: ByteChunks | bytes
    #: digest of an appended array -> its offset: equal arrays are stored once
    _offsets: dict[bytes, int] = field(default_factory=dict)
    #: views :meth:`read` gave out since the last :meth:`release_reads`
    _read: list[memoryview] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Pieces are appended to and dropped from this pool's own list, never
        # the caller's (the importer's chunks outlive the lowering).
        if isinstance(self.data, ByteChunks):
            self.data = ByteChunks(self.data.pieces(), self.data.size)
        else:
            raw = memoryview(bytes(self.data))
            self.data = ByteChunks([(0, raw)] if raw.nbytes else [])

    @property
    def chunks(self) -> ByteChunks:
        assert isinstance(self.data, ByteChunks)
        return self.data

    @property
    def size(self) -> int:
        return self.chunks.size

    def read(self, offset: int, nbytes: int) -> memoryview:
        view = self.chunks.read(offset, nbytes)
        self._read.append(view)
        return view

    def release_reads(self) -> None:
        """Release the mapped pages (:func:`~nnc.runtime.chunks.release_pages`)
        of what was read since the last call, and the heap pages the layout's
        temporaries left (:func:`~nnc.runtime.chunks.return_freed_memory`):
        once an operation's weights are laid out, neither is needed."""
        if not self._read:
            return
        for view in self._read:
            release_pages(view)
        self._read.clear()
        return_freed_memory()

    def append(self, value: np.ndarray) -> int:
        """Append a copy of ``value``'s bytes at the next 64-byte boundary
        (:func:`~nnc.runtime.chunks.owned_copy`); its offset."""
        arr = np.ascontiguousarray(value)
        key = hashlib.sha256(arr.data).digest()
        if key not in self._offsets:
            self._offsets[key] = self.chunks.append(owned_copy(arr))
        return self._offsets[key]

    def contents(self) -> bytes:
        """The whole pool as bytes (a copy: for tests and small pools)."""
        return self.chunks.tobytes()

    def compact(self, used: Sequence[tuple[int, int]]) -> dict[int, int]:
        """Keep only the ``used`` byte ranges (offset, size), in their order
        and 64-byte aligned, as views (nothing is copied); where each used
        offset moved to.  Constants no code reads any more (weights only
        their packed copy is read of) are dropped, and the pool is final:
        nothing may be appended after."""
        self.data, moved = self.chunks.select(used)
        self._offsets = {}
        return moved

    def take(self) -> memoryview:
        """The pool as the one aligned buffer the code runs from
        (:meth:`~nnc.runtime.chunks.ByteChunks.into_aligned`); the pool is
        empty afterwards."""
        return self.chunks.into_aligned()


def _memref(t: Attribute, what: str, result: bool = False) -> MemRefType:
    """:func:`memref_type`, its error prefixed with this pass's name.  A
    scalar ``result`` (RANK's INT32) is a rank-0 memref of its storage type
    (scalar operands are compile-time values, never buffers)."""
    if result and isinstance(t, IntegerType | AnyFloat):
        return MemRefType(element_storage_type(t), [])
    try:
        return memref_type(t, what)
    except PassFailedException as e:
        raise PassFailedException(f"convert-nnapi-to-linalg: {e}") from None


class FunctionLowering:
    """Lowers one function of the nnapi module (main or a referenced model)
    operation by operation.

    Its public interface is what the IF and WHILE lowerings
    (:mod:`nnc.passes.lowering.control_flow`) need, since they lower their
    referenced models' operations in place: :attr:`builder`, :attr:`hoist`
    (where temporaries go inside a region), :attr:`buffers` and
    :attr:`destinations` (tensor -> buffer), :attr:`status`,
    :attr:`loop_timeout`, :attr:`functions`, :meth:`subgraph`,
    :meth:`lower_body`, :meth:`alloc` and :meth:`context`."""

    def __init__(
        self,
        module: ModuleOp,
        fn: func.FuncOp,
        weights_size: int,
        emission: EmissionState,
        tiles: TilePolicy,
        pool: ConstantPool | None = None,
        loop_timeout: bool = False,
        half_conversions: bool = True,
        byte_shuffle_bits: int = 0,
        profile: bool = False,
        gemm_form: GemmForm = GemmForm.PAIR,
        dw_form: DepthwiseForm = DepthwiseForm.WIDEN,
    ):
        self.module = module
        self.fn = fn
        self.weights_size = weights_size
        #: the module's emission state and tile policy, given to every context
        self.emission = emission
        self.tiles = tiles
        self.half_conversions = half_conversions
        self.byte_shuffle_bits = byte_shuffle_bits
        #: the target's int8 GEMM form, for operations nnc-choose-kernels left unmarked
        self.gemm_form = gemm_form
        self.dw_form = dw_form
        #: the module's constant pool, when the compilation has its bytes
        self.pool = pool
        #: buffer of a tensor constant -> its ConstantOp's value
        self.constant_values: dict[SSAValue, tuple[Attribute, TensorType]] = {}
        #: every view into %weights with the byte range it reads
        self.pool_views: list[tuple[memref.ViewOp, int, int]] = []
        self.globals: list[Operation] = []
        self.buffers: dict[SSAValue, SSAValue | None] = {}
        self.functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        #: whether the function takes the WHILE loop timeout (after %status)
        self.takes_loop_timeout = loop_timeout
        self.loop_timeout: SSAValue | None = None
        #: where allocations go while lowering inside an IF/WHILE region
        self.hoist: InsertPoint | None = None
        #: whether to time each top-level operation (:mod:`nnc.passes.profile`)
        self.profile = profile
        #: the counts buffer of data-dependent sizes, if the function has any
        self.counts: SSAValue | None = None
        #: concatenation outputs allocated at their first in-place producer
        self.placed: dict[SSAValue, SSAValue] = {}
        #: members of fused element-wise groups met before their root
        self.pending: dict[int, list[tuple[nnapi.NNAPIOperation, int]]] = {}

    def run(self) -> func.FuncOp:
        old = self.fn.body.block
        ret = old.last_op
        assert isinstance(ret, func.ReturnOp)
        name = self.fn.sym_name.data
        in_types = [_memref(a.type, f"@{name} argument {k}") for k, a in enumerate(old.args)]
        out_types = [_memref(v.type, f"@{name} result {k}", result=True) for k, v in enumerate(ret.arguments)]
        w_type = MemRefType(i8, [max(self.weights_size, 1)])
        status_type = MemRefType(i32, [1])
        extra = [i64] if self.takes_loop_timeout else []
        arg_types = [*in_types, *out_types, w_type, status_type, *extra]
        block = Block(arg_types=arg_types)
        self.builder = Builder(InsertPoint.at_end(block))
        n_in = len(in_types)
        for a, na in zip(old.args, block.args):
            self.buffers[a] = na
        n_fixed = len(in_types) + len(out_types)
        self.weights = block.args[n_fixed]
        self.status = block.args[n_fixed + 1]
        if self.takes_loop_timeout:
            self.loop_timeout = block.args[n_fixed + 2]
        # The first return position of an op result is written in place.
        self.destinations: dict[SSAValue, SSAValue] = {}
        for k, v in enumerate(ret.arguments):
            if v not in self.destinations and isinstance(v.owner, nnapi.NNAPIOperation):
                self.destinations[v] = block.args[n_in + k]
        index = 0  # the NNAPI operation index (constants are not operations)
        stamps = self._stamps(old)
        self.counts = self._counts(old)
        for op in old.ops:
            if stamps is not None and isinstance(op, nnapi.NNAPIOperation):
                stamps.stamp(self.builder, index)  # the profile's one hook: operation `index` starts
            self.lower_op(op, index)
            if self.pool is not None:
                self.pool.release_reads()
            if isinstance(op, nnapi.NNAPIOperation):
                index += 1
        if stamps is not None:
            stamps.stamp(self.builder, index)  # the last operation ended
        # Outputs not written in place (inputs, constants, repeats) are copied.
        for k, v in enumerate(ret.arguments):
            dst = block.args[n_in + k]
            src = self.buffers[v]
            assert src is not None  # a returned value is never omitted
            if src is not dst:
                self.context(OpCall(OperationType(0), [], []), [], []).copy(src, dst)
        for k, v in enumerate(ret.arguments):
            self._compact_output(v.type, block.args[n_in + k])
        self.builder.insert(func.ReturnOp())
        new = func.FuncOp(self.fn.sym_name.data, (arg_types, []), Region(block))
        return new

    def _compact_output(self, t: Attribute, buf: SSAValue) -> None:
        """A model output whose data-dependent dimension follows a dimension
        of size > 1 (TRANSPOSE moved it) is written at its bound's layout
        [P, B, I]; the caller reads the actual tensor [P, n, I] row-major,
        so it is moved to the front in place, in increasing order (each
        element moves to an index no larger than its own, never over one not
        yet moved).  A leading one is a prefix already."""
        dyn = nnapi.dynamic_dim(t)
        if dyn is None or self.counts is None:
            return
        shape = list(_memref(t, "a model output").get_shape())
        outer = int(np.prod(shape[: dyn.axis], dtype=np.int64))
        if outer == 1:
            return
        bound, inner = shape[dyn.axis], int(np.prod(shape[dyn.axis + 1 :], dtype=np.int64))
        ctx = self.context(OpCall(OperationType(0), [], []), [], [])
        flat = ctx.flat(buf)
        e = ctx.e
        n = e.index_cast(e.load(self.counts, [dyn.count]))
        if dyn.factor != 1:
            n = e.mul(n, e.index(dyn.factor))

        def block_(e, p, _):
            def row(e, r, _):
                def element(e, c, _):
                    src = e.add(e.mul(e.add(e.mul(p, e.index(bound)), r), e.index(inner)), c)
                    dst = e.add(e.mul(e.add(e.mul(p, n), r), e.index(inner)), c)
                    e.store(e.load(flat, [src]), flat, [dst])
                    return []

                e.for_(0, inner, element)
                return []

            e.for_(0, n, row)
            return []

        e.for_(0, outer, block_)

    def _stamps(self, block: Block) -> OperationStamps | None:
        """The timestamp buffer of a profiled function (one slot per
        operation of ``block`` and one after the last), else None."""
        if not self.profile:
            return None
        return OperationStamps(self.builder, sum(isinstance(o, nnapi.NNAPIOperation) for o in block.ops))

    def _counts(self, block: Block) -> SSAValue | None:
        """The counts buffer of a function whose values have data-dependent
        sizes (:data:`COUNTS_ATTR`), zeroed, else None."""
        n = 0
        for o in block.ops:
            for r in o.results:
                dyn = nnapi.dynamic_dim(r.type)
                if dyn is not None:
                    n = max(n, dyn.count + 1)
        if not n:
            return None
        alloc = memref.AllocOp.get(i32, 64, [n])
        alloc.attributes[COUNTS_ATTR] = UnitAttr()
        self.builder.insert(alloc)
        ctx = self.context(OpCall(OperationType(0), [], []), [], [])
        ctx.fill(alloc.memref, 0)
        return alloc.memref

    def alloc(self, shape: Sequence[int], elem: Attribute) -> SSAValue:
        """A temporary buffer, allocated in front of the outermost IF/WHILE
        when lowering inside one (the buffer planner wants top-level allocs)."""
        op = memref.AllocOp.get(elem, 64, list(shape))
        if self.hoist is not None:
            Builder(self.hoist).insert(op)  # in front of the outermost IF/WHILE
        else:
            self.builder.insert(op)
        return op.memref

    def subgraph(self, ref: SSAValue) -> func.FuncOp:
        """The function of the referenced model a MODEL operand names."""
        try:
            return nnapi.referenced_function(self.functions, ref)
        except ValueError as e:
            raise PassFailedException(f"convert-nnapi-to-linalg: {e}") from None

    def lower_body(
        self, fn: func.FuncOp, args: Sequence[SSAValue | None], index: int, dests: Sequence[SSAValue] | None = None
    ) -> list[SSAValue | None]:
        """Lower a referenced model's operations at the builder, its arguments
        bound to ``args``; its results' buffers.  Every operation reports as
        operation ``index`` (the IF/WHILE).  ``dests``: buffers the results may
        be written into directly."""
        block = fn.body.block
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        for a, buf in zip(block.args, args, strict=True):
            self.buffers[a] = buf
        saved = self.destinations
        self.destinations = {}
        for k, v in enumerate(ret.arguments):
            if dests is not None and v not in self.destinations and isinstance(v.owner, nnapi.NNAPIOperation):
                self.destinations[v] = dests[k]
        for op in block.ops:
            self.lower_op(op, index)
        self.destinations = saved
        return [self.buffers.get(v) for v in ret.arguments]

    def context(self, call: OpCall, ins: list, outs: list) -> LoweringContext:
        """The lowering context of one call at the builder, with this
        function's allocator, status, constants and target facts."""
        return LoweringContext(
            self.builder, call, ins, outs, self.alloc, self.status, self._constant,
            emission=self.emission, tiles=self.tiles, constants=self, half_conversions=self.half_conversions,
            byte_shuffle_bits=self.byte_shuffle_bits, byte_lookup=byte_lookup, gemm_form=self.gemm_form, counts=self.counts,
        )  # fmt: skip

    # -- ConstantSource (what the lowerings know of the constants) -----------------
    def value_of(self, buf: SSAValue) -> np.ndarray | None:
        known = self.constant_values.get(buf)
        if known is None:
            return None
        value, t = known
        info = from_xdsl_type(t)
        if isinstance(value, DenseIntOrFPElementsAttr):
            return dense_value(value, info.type)
        if self.pool is None or not isinstance(value, nnapi.BlobAttr):
            return None
        dtype = np.dtype(STORAGE[info.type][1])
        raw = self.pool.read(value.offset.data, value.size.data)
        return np.frombuffer(raw, dtype=dtype).reshape(t.get_shape())

    def packed(self, value, elem: Attribute) -> SSAValue:
        arr = np.ascontiguousarray(value)
        if self.pool is None:
            return self._constant(arr, elem)
        offset = self.pool.append(arr)
        return self._pool_view(offset, arr.nbytes, MemRefType(elem, list(arr.shape)))

    def _pool_view(self, offset: int, nbytes: int, mt: MemRefType) -> SSAValue:
        view = memref.ViewOp(self.weights, arith_index(self.builder, offset), [], mt)
        self.builder.insert(view)
        self.pool_views.append((view, offset, nbytes))
        return view.results[0]

    def _constant(self, value, elem: Attribute) -> SSAValue:
        """A memref.global holding ``value`` and its get_global here."""
        import numpy as np

        arr = np.ascontiguousarray(value)
        mt = MemRefType(elem, list(arr.shape))
        assert isinstance(elem, IntegerType | AnyFloat)
        init = DenseIntOrFPElementsAttr(TensorType(elem, list(arr.shape)), BytesAttr(arr.tobytes()))
        return self._global(mt, init)

    def _global(self, mt: MemRefType, init: DenseIntOrFPElementsAttr) -> SSAValue:
        name = f"__nnc_const_{self.fn.sym_name.data}_{len(self.globals)}"
        g = memref.GlobalOp.get(StringAttr(name), mt, init, constant=UnitAttr(), alignment=64)
        self.globals.append(g)
        get = memref.GetGlobalOp(name, mt)
        self.builder.insert(get)
        return get.memref

    def lower_op(self, op: Operation, index: int) -> None:
        if isinstance(op, func.ReturnOp):
            return
        if isinstance(op, nnapi.NoValueOp):
            self.buffers[op.result] = None
            return
        if isinstance(op, nnapi.ConstantOp):
            self.buffers[op.result] = self.lower_constant(op)
            return
        if not isinstance(op, nnapi.NNAPIOperation):
            raise PassFailedException(f"convert-nnapi-to-linalg: unexpected op {op.name}")
        if op.SPEC.type in FUNCTION_LOWERINGS:
            FUNCTION_LOWERINGS[op.SPEC.type](self, op, index)
            return
        if ELIDED_ATTR in op.attributes:
            self.buffers.update((r, None) for r in op.outs)  # read by nothing (nnc-fold-quantize-pairs)
            return
        call = op_call(op, index)
        if REQUANTIZE_ATTR in op.attributes:
            self._lower_requantize(op, index, call)
            return
        reason = unsupported_reason(call)
        if reason is not None:
            raise PassFailedException(f"operation {index} ({call.type.name}): {reason}")
        if CONSUMER_ATTR in op.attributes:
            if op.outs[0] not in self.buffers:
                raise PassFailedException(
                    f"convert-nnapi-to-linalg: operation {index} ({call.type.name}) is marked {CONSUMER_ATTR} "
                    "but no producer computed it"
                )
            return  # its producer wrote its result (nnc-fuse-epilogues)
        if self._lower_as_view(op, call.type):
            return
        group = op.attributes.get(GROUP_ATTR)
        if isinstance(group, IntAttr):
            self.pending.setdefault(group.data, []).append((op, index))
            if ROOT_ATTR in op.attributes:
                self._lower_fused(self.pending.pop(group.data))
            return  # lowered with its group's root (nnc-fuse-elementwise)
        epilogue = self._fused_epilogue(op, index, call) if PRODUCER_ATTR in op.attributes else None
        outs = []
        for k, r in enumerate(op.outs):
            dst = self.buffers.get(r) if epilogue is not None else self.destination(r)
            if dst is None:
                t = _memref(r.type, f"operation {index} ({call.type.name}) output {k}", result=True)
                dst = self.alloc(t.get_shape(), t.element_type)
            self.buffers[r] = dst
            outs.append(dst)
        written = in_place_positions(op)  # written by their producers (nnc-concat-in-place)
        ins = [None if k in written else self.buffers.get(a) for k, a in enumerate(op.args)]
        ctx = self.context(call, ins, outs)
        ctx.epilogue = epilogue
        self._apply_forms(ctx, op, index)
        float16.lower(LOWERINGS[call.type], ctx)
        ctx.finish_epilogue()

    def destination(self, r: SSAValue) -> SSAValue | None:
        """The buffer ``r``'s operation writes into, if not a new one: the
        model output it is, the output of a concatenation some producer
        already placed, or its window of a concatenation's output
        (:mod:`nnc.passes.concat_in_place`)."""
        dst = self.destinations.get(r) or self.placed.get(r)
        if dst is not None or self.hoist is not None or SUBGRAPH_ATTR in self.fn.attributes:
            return dst
        slot = in_place_slot(r)
        if slot is None:
            return None
        out = slot.concat.outs[0]
        t = _memref(out.type, "a concatenation output")
        whole = self.destination(out)
        if whole is None:
            whole = self.placed[out] = self.alloc(t.get_shape(), t.element_type)
        ctx = self.context(OpCall(OperationType(0), [], []), [], [])
        size = element_bytes(t.element_type)
        flat = ctx.reinterpreted(whole, i8, [math.prod(t.get_shape()) * size])
        window = memref.ViewOp(flat, arith_index(self.builder, slot.offset * size), [], _memref(r.type, "a concatenation input"))
        self.builder.insert(window)
        return window.results[0]

    def _lower_requantize(self, op: nnapi.NNAPIOperation, index: int, call: OpCall) -> None:
        """A QUANTIZE of a quantised input (:data:`REQUANTIZE_ATTR`): the
        operation's record lists float inputs only, so it is not checked
        against it; ``nnc-fold-quantize-pairs`` wrote it with one scale."""
        (r,) = op.outs
        src, out = call.inputs[0], call.outputs[0]
        quantised = src.type in (OperandType.TENSOR_QUANT8_ASYMM, OperandType.TENSOR_QUANT8_ASYMM_SIGNED)
        if op.SPEC.type != OperationType.QUANTIZE or not quantised or np.float32(src.scale) != np.float32(out.scale):
            raise PassFailedException(
                f"convert-nnapi-to-linalg: operation {index} ({call.type.name}) is marked {REQUANTIZE_ATTR} "
                "but is not a QUANTIZE of a quantised input with the output's scale"
            )
        dst = self.destination(r)
        if dst is None:
            t = _memref(r.type, f"operation {index} ({call.type.name}) output 0")
            dst = self.alloc(t.get_shape(), t.element_type)
        self.buffers[r] = dst
        requantize(self.context(call, [self.buffers.get(op.args[0])], [dst]))

    def _apply_forms(self, ctx: LoweringContext, op: nnapi.NNAPIOperation, index: int) -> None:
        """The kernel form ``nnc-choose-kernels`` recorded on ``op``
        (:data:`FORM_ATTR`), else the target's, and a depthwise
        convolution's strides (:data:`STRIDES_ATTR`, else the lowering's
        rule), into ``ctx``."""
        ctx.gemm_form, ctx.dw_form, ctx.dw_strides = self.gemm_form, self.dw_form, None
        if op.SPEC.type == OperationType.DEPTHWISE_CONV_2D:
            ctx.dw_form = _recorded(op, index, FORM_ATTR, DepthwiseForm) or self.dw_form
            ctx.dw_strides = _recorded(op, index, STRIDES_ATTR, DepthwiseStrides)
        else:
            ctx.gemm_form = _recorded(op, index, FORM_ATTR, GemmForm) or self.gemm_form

    def _lower_fused(self, members: list[tuple[nnapi.NNAPIOperation, int]]) -> None:
        """A group of ``nnc-fuse-elementwise`` as one ``linalg.generic`` at its
        root: each member's lowering runs in capture mode (its element-wise
        body is recorded, not emitted; its inputs read inside the group are
        stand-ins of the right type), then one loop over the root's output
        computes the bodies in order, reading only the group's outside inputs;
        a long group whose buffers are flat runs tile by tile in segments
        instead (:mod:`nnc.passes.lowering.staged`), the same operations per
        element."""
        root, root_index = members[-1]
        inside: dict[SSAValue, SSAValue] = {}  # a member's result -> its stand-in
        bodies: list[ElementwiseBody] = []
        for op, index in members:
            call = op_call(op, index)
            r = op.outs[0]
            t = _memref(r.type, f"operation {index} ({call.type.name}) output 0", result=True)
            if op is root:
                dst = self.destination(r) or self.alloc(t.get_shape(), t.element_type)
                self.buffers[r] = dst
            else:
                dst = inside[r] = memref.AllocOp.get(t.element_type, 64, t.get_shape()).memref  # never inserted
            ins = [inside.get(a) or self.buffers.get(a) for a in op.args]
            ctx = self.context(call, ins, [dst])
            ctx.capture = bodies
            LOWERINGS[call.type](ctx)
            if len(bodies) != len(inside) + (op is root):
                raise PassFailedException(
                    f"convert-nnapi-to-linalg: operation {index} ({call.type.name}) is in a fused element-wise "
                    "group but its lowering gave no element-wise body"
                )
        out = self.buffers[root.outs[0]]
        assert out is not None
        stand_ins = set(inside.values())
        outside: list[SSAValue] = []
        for b in bodies:
            outside += [v for v in b.ins if v not in stand_ins and v not in outside]
        ctx = self.context(op_call(root, root_index), outside, [out])
        elements = staged.flat_elements(ctx, out, outside)
        cuts = staged.plan(bodies, elements) if elements is not None else []
        if cuts:
            staged.emit(ctx, out, outside, bodies, cuts)
            return

        def body(e: Emitter, args: list[SSAValue], idx: list[SSAValue]) -> list[SSAValue]:
            value = dict(zip(outside, args, strict=False))
            for b in bodies:
                value[b.out] = b.body(e, [value[v] for v in b.ins])
            return [value[out]]

        ctx.elementwise_loop(out, outside, body)

    def _fused_epilogue(self, op: nnapi.NNAPIOperation, index: int, call: OpCall) -> Epilogue:
        """A producer marked by ``nnc-fuse-epilogues``: its output buffer is
        its consumer's result buffer (seen with the producer's shape; set in
        ``buffers``), and the epilogue the lowering applies."""
        fused = fused_consumer(op)
        if fused is None:
            raise PassFailedException(
                f"convert-nnapi-to-linalg: operation {index} ({call.type.name}) is marked {PRODUCER_ATTR} "
                "but has no consumer to fuse"
            )
        ctx = self.context(OpCall(OperationType(0), [], []), [], [])
        result = fused.consumer.outs[0]
        dst = self.destination(result)
        if dst is None:
            t = _memref(result.type, f"operation {index} ({call.type.name}) fused output")
            dst = self.alloc(t.get_shape(), t.element_type)
        self.buffers[result] = dst
        shape = _memref(op.outs[0].type, f"operation {index} ({call.type.name}) output").get_shape()
        self.buffers[op.outs[0]] = ctx.reshaped(dst, shape)
        residual = None
        if fused.residual is not None:
            buffer = self.buffers[fused.residual]
            assert buffer is not None  # a residual is an operand, never omitted
            residual = ctx.reshaped(buffer, shape)
        if fused.logistic is not None:
            self.buffers[fused.logistic.outs[0]] = None  # computed inside the epilogue, read by nothing else
        return Epilogue(residual, fused.act, swish=fused.logistic is not None, quant=_quant_add(fused))

    def _lower_as_view(self, op: nnapi.NNAPIOperation, kind: OperationType) -> bool:
        """RESHAPE, SQUEEZE and EXPAND_DIMS keep the elements in order, so
        their result is the input's buffer seen with the output's shape (no
        copy; the buffer planner keeps the input alive while the view is
        used).  Only in the main graph, outside IF/WHILE: a body's outputs
        may be its own inputs' buffers, rewritten while a view would still
        be read; and not when the result is a model output (written in
        place into the caller's buffer)."""
        if kind not in VIEW_OPERATIONS or self.hoist is not None or len(op.outs) != 1:
            return False
        if SUBGRAPH_ATTR in self.fn.attributes:
            return False
        (r,) = op.outs
        src = self.buffers.get(op.args[0])
        if src is None or r in self.destinations:
            return False
        t = _memref(r.type, f"{kind.name} output")
        if not isinstance(src.type, MemRefType) or src.type.element_type != t.element_type:
            return False
        ctx = self.context(OpCall(OperationType(0), [], []), [], [])
        self.buffers[r] = ctx.reshaped(src, t.get_shape())
        return True

    def lower_constant(self, op: nnapi.ConstantOp) -> SSAValue | None:
        t = op.result.type
        if not isinstance(t, TensorType):
            return None  # scalars are compile-time values; MODEL operands name functions
        mt = memref_type(t)
        if isinstance(op.value, nnapi.BlobAttr):
            buf = self._pool_view(op.value.offset.data, op.value.size.data, mt)
        else:
            assert isinstance(op.value, DenseIntOrFPElementsAttr) and isinstance(mt.element_type, IntegerType | AnyFloat)
            init = DenseIntOrFPElementsAttr(TensorType(mt.element_type, mt.get_shape()), op.value.data)
            buf = self._global(mt, init)
        self.constant_values[buf] = (op.value, t)
        return buf


def _quant_add(fused: FusedConsumer) -> QuantAdd | None:
    """A quantised consumer's ADD as an epilogue: its parameters with the
    producer's (viewed) result as input 1; None for a float consumer."""
    add = fused.consumer
    call = op_call(add)
    if call.inputs[0].type not in QUANT8:
        return None
    params = binary_params(call)
    assert isinstance(params, quant.AddParams)
    if add.args[0] is fused.residual:
        params = quant.with_inputs_swapped(params)
    return QuantAdd(params, call.inputs[0].type)


#: operations whose output is their input 0 with another shape, the elements
#: in the same order (lowered as views, see ``FunctionLowering._lower_as_view``)
VIEW_OPERATIONS = frozenset({OperationType.RESHAPE, OperationType.SQUEEZE, OperationType.EXPAND_DIMS})


def arith_op(n: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(n, IndexType()))


def arith_index(builder: Builder, n: int) -> SSAValue:
    op = arith_op(n)
    builder.insert(op)
    return op.result


#: Module attribute: the target the module is compiled for, as
#: ``{triple = "...", cpu = "...", features = "+a,+b"}`` (LLVM's spelling of
#: the features, complete: the driver derives a CPU's from its name).  The
#: driver sets it; the lowering reads it and records the target it used.
TARGET_ATTR = "nnc.target"
_TARGET_KEYS = ("triple", "cpu", "features")


def target_attr(target: TargetDescription) -> DictionaryAttr:
    """The :data:`TARGET_ATTR` value describing ``target``."""
    return DictionaryAttr(
        {"triple": StringAttr(target.triple), "cpu": StringAttr(target.cpu), "features": StringAttr(target.feature_string)}
    )


def module_target(module: ModuleOp) -> TargetDescription | None:
    """The target :data:`TARGET_ATTR` names on ``module`` (None: no attribute;
    PassFailedException if it is not three strings)."""
    attr = module.attributes.get(TARGET_ATTR)
    if attr is None:
        return None
    fields = attr.data if isinstance(attr, DictionaryAttr) else {}
    if set(fields) != set(_TARGET_KEYS) or not all(isinstance(v, StringAttr) for v in fields.values()):
        raise PassFailedException(
            f"convert-nnapi-to-linalg: module attribute {TARGET_ATTR} must be "
            '{triple = "...", cpu = "...", features = "..."}'
        )
    triple, cpu, features = (fields[k].data for k in _TARGET_KEYS)  # type: ignore[attr-defined]
    return TargetDescription.parse(triple, cpu, features)


E = TypeVar("E", GemmForm, DepthwiseForm, DepthwiseStrides)


def _recorded(op: nnapi.NNAPIOperation, index: int, name: str, kind: type[E]) -> E | None:
    """The ``kind`` value ``nnc-choose-kernels`` recorded on ``op`` as
    attribute ``name`` (None: none), refused when it is not one."""
    attr = op.attributes.get(name)
    if attr is None:
        return None
    try:
        return kind(attr.data if isinstance(attr, StringAttr) else None)
    except ValueError:
        raise PassFailedException(
            f"convert-nnapi-to-linalg: operation {index} ({op.SPEC.type.name}) has {name} = {attr}, "
            f"not one of {', '.join(repr(f.value) for f in kind)}"
        ) from None


@dataclass(frozen=True)
class ConvertNNAPIToLinalgPass(ModulePass):
    """Lower every nnapi op to linalg.generic on memrefs (see module doc).

    Options (pipeline syntax ``convert-nnapi-to-linalg{target-features="+avx2,+fma"}``)
    name the target the vector kernels are blocked for
    (:mod:`nnc.passes.target`, :mod:`nnc.passes.kernels.tiles`):
    ``target-triple`` (default x86-64 Linux), ``target-cpu`` (informative)
    and ``target-features``, LLVM's feature string, which decides.  Without
    options the pass reads the module's :data:`TARGET_ATTR`, which the driver
    sets to the compilation's target (with the features LLVM implies for its
    CPU), and without that assumes :data:`~nnc.passes.target.DEFAULT_TARGET`
    (AVX-512).  The pass records the target it lowered for in
    :data:`TARGET_ATTR`.

    ``pool`` (set by the driver, never on the command line): the model's
    constant pool.  With it the lowerings read constant weights and append
    them laid out for the kernels (packed GEMM panels), and constants read
    only in that layout are dropped.  Without it (``nnc-opt``) packed
    constants are ``memref.global`` and only inline constants are read.

    ``profile`` (``convert-nnapi-to-linalg{profile=true}``): record the
    monotonic clock around each operation of ``@main``
    (:mod:`nnc.passes.profile`); without it no timing code is emitted."""

    name = "convert-nnapi-to-linalg"

    target_triple: str = ""
    target_cpu: str = ""
    target_features: str = ""
    profile: bool = False
    pool: ConstantPool | None = field(default=None, compare=False)

    @staticmethod
    def for_target(target: TargetDescription) -> ConvertNNAPIToLinalgPass:
        """The pass configured for ``target``."""
        return ConvertNNAPIToLinalgPass(target.triple, target.cpu, target.feature_string)

    def target(self, module: ModuleOp | None = None) -> TargetDescription:
        """The target to lower for: the options', else ``module``'s
        :data:`TARGET_ATTR`, else :data:`~nnc.passes.target.DEFAULT_TARGET`."""
        if not (self.target_triple or self.target_cpu or self.target_features):
            recorded = module_target(module) if module is not None else None
            return recorded or DEFAULT_TARGET
        if not self.target_features:
            raise PassFailedException(
                "convert-nnapi-to-linalg: target-cpu without target-features: give the CPU's "
                "features (LLVM's spelling, e.g. target-features=\"+avx2,+fma\"); the driver "
                "derives them from the CPU name"
            )
        return TargetDescription.parse(self.target_triple or DEFAULT_TARGET.triple, self.target_cpu, self.target_features)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        size_attr = op.attributes.get("nnapi.weights_size")
        weights_size = size_attr.data if isinstance(size_attr, IntAttr) else 0
        if self.pool is not None and self.pool.size != weights_size:
            raise PassFailedException(
                f"convert-nnapi-to-linalg: the constant pool has {self.pool.size} bytes, "
                f"the module's nnapi.weights_size says {weights_size}"
            )
        new_ops: list[Operation] = []
        functions = [f for f in op.ops if isinstance(f, func.FuncOp)]
        loops = any(isinstance(o, nnapi.op_class(OperationType.WHILE)) for f in functions for o in f.walk())
        # RANDOM_MULTINOMIAL seeds itself from the clock when asked for random seeds
        clock = self.profile or loops or any(
            isinstance(o, nnapi.op_class(OperationType.RANDOM_MULTINOMIAL)) for f in functions for o in f.walk()
        )
        emission = EmissionState()
        lowered: list[tuple[func.FuncOp, FunctionLowering]] = []
        target = self.target(op)
        op.attributes[TARGET_ATTR] = target_attr(target)
        tiles = tile_policy(target)
        for top in functions:
            if SUBGRAPH_ATTR in top.attributes:
                continue  # inlined where it is used
            fl = FunctionLowering(
                op, top, weights_size, emission, tiles, self.pool, loop_timeout=loops,
                half_conversions=target.half_conversions, byte_shuffle_bits=target.byte_shuffle_bits,
                profile=self.profile and top.sym_name.data == "main",
                gemm_form=target_form(target.int8_dot), dw_form=target_depthwise_form(target.int8_dot),
            )  # fmt: skip
            new_fn = fl.run()
            lowered.append((new_fn, fl))
            if top.sym_name.data == "main":
                ret = top.body.block.last_op
                assert ret is not None
                op.attributes["nnc.num_inputs"] = IntAttr(len(top.body.block.args))
                op.attributes["nnc.num_outputs"] = IntAttr(len(ret.operands))
                position = len(new_fn.body.block.args) - 1 if loops else -1
                op.attributes[LOOP_TIMEOUT_ARG_ATTR] = IntAttr(position)
            new_ops.extend(fl.globals)
            new_ops.append(new_fn)
        for top in functions:
            top.detach()
            top.erase(safe_erase=False)
        if clock:
            new_ops.append(clock_declaration())
        op.body.block.add_ops(new_ops)
        if self.pool is not None:
            _compact_pool(self.pool, [v for _, fl in lowered for v in fl.pool_views])
            if self.pool.size != weights_size:
                weights_size = self.pool.size
                for fn, fl in lowered:
                    _resize_weights(fn, fl.weights, weights_size)
        op.attributes["nnapi.weights_size"] = IntAttr(weights_size)


def _compact_pool(pool: ConstantPool, views: Sequence[tuple[memref.ViewOp, int, int]]) -> None:
    """Drop from ``pool`` the constants no view is read from any more (a
    filter whose only use is the GEMM reads just its packed copy) and
    move the views that are read to the constants' new offsets."""
    live = []
    for view, offset, nbytes in views:
        if view.results[0].uses:
            live.append((view, offset, nbytes))
            continue
        shift = view.byte_shift.owner
        view.detach()
        view.erase()
        if isinstance(shift, Operation) and not shift.results[0].uses:
            shift.detach()
            shift.erase()
    moved = pool.compact([(offset, nbytes) for _, offset, nbytes in live])
    for view, offset, _ in live:
        if moved[offset] != offset:
            shift = arith_op(moved[offset])
            Rewriter.insert_op(shift, InsertPoint.before(view))
            view.operands[1] = shift.result


def _resize_weights(fn: func.FuncOp, weights: SSAValue, size: int) -> None:
    """Give ``fn``'s ``%weights`` argument the pool's final size (packed
    constants were appended while the functions were lowered)."""
    Rewriter.replace_value_with_new_type(weights, MemRefType(i8, [size]))
    fn.function_type = FunctionType.from_lists(
        [a.type for a in fn.body.block.args], list(fn.function_type.outputs.data)
    )
