"""Cold compile time of the real models, per pipeline stage, in CPU seconds.

Run from the repository root::

    python benchmarks/compile_bench.py [--models DIR] [--only NAME] [--repeats 3]
                                       [--profile N] [--json results.json]

For each ``*.tflite`` in ``--models`` (default ../shared/models) it compiles
the model from scratch (nnc's in-process cache cleared) ``--repeats`` times,
*in this process*: import, every pass of the pipeline, LLVM IR translation,
then LLVM split into its optimisation (``jit.optimize``) and code
generation (``jit.emit_object``), as ``Compilation.finish()`` runs them (the
worker process only moves the LLVM stage elsewhere).  Each stage is timed
with :func:`time.process_time` (CPU seconds of this process: a shared
machine's load changes wall time, much less the CPU a stage needs) and the
table gives each stage's median over the repeats, the operations in the
module after each pass, and the total CPU and wall seconds.  Comparing two
trees: run both with the same arguments at the same time and compare the
totals' ratio.

``--profile N`` also prints the N most expensive functions (cumulative
time, :mod:`cProfile`) of one extra compile of each model: where inside a
stage the time goes.

Loaded into this process, the code is not run: outputs are the business of
the tests (``tests/test_models.py``, ``model_bench.py``).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import glob
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable

from xdsl.dialects import func
from xdsl.dialects.builtin import IntAttr, ModuleOp

from nnc import driver, import_tflite
from nnc.dialects import nnapi
from nnc.operand_types import OperandInfo
from nnc.passes.convert_nnapi_to_linalg import ConstantPool, ConvertNNAPIToLinalgPass
from nnc.passes.pipeline import context, count_ops, default_pipeline, make_pass, to_llvm_ir
from nnc.passes.to_llvm import ConvertNNCToLLVMPass
from nnc.runtime.executable import CompiledIR
from nnc.runtime.jit import Target, emit_object, optimize

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = os.path.join(HERE, "..", "..", "shared", "models")


def compile_once(path: str, target: Target) -> tuple[list[tuple[str, float, int | None]], float, float]:
    """One cold compile of ``path``: ([(stage, CPU seconds, ops after)], total
    CPU, total wall (which includes counting operations))."""
    driver._CACHE.clear()
    stages: list[tuple[str, float, int | None]] = []
    wall0 = time.perf_counter()
    cpu = time.process_time()

    def stage(name: str, module: ModuleOp | None = None) -> None:
        nonlocal cpu
        now = time.process_time()
        stages.append((name, now - cpu, None if module is None else count_ops(module)))
        cpu = time.process_time()  # op counting is not the stage's

    model = import_tflite(path)
    infos = driver.static_input_infos(model)
    stage("import")
    module, weights = driver.shaped_module(model, infos)
    stage("import-model + shape inference", module)
    ir = _lower(module, weights, infos, target, stage)
    mod = optimize(ir.llvm_ir, target)
    stage("llvm optimise")
    emit_object(mod, target)
    stage("llvm codegen")
    total_cpu = sum(s[1] for s in stages)
    return stages, total_cpu, time.perf_counter() - wall0


def _lower(
    module: ModuleOp, weights: bytes, infos: list[OperandInfo], target: Target, stage: Callable[..., None]
) -> CompiledIR:
    """:func:`driver.lower_shaped`, one pass at a time, each timed by ``stage``
    (the driver's own timings, ``driver.timed``, are wall times, which follow
    the machine's load)."""
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    outputs = [nnapi.from_xdsl_type(t) for t in main.function_type.outputs.data]
    pool = ConstantPool(weights)
    ctx = context()
    with driver.gc_paused():  # as the driver lowers
        for p in default_pipeline(driver.target_description(target))[1:]:
            p = dataclasses.replace(p, pool=pool) if isinstance(p, ConvertNNAPIToLinalgPass) else make_pass(p)
            if p.name == ConvertNNCToLLVMPass.name:
                driver.collect_replaced_operations()
                stage("collect replaced operations")
            p.apply(ctx, module)
            stage(p.name, module)
        llvm_ir = to_llvm_ir(module)
        stage("to-llvm-ir")
    arena = module.attributes.get("nnc.arena_size")
    return CompiledIR(llvm_ir, pool.contents(), arena.data if isinstance(arena, IntAttr) else 0, list(infos), outputs)


def profile_once(path: str, target: Target, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    compile_once(path, target)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--only", default="", help="models whose file name contains this")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="print the N top functions of a cProfile")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    paths = sorted(p for p in glob.glob(os.path.join(args.models, "*.tflite")) if args.only in os.path.basename(p))
    target = Target.host()
    print(f"load average {os.getloadavg()[0]:.2f} (CPU seconds of this process; LLVM in this process)")
    results = {}
    for path in paths:
        name = os.path.basename(path).removesuffix(".tflite")
        runs = [compile_once(path, target) for _ in range(args.repeats)]
        names = [s[0] for s in runs[0][0]]
        med = {n: statistics.median(r[0][k][1] for r in runs) for k, n in enumerate(names)}
        ops = {s[0]: s[2] for s in runs[0][0]}
        total = statistics.median(r[1] for r in runs)
        wall = statistics.median(r[2] for r in runs)
        print(f"\n{name}: cold compile {total:.2f} s CPU ({wall:.2f} s wall), median of {args.repeats}")
        print(f"  {'CPU (s)':>8}  {'share':>6}  {'ops after':>9}  stage")
        for n in names:
            o = "" if ops[n] is None else str(ops[n])
            print(f"  {med[n]:8.3f}  {med[n] / total:6.1%}  {o:>9}  {n}")
        results[name] = {"cpu_s": total, "wall_s": wall, "stages": med, "ops": ops}
        if args.profile:
            print(profile_once(path, target, args.profile))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
