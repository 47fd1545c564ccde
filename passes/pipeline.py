"""The nnc pass pipeline and the registry of every pass ``nnc-opt`` knows.

From an nnapi module with static input shapes to the llvm dialect:

1. ``nnapi-shape-inference``    static shapes everywhere
2. ``convert-nnapi-to-linalg``  linalg.generic on memrefs, destination-passing
                                (and uses of shared vector kernels)
3. ``nnc-plan-buffers``         temporaries -> views into one arena
4. ``nnc-outline-kernels``      one function per shared kernel, calls at its uses
5. ``convert-linalg-to-loops``  (xDSL) scf.for nests of loads and stores
6. ``lower-affine``             (xDSL) affine.apply -> arith
7. ``nnc-lower-scf-while``      scf.while (WHILE) -> blocks and cf branches
8. ``convert-scf-to-cf``        (xDSL) structured control flow -> blocks
9. ``convert-nnc-to-llvm``      func/cf/arith/math/memref/vector -> llvm
10. ``nnc-add-entry-point``     the C ABI ``nnc_run`` wrapper

then LLVM IR through xDSL's llvm backend (:func:`to_llvm_ir`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, cf, func, linalg, llvm, math, memref, scf, test, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.convert_linalg_to_loops import ConvertLinalgToLoopsPass
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.transforms.lower_affine import LowerAffinePass

from nnc.dialects.nnapi import NNAPI
from nnc.passes.convert_nnapi_to_linalg import ConvertNNAPIToLinalgPass
from nnc.passes.entry_point import AddEntryPointPass
from nnc.passes.lower_scf_while import LowerScfWhilePass
from nnc.passes.outline_kernels import OutlineKernelsPass
from nnc.passes.plan_buffers import PlanBuffersPass
from nnc.passes.shape_inference import ShapeInferencePass
from nnc.passes.to_llvm import ConvertNNCToLLVMPass

#: name -> pass class, for nnc-opt's -p option
PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    p.name: (lambda p=p: p)
    for p in (
        ShapeInferencePass,
        ConvertNNAPIToLinalgPass,
        OutlineKernelsPass,
        PlanBuffersPass,
        ConvertLinalgToLoopsPass,
        LowerAffinePass,
        LowerScfWhilePass,
        ConvertScfToCf,
        ConvertNNCToLLVMPass,
        AddEntryPointPass,
        CanonicalizePass,
        DeadCodeElimination,
    )
}

DEFAULT_PIPELINE: tuple[str, ...] = (
    "nnapi-shape-inference",
    "convert-nnapi-to-linalg",
    "nnc-plan-buffers",
    "nnc-outline-kernels",
    "convert-linalg-to-loops",
    "lower-affine",
    "nnc-lower-scf-while",
    "convert-scf-to-cf",
    "convert-nnc-to-llvm",
    "nnc-add-entry-point",
)


def context() -> Context:
    """An xDSL context with every dialect nnc's IR uses."""
    ctx = Context(allow_unregistered=False)
    for d in (builtin.Builtin, func.Func, arith.Arith, math.Math, memref.MemRef, scf.Scf, cf.Cf,
              affine.Affine, linalg.Linalg, llvm.LLVM, vector.Vector, test.Test, NNAPI):  # fmt: skip
        ctx.load_dialect(d)
    return ctx


def run_passes(
    module: ModuleOp, names: Sequence[str], ctx: Context | None = None, configured: Sequence[ModulePass] = ()
) -> ModuleOp:
    """Run the passes ``names`` in order; a pass of ``configured`` runs as
    given instead of default-constructed (options only the driver can set,
    such as the constant pool of convert-nnapi-to-linalg)."""
    ctx = ctx or context()
    instances = {p.name: p for p in configured}
    for name in names:
        if name not in PASSES:
            raise KeyError(f"unknown pass {name!r}; known: {', '.join(sorted(PASSES))}")
        (instances.get(name) or PASSES[name]()()).apply(ctx, module)
    return module


def to_llvm_ir(module: ModuleOp) -> str:
    """Translate an llvm-dialect module to LLVM IR text (xDSL's backend)."""
    from xdsl.backend.llvm.convert import convert_module

    ir_module = convert_module(module, fallback_target_triple=None)
    # xDSL's translation drops llvm.func's no_inline; carry it over.
    for op in module.ops:
        if isinstance(op, llvm.FuncOp) and op.no_inline is not None:
            ir_module.get_global(op.sym_name.data).attributes.add("noinline")
    return str(ir_module)
