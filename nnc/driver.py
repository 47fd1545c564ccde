"""The compiler driver: a finished model to native code, with NNAPI errors.

Below the public API and above the compiler, this is the one place that runs
the pipeline on a model:

1. :func:`import_model` (:mod:`nnc.importer`): the model as an ``nnapi``
   dialect module specialised to the shapes (and values) of its inputs;
2. the passes (:mod:`nnc.passes.pipeline`): shape inference, lowering to
   linalg/scf/memref, buffer planning, the entry point, LLVM dialect, LLVM IR.
   This stage stays in the calling process: it is pure Python (xDSL, numpy),
   so a bug in it raises -- :func:`compiler_errors` turns any exception,
   RecursionError and MemoryError included, into OP_FAILED "internal compiler
   error" (or OUT_OF_MEMORY) -- and cannot abort the process.  Running it in
   the worker would make every worker import xDSL (about a second) and ship
   the module across the pipe, for no safety gained;
3. LLVM (:mod:`nnc.runtime.executable`, :mod:`nnc.runtime.jit`): an
   optimised object file, loaded into the process or linked into a native
   artifact (:mod:`nnc.runtime.artifact`).  For a compilation this stage runs
   in a worker process (:mod:`nnc.runtime.worker`): an LLVM assertion aborts
   the worker, not the caller, and becomes an OP_FAILED "internal compiler
   error" naming the stage and the model's fingerprint (:class:`CompilerCrash`).
   ``NNC_COMPILER_IN_PROCESS=1`` runs LLVM in the calling process instead.

One target (:class:`~nnc.runtime.jit.Target`: the host unless told
otherwise) serves both ends: LLVM generates code for it, and the lowering
blocks its vector kernels for its description (:func:`target_description`,
an option of ``convert-nnapi-to-linalg``).

It also decides what the compiler can take: :func:`check_support` (before
compiling), :func:`specialised_inputs` (inputs whose values are compiled in),
and :func:`compiler_errors`, which turns what the compiler raises into the
NNAPI error the calling NDK function reports.  ``nnc.Compilation`` (the NDK
API), ``nnc compile`` (native artifacts) and the device's supported-operations
query all go through here, so they agree by construction.

Layering: this module imports the dialects, the passes and the runtime, never
the public API modules; a model is used through its attributes (``operands``,
``operations``, ``inputs``, ``call_for``), so :mod:`nnc.model` is imported
for type checking only.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import io
import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol, TextIO

from xdsl.dialects import func
from xdsl.dialects.builtin import IntAttr, ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from nnc.dialects import nnapi
from nnc.dialects.rules import OpCall, RuleError, Unsupported
from nnc.dialects.specialisation import loop_count_inputs, specialised_inputs
from nnc.enums import OperationType
from nnc.errors import (
    INTERNAL_ERROR,
    BadDataError,
    NNError,
    OpFailedError,
    OutOfMemoryError,
    UnsupportedOperationError,
)
from nnc.importer import import_model
from nnc.operand_types import OperandInfo
from nnc.passes import lowering
from nnc.passes.build import dismantle, structural_key
from nnc.passes.convert_nnapi_to_linalg import TARGET_ATTR, ConstantPool, ConvertNNAPIToLinalgPass, target_attr
from nnc.passes.fuse_elementwise import GROUP_ATTR
from nnc.passes.fuse_epilogues import PRODUCER_ATTR, fused_consumer
from nnc.passes.pipeline import StageTiming, context, default_pipeline, run_passes, to_llvm_ir
from nnc.passes.shape_inference import ShapeInferenceError
from nnc.passes.target import TargetDescription
from nnc.passes.to_llvm import ConvertNNCToLLVMPass
from nnc.runtime import worker
from nnc.runtime.artifact import (
    ArtifactError,
    ArtifactUsageError,
    Progress,
    build,
    find_linker,
    header_path,
    header_text,
    link_shared,
    weights_path,
    write_file,
)
from nnc.runtime.cache import model_fingerprint
from nnc.runtime.chunks import ByteChunks, return_freed_memory
from nnc.runtime.cpu_probe import implied_features
from nnc.runtime.executable import CompiledIR, Executable, NativeCode, generate_code
from nnc.runtime.jit import Target, bundle_objects
from nnc.runtime.partition import split_module

if TYPE_CHECKING:
    from nnc.model import Model

#: The NDK function whose errors ``nnc compile`` reports (it is a compilation).
_FINISH = "ANeuralNetworksCompilation_finish"
#: Whether the LLVM stage runs in this process (set NNC_COMPILER_IN_PROCESS=1:
#: no worker process, but an LLVM assertion then kills the caller).
IN_PROCESS = os.environ.get("NNC_COMPILER_IN_PROCESS", "") not in ("", "0")
#: Seconds the LLVM stage may take when the compilation has no deadline; past
#: it, the stage counts as hung (an internal compiler error).
HANG_TIMEOUT_S = 900.0


class CompilerCrash(Exception):
    """A compiler stage died (an abort, a signal) or hung in its worker."""

    def __init__(self, stage: str, crash: worker.WorkerCrash):
        self.stage = stage
        self.crash = crash
        super().__init__(f"the {stage} stage crashed in its worker process ({crash})")


# -- what the compiler can take -------------------------------------------------------------------


class SupportOracle(Protocol):
    """Anything that says why it cannot run an operation (a device)."""

    def unsupported_reason(self, call: OpCall) -> str | None: ...


def unsupported_reason(call: OpCall) -> str | None:
    """Why nnc's compiler cannot compile ``call`` (None if it can).  A rule
    that cannot judge the operation with what is known counts as a reason."""
    try:
        return lowering.unsupported_reason(call)
    except (RuleError, Unsupported, ValueError) as e:
        return str(e) or type(e).__name__


class _Compiler:
    """nnc's compiler as a :class:`SupportOracle` (what the CPU device answers)."""

    def unsupported_reason(self, call: OpCall) -> str | None:
        return unsupported_reason(call)


