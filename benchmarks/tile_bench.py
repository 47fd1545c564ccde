"""The tile policy's effect on a whole model: the same model compiled twice
for this machine, once with the kernels blocked for its own target
description and once with the blocking of another description (default:
AVX-512, the description the lowering assumes without options), timed in
the same process run.

Run from the repository root::

    python benchmarks/tile_bench.py [MODEL.tflite] [--runs 30] [--rounds 3] [--other-features +avx512f] [--clock cpu]

LLVM generates code for the host CPU in both cases (a 16-lane vector on an
AVX2 machine becomes two ymm halves); only the blocking differs.  Rounds
alternate between the two executables; each reports the median of its
``--runs`` native calls per round, the median over rounds and the best
run, in ms and GFLOP/s (2 x multiply-accumulates / time).  The two outputs are compared
(they differ by rounding only: the dot-product kernels sum lanes in another
order).  Timings on a shared machine are noisy: read the ratio, taken in
the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nnc
from model_bench import inputs_for, macs
from nnc import driver
from nnc.dialects import nnapi
from nnc.passes.pipeline import context, default_pipeline, run_passes, to_llvm_ir
from nnc.passes.target import TargetDescription
from nnc.runtime.executable import CompiledIR, Executable, generate_code, new_arena
from nnc.runtime.jit import Target

DEFAULT_MODEL = "/work/shared/models/mobilenet_v2_1.0_224_float32.tflite"


def compile_with(model: nnc.Model, description: TargetDescription, target: Target) -> Executable:
    """``model`` blocked for ``description``, code generated for ``target``
    (the driver's lower_shaped with the lowering's description forced)."""
    infos = driver.static_input_infos(model)
    module, weights = driver.shaped_module(model, infos)
    main = next(op for op in module.ops if op.name == "func.func")
    outputs = [nnapi.from_xdsl_type(t) for t in main.function_type.outputs.data]
    run_passes(module, default_pipeline(description)[1:], context())
    arena = module.attributes.get("nnc.arena_size")
    ir = CompiledIR(to_llvm_ir(module), weights, arena.data if arena is not None else 0, list(infos), outputs)
    return Executable(generate_code(ir, target))


def times_ms(exe: Executable, xs: list[np.ndarray], out: list[np.ndarray], runs: int, clock) -> list[float]:
    arena = new_arena(exe.arena_size)
    exe.run(xs, out, arena)
    times = []
    for _ in range(runs):
        t = clock()
        exe.run(xs, out, arena)
        times.append((clock() - t) * 1e3)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", default=DEFAULT_MODEL)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--other-features", default="+avx512f", help="LLVM features of the other description")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: time.perf_counter; cpu: this thread's CPU time (time.thread_time), "
                         "which leaves out the time other processes hold the core on a loaded machine")
    args = ap.parse_args(argv)

    model = nnc.import_tflite(args.model)
    io = np.load(args.model.removesuffix(".tflite") + ".io.npz")
    xs = inputs_for(model, io)
    flops = 2 * macs(model)
    host = Target.host()
    own = driver.target_description(host)
    other = TargetDescription.parse(host.triple, "", args.other_features)
    print(f"model {os.path.basename(args.model)}: {flops / 2e6:.1f} M MACs")
    print(f"host  {own.summary()}")
    exes = {}
    for label, d in (("own target", own), (f"other ({args.other_features})", other)):
        t = time.perf_counter()
        exes[label] = compile_with(model, d, host)
        print(f"compiled for {label}: {time.perf_counter() - t:.1f} s, {d.vector_bits}-bit x {d.registers} blocking")
    outs = {k: [np.empty(s, dt) for s, dt in zip(e.output_shapes, e.output_dtypes)] for k, e in exes.items()}
    samples: dict[str, list[float]] = {k: [] for k in exes}
    best: dict[str, float] = {k: float("inf") for k in exes}
    for _ in range(args.rounds):
        for k, e in exes.items():
            ts = times_ms(e, xs, outs[k], args.runs, time.perf_counter if args.clock == "wall" else time.thread_time)
            samples[k].append(statistics.median(ts))
            best[k] = min(best[k], *ts)
    a, b = (outs[k][0] for k in exes)
    print(f"max |difference| of the outputs: {float(np.max(np.abs(a.astype(np.float64) - b))):.3g}")
    print(f"clock: {args.clock}")
    print(f"{'blocking':28s} {'ms':>8s} {'GFLOP/s':>8s} {'best ms':>8s} {'GFLOP/s':>8s}   round medians (ms)")
    med = {}
    for k, s in samples.items():
        med[k] = statistics.median(s)
        rounds = " ".join(f"{x:.2f}" for x in s)
        print(f"{k:28s} {med[k]:8.2f} {flops / med[k] / 1e6:8.1f} {best[k]:8.2f} {flops / best[k] / 1e6:8.1f}   {rounds}")
    (m1, m2), (b1, b2) = med.values(), best.values()
    print(f"ratio own / other: {m1 / m2:.3f} (medians), {b1 / b2:.3f} (best runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
