"""``nnc-parallelize-generics``: element-wise, pooling and requantisation
``linalg.generic`` ops become loop nests whose outer parallel loop is marked
for the thread pool.

Lowerings that build on vector kernels mark their own loops
(:func:`nnc.passes.kernels.vector.parallel_each`); everything else -- the
element-wise operations, activations, pooling, padding copies, quantised
depthwise convolutions and requantisation -- is a ``linalg.generic`` that
``nnc-convert-linalg-to-loops`` turns into a serial nest.  This pass lowers
such a generic to the same nest itself (with that pass's
:func:`~nnc.passes.linalg_to_loops.lower_generic`) and marks the loop of its
first dimension of extent above 1 with ``nnc.parallel`` when that is sound:

* the dimension is a ``parallel`` iterator, and every output's indexing map
  has it as one of its results: distinct values of it write distinct
  elements, and each element is computed by one iteration, with every
  reduction inside it in the serial order (bit-identical at any thread count);
* no input may overlap an output unless it is that same buffer read through
  the same map (each element read then written by its own iteration), and
  two outputs may overlap only when they are one buffer written through
  maps that both index one position by that dimension alone (each
  iteration writes its own slice: the columns of a row written as separate
  outputs); buffers are traced through views to their root (a function
  argument, a global, an arena slice);
* the body is pure (no calls, no regions, no memory operations but loads
  of buffers that no output overlaps: a lookup table);
* the nest is worth a dispatch even on the widest vectors
  (:func:`vector_work`): the loop LLVM vectorises does a fraction of the
  scalar operations ``nnc-outline-parallel`` would count.

Only generics at the top level of a function are taken (one per layer);
the others are left to ``nnc-convert-linalg-to-loops``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    UnrealizedConversionCastOp,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.linalg_to_loops import lower_generic
from nnc.passes.outline_parallel import MIN_PARALLEL_WORK, PARALLEL_ATTR

#: ops through which a buffer is the same memory seen differently
_VIEWS = (
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.CastOp,
    UnrealizedConversionCastOp,
)
#: LLVM vectorises the inner loop of most generics; a loop's scalar operation
#: count over the widest vectors any target has (16 float32 lanes, 512 bits)
#: is a lower bound of its work on every target, and only a generic whose
#: bound reaches the dispatch threshold is marked (a small copy or activation
#: is not worth waking a thread for).
WIDEST_LANES = 16
#: ops a generic's body may hold and still be pure
_PURE_DIALECTS = ("arith.", "math.", "linalg.yield", "linalg.index")


@dataclass(frozen=True)
class _Extent:
    """The memory a buffer may touch: its root value and a byte range in it
    (None: all of it)."""

    root: SSAValue
    span: tuple[int, int] | None

    def overlaps(self, other: _Extent) -> bool:
        if self.root is not other.root:
            return False
        if self.span is None or other.span is None:
            return True
        return self.span[0] < other.span[1] and other.span[0] < self.span[1]


def _byte_size(t: MemRefType) -> int | None:
    width = getattr(t.element_type, "bitwidth", None)
    shape = t.get_shape()
    if width is None or any(d < 0 for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    return n * max(1, (width + 7) // 8)


def extent(v: SSAValue) -> _Extent:
    """Where ``v``'s memory lies: a slice of an arena for a ``memref.view``
    at a constant offset, the whole root buffer through any other view."""
    while True:
        op = v.owner
        if isinstance(op, memref.ViewOp):
            offset = op.byte_shift.owner
            size = _byte_size(op.result.type) if isinstance(op.result.type, MemRefType) else None
            if isinstance(offset, arith.ConstantOp) and isinstance(offset.value, IntegerAttr) and size is not None:
                start = offset.value.value.data
                return _Extent(extent(op.source).root, (start, start + size))
            return _Extent(extent(op.source).root, None)
        if isinstance(op, _VIEWS):
            v = view_source(v)
            continue
        return _Extent(v, None)


def view_source(v: SSAValue) -> SSAValue:
    """The buffer the view ``v`` is made from: a cast of several values
    casts each operand to the result of its position, any other view
    reads its first operand."""
    op = v.owner
    assert isinstance(op, Operation)
    if isinstance(op, UnrealizedConversionCastOp):
        return op.operands[op.results.index(v)]
    return op.operands[0]


def _pure(body_ops: list[Operation], outs: list[_Extent]) -> bool:
    """No effect but the generic's stores, and no read of what they write:
    arithmetic, and loads of buffers defined outside that no output in
    ``outs`` overlaps."""
    for op in body_ops:
        if isinstance(op, memref.LoadOp):
            if any(extent(op.memref).overlaps(o) for o in outs):
                return False
        elif op.regions or not op.name.startswith(_PURE_DIALECTS):
            return False
    return True


def vector_work(op: linalg.GenericOp, bounds: tuple[int, ...]) -> int:
    """The operations of ``op``'s loop nest (a load per operand, the body, a
    store per output, per point) over :data:`WIDEST_LANES`."""
    points = 1
    for n in bounds:
        points *= n
    per_point = len(op.operands) + len(op.body.block.ops)
    return points * per_point // WIDEST_LANES


def split_dim(op: linalg.GenericOp) -> int | None:
    """The loop dimension to run in parallel (see the module doc), or None."""
    if op.res or not all(isinstance(v.type, MemRefType) for v in op.operands):
        return None
    if not _pure(list(op.body.block.ops), [extent(v) for v in op.outputs]):
        return None
    maps = [m.data for m in op.get_indexing_maps().data]
    bounds = op.get_static_loop_ranges()
    if vector_work(op, bounds) < MIN_PARALLEL_WORK:
        return None
    dim = next((d for d, n in enumerate(bounds) if n > 1), None)
    if dim is None or op.iterator_types.data[dim].data != IteratorType.PARALLEL:
        return None
    n_in = len(op.inputs)
    out_maps = maps[n_in:]
    if not all(any(isinstance(r, AffineDimExpr) and r.position == dim for r in m.results) for m in out_maps):
        return None
    outs = [extent(v) for v in op.outputs]
    for i, (a, am) in enumerate(zip(outs, out_maps)):
        for b, bm, w in zip(outs[i + 1 :], out_maps[i + 1 :], op.outputs[i + 1 :]):
            if a.overlaps(b) and not (op.outputs[i] is w and _same_slice(am, bm, dim)):
                return None
    for v, m in zip(op.inputs, maps[:n_in]):
        if not isinstance(v.type, MemRefType):
            continue
        e = extent(v)
        for w, om, o in zip(op.outputs, out_maps, outs):
            if e.overlaps(o) and not (v is w and m == om):
                return None
    return dim


def _same_slice(a: AffineMap, b: AffineMap, dim: int) -> bool:
    """Whether two maps into one buffer both index a result position by
    loop dimension ``dim`` alone: iteration ``i`` of ``dim`` then writes
    through either only elements of slice ``i`` along that position (a row's
    columns as separate outputs, as a short-row SOFTMAX writes them), so
    different iterations write disjoint elements."""
    return len(a.results) == len(b.results) and any(
        _is_dim(x, dim) and _is_dim(y, dim) for x, y in zip(a.results, b.results)
    )


def _is_dim(r: object, dim: int) -> bool:
    return isinstance(r, AffineDimExpr) and r.position == dim


def _nth_loop(outer: scf.ForOp, depth: int) -> scf.ForOp | None:
    """The ``depth``-th nested ``scf.for`` of the nest whose outermost loop
    is ``outer`` (0: ``outer`` itself)."""
    op = outer
    for _ in range(depth):
        inner = next((o for o in op.body.block.ops if isinstance(o, scf.ForOp)), None)
        if inner is None:
            return None
        op = inner
    return op


def parallelize(op: linalg.GenericOp) -> scf.ForOp | None:
    """Lower ``op`` to loops with its :func:`split_dim` loop marked; None (and
    ``op`` untouched) when it has none."""
    dim = split_dim(op)
    if dim is None:
        return None
    outer = lower_generic(op)
    loop = _nth_loop(outer, dim) if outer is not None else None
    if loop is None:
        raise PassFailedException("nnc-parallelize-generics: the loop nest of a linalg.generic was not found")
    loop.attributes[PARALLEL_ATTR] = UnitAttr()
    return loop


class ParallelizeGenericsPass(ModulePass):
    """Top-level linalg.generic -> loop nests with a marked parallel loop (see module doc)."""

    name = "nnc-parallelize-generics"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or fn.is_declaration:
                continue
            for generic in [g for g in fn.body.block.ops if isinstance(g, linalg.GenericOp)]:
                if generic.res:
                    raise PassFailedException(
                        "nnc-parallelize-generics: a linalg.generic with tensor results (buffers expected)"
                    )
                parallelize(generic)

