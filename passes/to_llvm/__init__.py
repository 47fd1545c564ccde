"""``convert-nnc-to-llvm``: func/cf/arith/math/memref/vector/index to the llvm dialect.

xDSL ships the pieces for the llvm dialect and its translation to LLVM IR, but
not the conversions from the standard dialects into it.  This pass writes them
for the subset nnc produces: statically shaped memrefs with identity or static
strided layouts, so a memref is just a pointer (``!llvm.ptr``) and every access
becomes one ``getelementptr`` over a linearised index.  ``index`` becomes
``i64``.

The pass rebuilds each ``func.func`` as an ``llvm.func`` instead of rewriting
op by op with patterns: every op changes, block arguments change type, and a
single walk in dominance order (reverse post-order over the CFG) is both simpler
and much faster in Python than a fixed-point rewrite.

Scalar math that LLVM has intrinsics for becomes intrinsics (so that the loop
vectoriser sees them); the rest become calls to the C library (``tanhf``...).

One-dimensional ``vector`` types stay as they are (LLVM vectors), so that
hand-blocked kernels (:mod:`nnc.passes.kernels`) reach LLVM as vector
code: ``vector.load``/``vector.store`` become a ``getelementptr`` to the first
element and an unaligned (element-aligned) vector load/store,
``vector.broadcast`` of a scalar an insertelement + zero-mask shufflevector,
``vector.fma`` ``llvm.fma``, ``vector.shuffle`` a shufflevector and
``vector.extract`` of a constant lane a one-lane shufflevector and a bitcast;
arith on vectors maps like arith on scalars (intrinsics mangled ``v16f32``),
and fast-math flags of float arith (``contract``) carry over.  Functions
marked ``nnc.noalias`` (kernels outlined by nnc-outline-kernels, the
loops of parallel bodies by nnc-outline-loops) get ``noalias`` pointer
arguments, and ``no_inline`` unless they are such a loop
(``nnc.parallel_nest``); functions marked
``nnc.cold`` (:mod:`nnc.passes.mark_cold`) LLVM's ``optsize`` (``passthrough``).

Parallel loops (the second step of :mod:`nnc.passes.outline_parallel`): a
function marked ``nnc.parallel_body`` gets the thread pool's body signature
``void (i64 begin, i64 end, ptr ctx)`` and loads its other parameters from
``ctx``, slot j (8 bytes) holding parameter j + 2; a call marked
``nnc.parallel_dispatch`` (``@body(0, n, captures...)``) becomes the stores
of the captures into such an array (allocated once, in the caller's entry
block) and ``nnc_parallel_for(@body, ctx, n)``.

The conversion of each dialect is a module of handlers (``arith_to_llvm``,
``math_to_llvm``, ``memref_to_llvm``, ``func_to_llvm``, ``cf_to_llvm``,
``vector_to_llvm``, ``llvm_ops``), each exporting a ``HANDLERS`` table keyed
by operation class; :data:`HANDLERS` is their union, built here, and
:class:`~nnc.passes.to_llvm.converter.FuncConverter` dispatches on it.  The
llvm-op builders and the type mapping are in ``builders``.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.context import Context
from xdsl.dialects import func, llvm, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from nnc.passes.build import dismantle
from nnc.passes.to_llvm import (
    arith_to_llvm,
    cf_to_llvm,
    func_to_llvm,
    llvm_ops,
    math_to_llvm,
    memref_to_llvm,
    vector_to_llvm,
)
from nnc.passes.to_llvm.converter import FuncConverter, Handler
from nnc.passes.to_llvm.memref_to_llvm import convert_global


def _union(*tables: Mapping[type[Operation], Handler]) -> dict[type[Operation], Handler]:
    """The tables merged; an operation class in two of them is a mistake."""
    merged: dict[type[Operation], Handler] = {}
    for table in tables:
        twice = merged.keys() & table.keys()
        assert not twice, f"converted twice: {sorted(c.__name__ for c in twice)}"
        merged.update(table)
    return merged


#: the conversion of every operation class the pass accepts
HANDLERS = _union(
    arith_to_llvm.HANDLERS,
    math_to_llvm.HANDLERS,
    memref_to_llvm.HANDLERS,
    func_to_llvm.HANDLERS,
    cf_to_llvm.HANDLERS,
    vector_to_llvm.HANDLERS,
    llvm_ops.HANDLERS,
)


class ConvertNNCToLLVMPass(ModulePass):
    """Lower func/cf/arith/math/memref to the llvm dialect (see module doc)."""

    name = "convert-nnc-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        externs: dict[str, llvm.FuncOp] = {}
        new_ops: list[Operation] = []
        for top in list(op.ops):
            if isinstance(top, func.FuncOp):
                new_ops.append(FuncConverter(op, externs, HANDLERS).convert(top))
                # The function is erased and dismantled once converted, not
                # after the whole module: the memory of its operations then
                # serves the next functions' llvm operations, so the two
                # forms of the module are never whole at once.
                top.detach()
                top.erase(safe_erase=False)
                dismantle(top)
            elif isinstance(top, memref.GlobalOp):
                new_ops.append(convert_global(top))
            elif isinstance(top, llvm.FuncOp | llvm.GlobalOp):
                top.detach()
                new_ops.append(top)
            else:
                raise PassFailedException(f"convert-nnc-to-llvm: unexpected top-level op {top.name}")
        for top in list(op.ops):
            top.detach()
            top.erase(safe_erase=False)
        declared = {o.sym_name.data for o in new_ops if isinstance(o, llvm.FuncOp)}
        op.body.block.add_ops([f for n, f in externs.items() if n not in declared])
        op.body.block.add_ops(new_ops)