COMPILER: SupportOracle = _Compiler()


def check_support(model: Model, fn: str, devices: Sequence[SupportOracle] = (COMPILER,)) -> None:
    """Raise UnsupportedOperationError for the first operation (in the order
    operations were added, the numbering get_supported_operations_for_devices
    uses) that none of ``devices`` (default: nnc's compiler) can compile."""
    ops = model.operations_as_added or model.operations
    for k, op in enumerate(ops):
        call = model.call_for(k, op)
        reasons = [d.unsupported_reason(call) for d in devices]
        if all(r is not None for r in reasons):
            raise UnsupportedOperationError(
                fn, k, OperationType(op.type), [i.describe() for i in call.inputs], "; ".join(dict.fromkeys(r for r in reasons if r is not None))
            )


@contextmanager
def compiler_errors(model: Model, fn: str) -> Iterator[None]:
    """Map compiler failures to the NNAPI errors ``fn`` reports: rule
    violations found with the actual shapes -> BAD_DATA, unimplemented cases
    -> UnsupportedOperationError, anything else -> OP_FAILED (a bug in nnc is
    labelled INTERNAL_ERROR, never passed off as a rejection)."""
    try:
        yield
    except NNError:
        raise
    except ShapeInferenceError as e:
        op = model.operations[e.index] if 0 <= e.index < len(model.operations) else None
        if e.unsupported and op is not None:
            call = model.call_for(e.index, op)
            raise UnsupportedOperationError(
                fn, e.index, OperationType(op.type), [i.describe() for i in call.inputs], str(e)
            ) from None
        raise BadDataError(fn, str(e)) from None
    except PassFailedException as e:
        raise OpFailedError(fn, f"compilation failed: {e}") from None
    except MemoryError:
        raise OutOfMemoryError(fn, "out of memory while compiling") from None
    except CompilerCrash as e:
        raise OpFailedError(fn, f"{INTERNAL_ERROR}: {e} (model {fingerprint(model)})") from e
    except Exception as e:  # a compiler bug must not crash the caller
        raise OpFailedError(fn, f"{INTERNAL_ERROR}: {type(e).__name__}: {e} (model {fingerprint(model)})") from e


def fingerprint(model: Model) -> str:
    """The model's fingerprint (:func:`nnc.runtime.cache.model_fingerprint`)
    in short hex, to name the model in an internal compiler error."""
    try:
        return model_fingerprint(model).hex()[:16]
    except Exception:  # noqa: BLE001 - only a label: never hide the real error
        return "unknown"


