"""The nnc pass pipeline and the registry of every pass ``nnc-opt`` knows.

From an nnapi module with static input shapes to the llvm dialect:

1. ``nnapi-shape-inference``    static shapes everywhere
2. ``nnc-fold-quantize-pairs``  DEQUANTIZE -> QUANTIZE of one scale -> the
                                quantised values (identity or zero-point shift)
3. ``nnc-fuse-epilogues``       marks element-wise consumers (residual ADD,
                                RELU; the int8 residual ADD with an option) that
                                FULLY_CONNECTED / CONV_2D compute in their
                                kernels' epilogue
4. ``nnc-fuse-elementwise``     marks groups of float32 element-wise operations
                                lowered as one loop (no intermediate tensors)
5. ``nnc-concat-in-place``      marks CONCATENATION inputs whose producers write
                                straight into their window of the output
6. ``nnc-choose-kernels``       records each quantised GEMM's kernel form
                                (int16 pairs, or byte quads with vpdpbusd/sdot)
7. ``convert-nnapi-to-linalg``  linalg.generic on memrefs, destination-passing
                                (and uses of shared vector kernels)
8. ``nnc-plan-buffers``         temporaries -> views into one arena
9. ``nnc-outline-kernels``      one function per shared kernel, calls at its uses
10. ``nnc-parallelize-generics`` top-level linalg.generic -> loop nests whose
                                parallel outer loop is marked for the thread pool
11. ``nnc-outline-parallel``    loops marked parallel -> body functions + dispatch
                                calls (to nnc_parallel_for in convert-nnc-to-llvm)
12. ``nnc-convert-linalg-to-loops`` scf.for nests of loads and stores (the
                                IR of xDSL's ``convert-linalg-to-loops``)
13. ``nnc-simplify-trivial-loops`` loops of one iteration -> their body
14. ``nnc-lower-affine``        affine.apply -> arith (xDSL's ``lower-affine``
                                expansion, in one walk)
15. ``nnc-lower-scf-while``     scf.while (WHILE) -> blocks and cf branches
16. ``nnc-mark-cold``           functions whose run is a few ten thousand
                                operations -> ``nnc.cold`` (LLVM: ``optsize``)
17. ``nnc-convert-scf-to-cf``   structured control flow -> blocks (the IR of
                                xDSL's ``convert-scf-to-cf``, in one walk)
18. ``nnc-expand-math``         float32 exp/log/tanh -> polynomials (vectorisable)
19. ``convert-nnc-to-llvm``     func/cf/arith/math/memref/vector -> llvm
20. ``nnc-add-entry-point``     the C ABI ``nnc_run`` wrapper

then LLVM IR text (:func:`to_llvm_ir`: :mod:`nnc.passes.llvm_printer`, with
xDSL's llvm backend for what that printer does not write).

Timing: ``run_passes(..., timings=list)`` appends one :class:`StageTiming`
per pass (wall time, operations in the module before and after), and
:func:`format_timings` prints them like MLIR's ``-mlir-timing``; ``nnc-opt
--timings`` and ``nnc compile --timings`` show where compile time goes.
Counting walks the module twice per pass, so it is done only when asked.

A pipeline is a list of passes, each a name, a name with options in xDSL's
pipeline syntax (``convert-nnapi-to-linalg{target-features="+avx2,+fma"}``)
or a configured pass; :func:`default_pipeline` configures the lowering for
the compilation's target (:mod:`nnc.passes.target`), which decides the
vector kernels' blocking.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, cf, func, linalg, llvm, math, memref, scf, test, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.transforms.lower_affine import LowerAffinePass
from xdsl.utils.arg_spec import parse_pipeline

from nnc.dialects.nnapi import NNAPI
from nnc.passes.build import walk_ops
from nnc.passes.choose_kernels import ChooseKernelsPass
from nnc.passes.concat_in_place import ConcatInPlacePass
from nnc.passes.convert_nnapi_to_linalg import ConvertNNAPIToLinalgPass
from nnc.passes.entry_point import AddEntryPointPass
from nnc.passes.expand_math import ExpandMathPass
from nnc.passes.fold_quantize_pairs import FoldQuantizePairsPass
from nnc.passes.fuse_elementwise import FuseElementwisePass
from nnc.passes.fuse_epilogues import FuseEpiloguesPass
from nnc.passes.linalg_to_loops import ConvertLinalgToLoopsPass
from nnc.passes.llvm_printer import Unprintable, function_attributes, print_module
from nnc.passes.lower_affine import LowerAffineApplyPass
from nnc.passes.lower_scf_while import LowerScfWhilePass
from nnc.passes.mark_cold import MarkColdPass
from nnc.passes.outline_kernels import OutlineKernelsPass
from nnc.passes.outline_loops import OutlineLoopsPass
from nnc.passes.outline_parallel import OutlineParallelPass
from nnc.passes.parallel_generics import ParallelizeGenericsPass
from nnc.passes.plan_buffers import PlanBuffersPass
from nnc.passes.scf_to_cf import ConvertScfToCfPass
from nnc.passes.shape_inference import ShapeInferencePass
from nnc.passes.simplify_trivial_loops import SimplifyTrivialLoopsPass
from nnc.passes.target import TargetDescription
from nnc.passes.to_llvm import ConvertNNCToLLVMPass


def _returning(cls: type[ModulePass]) -> Callable[[], type[ModulePass]]:
    return lambda: cls


#: name -> pass class, for nnc-opt's -p option
PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    p.name: _returning(p)
    for p in (
        ShapeInferencePass,
        FoldQuantizePairsPass,
        FuseEpiloguesPass,
        FuseElementwisePass,
        ConcatInPlacePass,
        ChooseKernelsPass,
        ConvertNNAPIToLinalgPass,
        OutlineKernelsPass,
        ParallelizeGenericsPass,
        OutlineParallelPass,
        PlanBuffersPass,
        ConvertLinalgToLoopsPass,
        SimplifyTrivialLoopsPass,
        LowerAffinePass,
        LowerAffineApplyPass,
        OutlineLoopsPass,
        LowerScfWhilePass,
        MarkColdPass,
        ConvertScfToCf,
        ConvertScfToCfPass,
        ExpandMathPass,
        ConvertNNCToLLVMPass,
        AddEntryPointPass,
        CanonicalizePass,
        DeadCodeElimination,
    )
}

DEFAULT_PIPELINE: tuple[str, ...] = (
    "nnapi-shape-inference",
    "nnc-fold-quantize-pairs",
    "nnc-fuse-epilogues",
    "nnc-fuse-elementwise",
    "nnc-concat-in-place",
    "nnc-choose-kernels",
    "convert-nnapi-to-linalg",
    "nnc-plan-buffers",
    "nnc-outline-kernels",
    "nnc-parallelize-generics",
    "nnc-outline-parallel",
    "nnc-convert-linalg-to-loops",
    "nnc-simplify-trivial-loops",
    "nnc-lower-affine",
    "nnc-outline-loops",
    "nnc-lower-scf-while",
    "nnc-mark-cold",
    "nnc-convert-scf-to-cf",
    "nnc-expand-math",
    "convert-nnc-to-llvm",
    "nnc-add-entry-point",
)


#: a pass as the pipeline functions take it: a name, a name with options, or a pass
PassLike = str | ModulePass


def default_pipeline(target: TargetDescription | None = None) -> list[PassLike]:
    """:data:`DEFAULT_PIPELINE` with the lowering configured for ``target``
    (None: the lowering's documented default, as ``nnc-opt`` runs it)."""
    if target is None:
        return list(DEFAULT_PIPELINE)
    configured = {p.name: p for p in (ChooseKernelsPass.for_target(target), ConvertNNAPIToLinalgPass.for_target(target))}
    return [configured.get(name, name) for name in DEFAULT_PIPELINE]


def split_pipeline(text: str) -> list[str]:
    """The passes of a comma-separated pipeline, each with its options
    (commas inside an option's quotes do not split)."""
    return [str(spec) for spec in parse_pipeline(text)]


def make_pass(spec: PassLike) -> ModulePass:
    """The pass ``spec`` names (with its options), or ``spec`` itself."""
    if isinstance(spec, ModulePass):
        return spec
    return _pass_named(spec)


@functools.lru_cache(maxsize=256)
def _pass_named(spec: str) -> ModulePass:
    """The configured pass of a textual ``spec``, built once per spec: parsing
    the spec and the pass's options (typing.get_type_hints) costs about as
    much as running a pass over a small model, and passes are frozen
    dataclasses whose ``apply`` keeps no state, so one object serves every
    compilation.  (An unknown spec raises each time: errors are not cached.)"""
    specs = list(parse_pipeline(spec))
    if len(specs) != 1 or specs[0].name not in PASSES:
        raise KeyError(f"unknown pass {spec!r}; known: {', '.join(sorted(PASSES))}")
    try:
        return PASSES[specs[0].name]().from_pass_spec(specs[0])
    except ValueError as e:  # an option the pass does not have, or of the wrong type
        raise KeyError(f"pass {specs[0].name}: {e}") from None


def context() -> Context:
    """An xDSL context with every dialect nnc's IR uses: a copy of one built
    once per process (loading the dialects walks every operation and
    attribute definition, a millisecond or two per compilation; a copy is a
    few dictionary copies, and the caller may still load more into it)."""
    return _loaded_context().clone()


@functools.cache
def _loaded_context() -> Context:
    ctx = Context(allow_unregistered=False)
    for d in (builtin.Builtin, func.Func, arith.Arith, math.Math, memref.MemRef, scf.Scf, cf.Cf,
              affine.Affine, linalg.Linalg, llvm.LLVM, vector.Vector, test.Test, NNAPI):  # fmt: skip
        ctx.load_dialect(d)
    return ctx


@dataclass(frozen=True)
class StageTiming:
    """One stage of a compilation: a pass (with the operations in the module
    before and after it) or a stage outside the pass pipeline (op counts None)."""

    name: str
    seconds: float
    ops_before: int | None = None
    ops_after: int | None = None


def count_ops(module: ModuleOp) -> int:
    """Operations in ``module``, nested ones included (the module itself not)."""
    return len(walk_ops(module)) - 1


def run_passes(
    module: ModuleOp,
    passes: Sequence[PassLike],
    ctx: Context | None = None,
    timings: list[StageTiming] | None = None,
) -> ModuleOp:
    """Apply ``passes`` in order (names, names with options, or passes);
    with ``timings``, append each pass's :class:`StageTiming` to it."""
    ctx = ctx or context()
    configured = [make_pass(p) for p in passes]  # every name checked before the first runs
    for p in configured:
        if timings is None:
            p.apply(ctx, module)
            continue
        before = count_ops(module)
        start = time.perf_counter()
        p.apply(ctx, module)
        timings.append(StageTiming(p.name, time.perf_counter() - start, before, count_ops(module)))
    return module


def format_timings(timings: Sequence[StageTiming]) -> str:
    """A table of ``timings``: wall time, share of the total, operations
    before and after each pass (as MLIR's ``-mlir-timing`` lists passes)."""
    total = sum(t.seconds for t in timings) or 1e-9
    lines = [
        "===" + "-" * 70 + "===",
        f"  {'wall (s)':>9}  {'share':>6}  {'ops before':>10}  {'ops after':>10}  stage",
    ]
    for t in timings:
        before = "" if t.ops_before is None else str(t.ops_before)
        after = "" if t.ops_after is None else str(t.ops_after)
        lines.append(f"  {t.seconds:9.4f}  {t.seconds / total:6.1%}  {before:>10}  {after:>10}  {t.name}")
    lines.append(f"  {sum(t.seconds for t in timings):9.4f}  {1:6.1%}  {'':>10}  {'':>10}  total")
    return "\n".join(lines)


def to_llvm_ir(module: ModuleOp) -> str:
    """Translate an llvm-dialect module to LLVM IR text: printed directly
    (:mod:`nnc.passes.llvm_printer`), or through xDSL's llvmlite-based
    backend when the module holds something that printer does not write."""
    try:
        return print_module(module, lambda f: f.no_inline is not None)
    except Unprintable:
        return _xdsl_llvm_ir(module)


def _xdsl_llvm_ir(module: ModuleOp) -> str:
    """Translate an llvm-dialect module to LLVM IR text (xDSL's backend)."""
    from xdsl.backend.llvm.convert import convert_module

    ir_module = convert_module(module, fallback_target_triple=None)
    # xDSL's translation drops llvm.func's no_inline and passthrough
    # attributes (nnc-mark-cold's optsize); carry them over.
    for op in module.ops:
        if isinstance(op, llvm.FuncOp) and op.no_inline is not None:
            ir_module.get_global(op.sym_name.data).attributes.add("noinline")
        if isinstance(op, llvm.FuncOp) and op.passthrough is not None:
            for word in function_attributes(op):
                ir_module.get_global(op.sym_name.data).attributes.add(word)
        # It also writes `external` before a defined global (LLVM IR spells an
        # external definition without a linkage: `external` is a declaration).
        if isinstance(op, llvm.GlobalOp) and op.value is not None and op.linkage.linkage.data == "external":
            ir_module.get_global(op.sym_name.data).linkage = ""
    return str(ir_module)
