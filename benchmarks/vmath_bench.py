"""nnc's float32 EXP, LOG, TANH and LOGISTIC (the polynomials of
``nnc.passes.kernels.vmath``, vectorised by LLVM) against the same loops
calling the C library (``expf``, ``logf``, ``tanhf``; LOGISTIC as
``1 / (1 + expf(-x))``), on this host.

Run from the repository root::

    python benchmarks/vmath_bench.py [--n 1048576] [--runs 30] [--repeats 3]

Each function runs over ``--n`` float32 values (uniform in a range where it
is not saturated): nnc as a one-operation model (``Execution.compute()``,
one thread; its per-computation overhead of a few microseconds is left in),
the C library as a loop compiled by LLVM from IR written here, with the same
optimisation level and host CPU, called through ctypes.  The median of
``--repeats`` rounds of ``--runs`` timed runs each, the two alternating
round by round; printed as nanoseconds per element and the ratio libm / nnc.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import statistics
import time

import llvmlite.binding as llvm
import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.runtime.jit import Target

#: operation -> (the libm loop body in LLVM IR on %x, giving %y; input range)
CASES: dict[Op, tuple[str, tuple[float, float]]] = {
    Op.EXP: ("%y = call float @expf(float %x)", (-80.0, 80.0)),
    Op.LOG: ("%y = call float @logf(float %x)", (1e-3, 1e3)),
    Op.TANH: ("%y = call float @tanhf(float %x)", (-5.0, 5.0)),
    Op.LOGISTIC: (
        "%m = fneg float %x\n  %e = call float @expf(float %m)\n  %d = fadd float 1.0, %e\n"
        "  %y = fdiv float 1.0, %d",
        (-20.0, 20.0),
    ),
}

#: the features printed with the host CPU
VECTOR_FEATURES = ("sse4.2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512vnni", "neon", "dotprod")

_LOOP = """
declare float @expf(float)
declare float @logf(float)
declare float @tanhf(float)

define void @apply(ptr noalias %src, ptr noalias %dst, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %p = getelementptr float, ptr %src, i64 %i
  %x = load float, ptr %p
  {body}
  %q = getelementptr float, ptr %dst, i64 %i
  store float %y, ptr %q
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
"""


def libm_loop(op: Op) -> tuple[llvm.ExecutionEngine, ctypes.CFUNCTYPE]:
    """The C-library loop of ``op``, compiled for the host at -O2."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(_LOOP.format(body=CASES[op][0]))
    host = Target.host()
    tm = llvm.Target.from_triple(host.triple).create_target_machine(cpu=host.cpu, features=host.features, opt=2)
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    llvm.create_pass_builder(tm, pto).getModulePassManager().run(mod, llvm.create_pass_builder(tm, pto))
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(engine.get_function_address("apply"))
    return engine, fn


def unary_model(op: Op, n: int) -> nnc.Model:
    """The model of one float32 unary operation ``op`` on ``n`` values
    (``tests/test_vmath.py`` checks the same models' accuracy)."""
    m = nnc.Model()
    i = m.add_operand(T.TENSOR_FLOAT32, [n])
    o = m.add_operand(T.TENSOR_FLOAT32, [n])
    m.add_operation(op, [i], [o])
    m.identify_inputs_and_outputs([i], [o])
    m.finish()
    return m


def nnc_execution(op: Op, x: np.ndarray, out: np.ndarray) -> nnc.Execution:
    """A reusable one-thread execution of the one-operation model ``op``."""
    comp = nnc.Compilation(unary_model(op, x.size))
    comp.finish()
    ex = nnc.Execution(comp)
    ex.set_reusable(True)
    ex.set_num_threads(1)
    ex.set_input(0, x)
    ex.set_output(0, out)
    return ex


def median_round(run, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        run()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    host = Target.host()
    vector = [f for f in host.features.split(",") if f[1:] in VECTOR_FEATURES and f.startswith("+")]
    print(f"host: {host.cpu} ({' '.join(vector) or 'SSE2'}); {args.n} float32 values per run; "
          f"median of {args.repeats} x {args.runs} runs")  # fmt: skip
    print("| operation | nnc ns/element | libm ns/element | libm / nnc | max |nnc - libm| / |libm| |")
    print("|---|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for op, (_, (lo, hi)) in CASES.items():
        x = rng.uniform(lo, hi, args.n).astype(np.float32)
        ours, theirs = np.zeros_like(x), np.zeros_like(x)
        ex = nnc_execution(op, x, ours)
        _engine, fn = libm_loop(op)
        run_libm = functools.partial(fn, x.ctypes.data, theirs.ctypes.data, x.size)
        ex.compute(), run_libm()  # warm-up
        nnc_rounds, libm_rounds = [], []
        for _ in range(args.repeats):
            nnc_rounds.append(median_round(ex.compute, args.runs))
            libm_rounds.append(median_round(run_libm, args.runs))
        a, b = statistics.median(nnc_rounds) / x.size, statistics.median(libm_rounds) / x.size
        rel = float(np.max(np.abs(ours.astype(np.float64) - theirs) / np.maximum(np.abs(theirs), 1e-30)))
        print(f"| {op.name} | {a:.3f} | {b:.3f} | {b / a:.1f}x | {rel:.2g} |")
        ex.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