# -- timings (``nnc compile --timings``) -------------------------------------------------------------

#: The stage timings of the compilation being timed in this context (None:
#: not timing).  A context variable, not a parameter threaded through every
#: function, because the stages sit at several depths of the driver; and not
#: a global, so concurrent compilations in other threads are not mixed in.
_TIMINGS: ContextVar[list[StageTiming] | None] = ContextVar("nnc_stage_timings", default=None)


@contextmanager
def timed() -> Iterator[list[StageTiming]]:
    """Record the stages of compilations run inside the ``with`` block (each
    pass with its op counts, plus importing, LLVM IR translation and LLVM)
    into the list it yields; print it with :func:`nnc.passes.pipeline.format_timings`."""
    timings: list[StageTiming] = []
    token = _TIMINGS.set(timings)
    try:
        yield timings
    finally:
        _TIMINGS.reset(token)


@contextmanager
def _stage(name: str) -> Iterator[None]:
    """Time the block as stage ``name`` when timing (see :func:`timed`)."""
    timings = _TIMINGS.get()
    start = time.perf_counter()
    yield
    if timings is not None:
        timings.append(StageTiming(name, time.perf_counter() - start))


# -- the pipeline ----------------------------------------------------------------------------------


def shaped_module(model: Model, input_infos: Sequence[OperandInfo]) -> tuple[ModuleOp, ByteChunks]:
    """The nnapi module specialised to ``input_infos``, after shape inference."""
    with gc_paused():
        with _stage("import-model"):
            imported = import_model(model, input_infos)
        run_passes(imported.module, ["nnapi-shape-inference"], context(), _TIMINGS.get())
    return imported.module, imported.weights


@functools.lru_cache(maxsize=64)
def target_description(target: Target) -> TargetDescription:
    """What the lowering needs to know of ``target``: its features (for a
    CPU name alone, those LLVM implies for it, probed once per process)
    and what they give the vector kernels.  Computed once per target (both
    are immutable): parsing the host's feature list costs a millisecond."""
    return TargetDescription.parse(target.triple, target.cpu, implied_features(target))


_GC_LOCK = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a module is imported and lowered.

    A lowering allocates hundreds of thousands of xDSL objects that live
    until the module is translated (operations, values, attributes, uses),
    so each collection of the oldest generation the allocations trigger
    traverses all of them again: about 0.9 s of MobileNetV2's 5.7 s of
    passes, for almost nothing freed.  The collector is restored when the
    last concurrent lowering ends (and only if it was on), and the garbage
    the passes left is collected by its next scheduled run."""
    global _gc_pauses, _gc_was_enabled
    with _GC_LOCK:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def collect_replaced_operations() -> None:
    """Collect the youngest generation between the loop-level passes and
    the translation to the llvm dialect.  The passes before leave the
    operations they replaced as unreachable cycles (xDSL's parent, result
    and use links), which the paused collector does not free: for an int8
    ResNet-50 about 57k objects, whose memory the llvm dialect's
    operations would otherwise add to instead of reuse (about 6 MiB of its
    peak).  Everything the compilation made is young (nothing was
    collected since the lowering began) and the interpreter's older
    objects are not traversed, so this costs in proportion to the module:
    about 0.2 ms for an 8-operation model, 75 ms for that ResNet-50."""
    gc.collect(0)


def release_module(module: ModuleOp) -> None:
    """Empty ``module`` once its LLVM IR is printed, its operations freed at
    once (:func:`~nnc.passes.build.dismantle`) and the heap pages they held
    given back, before the constant pool is copied into one buffer: the
    llvm-dialect module would otherwise stay until the collector runs, its
    pages beside that copy at the compilation's peak of memory."""
    for top in list(module.ops):
        top.detach()
        dismantle(top)
    return_freed_memory()


