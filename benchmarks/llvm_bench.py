"""The LLVM end of a compilation: one worker against the module split over the pool.

Run from the repository root::

    python benchmarks/llvm_bench.py [--models DIR] [--only NAME] [--repeats 5] [--compare]

For each ``*.tflite`` in ``--models`` (default ../shared/models) whose name
contains ``--only``, the model is lowered to LLVM IR once (the time of
:func:`nnc.passes.pipeline.to_llvm_ir` is reported), then its LLVM stage
runs ``--repeats`` times each way, alternating, through the worker pool as
``Compilation.finish()`` runs it: the whole module in one worker, and split
by :func:`nnc.runtime.partition.split_module` over ``worker.POOL.size``
workers.  Reported: median wall seconds of the caller and median CPU
seconds of the workers (from /proc), and their ratios (split / whole).

``--compare`` also optimises both ways in this process and checks that
every function's machine code is the same (labels renumbered), and
``--speed N`` loads both objects and times N inferences of each,
alternating (median seconds, one thread): the split must not cost the code
any speed.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import statistics
import sys
import time

import numpy as np

from nnc import driver, import_tflite
from nnc.operand_types import dtype_of
from nnc.runtime import threadpool, worker
from nnc.runtime.executable import CompiledIR, Executable, NativeCode
from nnc.runtime.jit import Target, bundle_objects, emit_assembly, optimize
from nnc.runtime.partition import split_module

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = os.path.join(HERE, "..", "..", "shared", "models")
_TICK = os.sysconf("SC_CLK_TCK")


def worker_cpu() -> float:
    """CPU seconds the idle workers have used so far."""
    total = 0.0
    for pid in worker.POOL.workers():
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / _TICK
        except OSError:
            pass
    return total


def lowered(path: str, target: Target) -> tuple[CompiledIR, float]:
    """(the model lowered to LLVM IR, seconds of to-llvm-ir)."""
    model = import_tflite(path)
    infos = driver.static_input_infos(model)
    module, weights = driver.shaped_module(model, infos)
    with driver.timed() as timings:
        ir = driver.lower_shaped(module, weights, infos, target)
    return ir, next(t.seconds for t in timings if t.name == "to-llvm-ir")


def run_llvm(ir_text: str, target: Target, parts: int) -> tuple[float, float, bytes]:
    """(wall, workers' CPU) seconds of one LLVM stage over ``parts``
    workers, and its object code."""
    cpu0 = worker_cpu()
    t0 = time.perf_counter()
    split = split_module(ir_text, parts, driver.SPLIT_MIN_LINES)
    objects = worker.POOL.compile_objects([(p.ir_text, p.exported) for p in split], target)
    return time.perf_counter() - t0, worker_cpu() - cpu0, bundle_objects(objects)


def speed(ir: CompiledIR, objects: list[bytes], target: Target, runs: int) -> list[float]:
    """Median seconds of one inference of each object code, alternating."""
    calls = []
    for obj in objects:
        exe = Executable(NativeCode(obj, ir.weights, ir.arena_size, ir.inputs, ir.outputs, target))
        ins = [np.ones(i.dims, dtype_of(i.type)) for i in ir.inputs]
        outs = [np.zeros(o.dims, dtype_of(o.type)) for o in ir.outputs]
        calls.append(exe.bind(ins, outs))
    threadpool.set_num_threads(1)
    times: list[list[float]] = [[] for _ in objects]
    for _ in range(runs):
        for k, call in enumerate(calls):
            t0 = time.perf_counter()
            call()
            times[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def machine_code(asm: str) -> dict[str, list[str]]:
    """Each function's instructions in ``asm``, labels renumbered."""
    asm = re.sub(r"(\.LBB|\.Lfunc_end|\.LCPI|\.Ltmp)\d+", r"\1N", asm)
    out: dict[str, list[str]] = {}
    current = None
    for line in asm.splitlines():
        if line.strip().startswith(".size"):
            current = None
        m = re.match(r'^"?([A-Za-z_.0-9]+)"?:', line)
        if m and not line.startswith("."):
            current = m.group(1)
            out[current] = []
        elif current is not None and not line.strip().startswith("."):
            out[current].append(line)
    return out


def compare(ir_text: str, target: Target) -> tuple[int, list[str]]:
    """(functions compared, those whose code differs) whole against split."""
    whole = machine_code(emit_assembly(optimize(ir_text, target), target))
    split: dict[str, list[str]] = {}
    for p in split_module(ir_text, worker.POOL.size, driver.SPLIT_MIN_LINES):
        split.update(machine_code(emit_assembly(optimize(p.ir_text, target, exported=p.exported), target)))
    differ = [name for name, code in whole.items() if split.get(name) != code]
    return len(whole), differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--only", default="", help="models whose file name contains this")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--compare", action="store_true", help="check the split's machine code is the whole module's")
    ap.add_argument("--speed", type=int, default=0, metavar="N", help="time N inferences of each code")
    args = ap.parse_args(argv)
    target = Target.host()
    paths = sorted(p for p in glob.glob(os.path.join(args.models, "*.tflite")) if args.only in os.path.basename(p))
    print(f"load average {os.getloadavg()[0]:.2f}; {worker.POOL.size} workers")
    for path in paths:
        name = os.path.basename(path).removesuffix(".tflite")
        ir, to_ir = lowered(path, target)
        ir_text = ir.llvm_ir
        n = len(split_module(ir_text, worker.POOL.size, driver.SPLIT_MIN_LINES))
        run_llvm(ir_text, target, worker.POOL.size)  # start the workers
        whole, split = [], []
        for _ in range(args.repeats):
            whole.append(run_llvm(ir_text, target, 1))
            split.append(run_llvm(ir_text, target, worker.POOL.size))
        ww, wc = (statistics.median(x[k] for x in whole) for k in (0, 1))
        sw, sc = (statistics.median(x[k] for x in split) for k in (0, 1))
        print(f"\n{name}: {ir_text.count(chr(10))} lines of LLVM IR, to-llvm-ir {to_ir:.3f} s wall, {n} part(s)")
        print(f"  whole module: {ww:.3f} s wall, {wc:.3f} s worker CPU")
        print(f"  split:        {sw:.3f} s wall, {sc:.3f} s worker CPU  (wall x{sw / ww:.2f}, CPU x{sc / max(wc, 1e-9):.2f})")
        if args.compare:
            total, differ = compare(ir_text, target)
            print(f"  machine code: {total - len(differ)} of {total} functions identical" + (f"; differ: {differ}" if differ else ""))
        if args.speed:
            tw, ts = speed(ir, [whole[0][2], split[0][2]], target, args.speed)
            print(f"  inference (1 thread): whole {tw * 1e3:.2f} ms, split {ts * 1e3:.2f} ms (x{ts / tw:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