def lower_shaped(
    module: ModuleOp,
    weights: ByteChunks,
    input_infos: Sequence[OperandInfo],
    target: Target | None = None,
    profile: bool = False,
) -> CompiledIR:
    """The pipeline after shape inference, up to LLVM IR, with the vector
    kernels blocked for ``target`` (default: the host).  The result's
    weights are the constant pool as the lowering leaves it: weights laid
    out for the kernels appended, constants read only in that layout dropped.
    ``profile``: time each operation (:mod:`nnc.passes.profile`).  ``module``
    is consumed: lowered in place, then emptied (:func:`release_module`)."""
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    outputs = [nnapi.from_xdsl_type(t) for t in main.function_type.outputs.data]
    # The target travels on the module: the lowering reads it, and the IR
    # of every later stage says what it was compiled for.
    module.attributes[TARGET_ATTR] = target_attr(target_description(target or Target.host()))
    pool = ConstantPool(weights)  # the lowering appends weights laid out for the kernels
    passes = [
        ConvertNNAPIToLinalgPass(pool=pool, profile=profile) if p == ConvertNNAPIToLinalgPass.name else p
        for p in default_pipeline()[1:]
    ]
    to_llvm = next(i for i, p in enumerate(passes) if p == ConvertNNCToLLVMPass.name)
    timings = _TIMINGS.get()
    with gc_paused():
        xdsl_context = context()
        run_passes(module, passes[:to_llvm], xdsl_context, timings)
        with _stage("collect replaced operations"):
            collect_replaced_operations()
        run_passes(module, passes[to_llvm:], xdsl_context, timings)
        arena = module.attributes.get("nnc.arena_size")
        with _stage("to-llvm-ir"):
            llvm_ir = to_llvm_ir(module)
        release_module(module)
    return CompiledIR(
        llvm_ir,
        pool.take(),
        arena.data if isinstance(arena, IntAttr) else 0,
        list(input_infos),
        outputs,
    )


def lower_to_llvm(model: Model, input_infos: Sequence[OperandInfo], target: Target | None = None) -> CompiledIR:
    """Run the whole pass pipeline; raises ShapeInferenceError / PassFailedException."""
    module, weights = shaped_module(model, input_infos)
    return lower_shaped(module, weights, input_infos, target)


def module_key(module: Operation) -> tuple:
    """A hashable value equal for two modules exactly when their generic
    textual forms are (:func:`~nnc.passes.build.structural_key`): cheaper
    than printing the module, which a compilation of a small model would
    otherwise pay on every call, cache hit or not."""
    return structural_key([module])


#: In-process cache: identical specialised modules share native code.  The key
#: is the shape-inferred nnapi module (:func:`module_key`) and the target (which decides the
#: kernels' blocking as well as LLVM's code) plus a digest of its constant pool,
#: so equal models built separately (e.g. the same model with declared and with
#: unspecified output shapes) compile once per process; and whether the code
#: is compiled for profiling.
_CACHE: dict[tuple[tuple, Target, str, bool], Executable] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_LIMIT = 256


#: Lines of LLVM IR function bodies each worker must get before the LLVM
#: stage is split over several (:mod:`nnc.runtime.partition`): a part costs
#: a round trip to its worker and the shared header parsed again (a few ms),
#: where LLVM spends about 0.2 ms per line.
SPLIT_MIN_LINES = 1000
#: Operations of the shape-inferred nnapi module from which a compilation
#: starts every worker of the pool before lowering (its LLVM IR will most
#: likely be split); a smaller one starts one.
PRESTART_ALL_OPS = 64


def native_code(ir: CompiledIR, target: Target, timeout_s: float | None = None) -> NativeCode:
    """LLVM IR -> object code for ``target``, in worker processes (unless
    :data:`IN_PROCESS`): a large module is split by function over the pool's
    workers (:func:`~nnc.runtime.partition.split_module`) and the objects
    bundled (:func:`~nnc.runtime.jit.bundle_objects`).  CompilerCrash if a
    worker dies or runs longer than ``timeout_s`` or :data:`HANG_TIMEOUT_S`,
    whichever is shorter."""
    if IN_PROCESS:
        with _stage("llvm"):
            return generate_code(ir, target)
    try:
        limit = HANG_TIMEOUT_S if timeout_s is None else min(timeout_s, HANG_TIMEOUT_S)  # a far deadline: still a hang
        with _stage("llvm (worker process)"):
            parts = split_module(ir.llvm_ir, worker.POOL.size, SPLIT_MIN_LINES)
            objects = worker.POOL.compile_objects([(p.ir_text, p.exported) for p in parts], target, limit)
    except worker.WorkerCrash as e:
        raise CompilerCrash("LLVM", e) from None
    return NativeCode(bundle_objects(objects), ir.weights, ir.arena_size, ir.inputs, ir.outputs, target)


def compile_model(
    model: Model,
    input_infos: Sequence[OperandInfo],
    target: Target | None = None,
    timeout_s: float | None = None,
    profile: bool = False,
) -> Executable:
    """The model compiled for ``input_infos`` and loaded (compiler errors
    raised as they are; the LLVM stage within ``timeout_s``, see :func:`native_code`;
    ``profile``: with per-operation timestamps, see :mod:`nnc.passes.profile`)."""
    target = target or Target.host()
    if target.is_foreign:  # an artifact's business (compile_artifact): this process cannot run it
        raise ValueError(f"code for {target.triple} cannot be loaded on {Target.host().triple}")
    module, weights = shaped_module(model, input_infos)
    digest = hashlib.sha256()
    weights.hash_into(digest)
    key = (module_key(module), target, digest.hexdigest(), profile)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    if not IN_PROCESS:  # the workers start while the model is lowered
        # (counted up to the bar only: a whole-module walk is slow)
        big = sum(1 for _ in itertools.islice(module.walk(), PRESTART_ALL_OPS)) >= PRESTART_ALL_OPS
        worker.POOL.prestart(worker.POOL.size if big else 1)
    exe = Executable(native_code(lower_shaped(module, weights, input_infos, target, profile), target, timeout_s))
    with _CACHE_LOCK:
        # Another thread may have compiled the same module meanwhile: share one.
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = exe
    return exe


def operation_calls(model: Model, input_infos: Sequence[OperandInfo]) -> tuple[list[OpCall], dict[int, int]]:
    """Each operation of the model's main graph, in order, with the shapes
    shape inference gives it for ``input_infos`` (and its scalars): what a
    per-operation profile describes (:mod:`nnc.profile`); and the operations
    whose work another one's code does (a fused epilogue's consumer, the
    members of a fused element-wise group but its root), each mapped to
    that operation's index, as the pipeline's fusion passes mark them."""
    module, _ = shaped_module(model, input_infos)
    run_passes(module, ["nnc-fold-quantize-pairs", "nnc-fuse-epilogues", "nnc-fuse-elementwise"], context())
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    ops = [op for op in main.body.block.ops if isinstance(op, nnapi.NNAPIOperation)]
    return [_described(op, k) for k, op in enumerate(ops)], _fused_into(ops)


def _fused_into(ops: list[nnapi.NNAPIOperation]) -> dict[int, int]:
    """Operation index -> the index of the operation whose code computes it."""
    position = {op: k for k, op in enumerate(ops)}
    into: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for k, op in enumerate(ops):
        group = op.attributes.get(GROUP_ATTR)
        if isinstance(group, IntAttr):
            members.setdefault(group.data, []).append(k)
        if PRODUCER_ATTR in op.attributes and (fused := fused_consumer(op)) is not None:
            into[position[fused.consumer]] = k
            if fused.logistic is not None:
                into[position[fused.logistic]] = k
    for group_members in members.values():
        *others, root = group_members
        into.update((k, root) for k in others)
    return into


def _described(op: nnapi.NNAPIOperation, index: int) -> OpCall:
    """``op``'s call; for IF and WHILE only their outputs (their MODEL
    operands name functions, not tensors, and they have no MAC count)."""
    if op.SPEC.type in (OperationType.IF, OperationType.WHILE):
        return OpCall(op.SPEC.type, [], [nnapi.from_xdsl_type(r.type) for r in op.outs], index)
    return nnapi.op_call(op, index)


# -- native artifacts (``nnc compile``) ------------------------------------------------------------


def static_input_infos(model: Model) -> list[OperandInfo]:
    """The inputs' infos, if every one is a fully specified tensor whose value
    is a run-time input (scalars and tensors read as shapes are compiled into
    the code by nnc, so they cannot be inputs of a native artifact)."""
    specialised = specialised_inputs(model)
    infos = []
    for k, idx in enumerate(model.inputs):
        op = model.operands[idx]
        info = op.info(with_value=False)
        if op.type.is_scalar:
            raise ArtifactUsageError(
                f"input_{k} is a scalar ({op.type.name}); nnc compiles scalar input values into the code, "
                "so a native artifact cannot take it at run time (make it a constant of the model)"
            )
        if not info.shape_known:
            raise ArtifactUsageError(
                f"input_{k} has unspecified dimensions ({info.describe()}); nnc compile needs every input "
                "fully specified (set its dimensions in the model and save it again)"
            )
        if k in specialised:
            why = (
                "decides how often a WHILE whose loop state may change shape runs"
                if k in loop_count_inputs(model)
                else "is read as a shape by an operation"
            )
            raise ArtifactUsageError(
                f"input_{k} {why}, so nnc compiles its value into the code; "
                "a native artifact cannot take it at run time (make it a constant of the model)"
            )
        assert info.dims is not None  # shape_known
        infos.append(OperandInfo(info.type, tuple(info.dims), info.scale, info.zero_point, info.channel_quant))
    return infos


def shaped_nnapi(model: Model, infos: Sequence[OperandInfo]) -> tuple[ModuleOp, ByteChunks]:
    """(nnapi module after shape inference, constant pool), errors as NNError."""
    with compiler_errors(model, _FINISH):
        return shaped_module(model, infos)


def lower(
    model: Model, infos: Sequence[OperandInfo], progress: Progress | None = None, target: Target | None = None
) -> CompiledIR:
    """Check support and run the whole pipeline to LLVM IR for ``target``
    (default: the host), errors as NNError."""
    check_support(model, _FINISH)
    module, weights = shaped_nnapi(model, infos)
    if progress:
        progress.stage("lowering")
    with compiler_errors(model, _FINISH):
        return lower_shaped(module, weights, infos, target)


EMITS = ("mlir", "llvm", "obj", "shared")


def compile_artifact(
    model: Model,
    out: str,
    *,
    emit: str = "shared",
    target: Target | None = None,
    header: str | None = None,
    embed_weights: bool = False,
    model_name: str = "model",
    progress: Progress | None = None,
    stdout: TextIO | None = None,
) -> list[str]:
    """Compile ``model`` for ``target`` (default: the host; any triple of
    :func:`nnc.runtime.cpu_probe.target_for`) and write ``out`` (``-`` =
    ``stdout`` for mlir/llvm), plus the header and weights file for
    obj/shared.  Returns the paths written."""
    if emit not in EMITS:
        raise ValueError(f"emit must be one of {EMITS}")
    infos = static_input_infos(model)
    stage: Callable[[str], None] = progress.stage if progress else (lambda name: None)

    def put(text: str) -> list[str]:
        if out == "-":
            (stdout or sys.stdout).write(text if text.endswith("\n") else text + "\n")
            return []
        write_file(out, text if text.endswith("\n") else text + "\n")
        return [out]

    binary = emit in ("obj", "shared")
    header = (header or header_path(out)) if binary else None
    wpath = weights_path(out) if binary and not embed_weights else None
    files = [p for p in (out, header, wpath) if p is not None and p != "-"]
    if len({os.path.realpath(p) for p in files}) != len(files):
        raise ArtifactUsageError(f"output files would overwrite each other ({', '.join(files)}); choose another -o or --header")
    for path in files:  # fail before the slow part
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise ArtifactError(f"cannot write {path}: no directory {os.path.dirname(path)!r}")
    if emit == "mlir":
        module, _ = shaped_nnapi(model, infos)
        buf = io.StringIO()
        Printer(stream=buf).print_op(module)
        return put(buf.getvalue())
    target = target or Target.host()
    linker = find_linker(target) if emit == "shared" else None  # fail before the slow part
    code = lower(model, infos, progress, target)
    with compiler_errors(model, _FINISH), _stage("llvm (optimise, link the ABI, emit)"):
        art = build(code, target, embed_weights, progress)
    if emit == "llvm":
        return put(art.llvm_ir)
    stage("writing" if emit == "obj" else "linking")
    if emit == "obj":
        write_file(out, art.code.object_code)
    else:
        link_shared(art.code.object_code, out, linker)
    written = [out]
    if wpath is not None:
        write_file(wpath, code.weights)
        written.append(wpath)
    assert header is not None
    text = header_text(
        art.code,
        header_name=os.path.basename(header),
        library=os.path.basename(out),
        model_name=model_name,
        embedded=embed_weights,
        weights_file=wpath,
    )
    write_file(header, text)
    written.append(header)
    return written
