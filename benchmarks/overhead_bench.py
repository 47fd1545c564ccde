"""nnc's per-execution overhead: what a ``compute()`` of a tiny model costs.

Run from the repository root::

    python benchmarks/overhead_bench.py [--runs 2000] [--repeats 5] [--profile]

The model is one ADD of two 4-element float32 tensors, so the native code
runs for well under a microsecond and the time measured is nnc's own
bookkeeping around it (state machine, argument checks, the ctypes call).
Three ways of running it:

* reusable: one execution, ``set_reusable(True)``, bound once, then
  ``compute()`` again and again (what a serving loop does; the target
  is at most 10 us here);
* one-shot: a new execution per computation, bound and computed (what
  NNAPI code without setReusable does);
* native: :meth:`nnc.runtime.executable.Executable.run` alone, the floor.

Each figure is the median of ``--repeats`` medians of ``--runs`` timed calls
(``time.perf_counter_ns`` around each call).  ``--profile`` prints a cProfile
of the reusable loop instead.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

#: the most a compute() of a reusable execution of a tiny model may cost
TARGET_NS = 10_000


def add_model(n: int = 4) -> nnc.Model:
    """out = a + b, float32[n]."""
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [n])
    b = m.add_operand(T.TENSOR_FLOAT32, [n])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(T.TENSOR_FLOAT32, [n])
    m.add_operation(Op.ADD, [a, b, act], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    m.finish()
    return m


def median_ns(fn: Callable[[], object], runs: int, repeats: int, warmup: int = 50) -> float:
    """The median over ``repeats`` of the median of ``runs`` timed calls, in ns."""
    for _ in range(warmup):
        fn()
    clock = time.perf_counter_ns
    medians = []
    for _ in range(repeats):
        times = []
        for _ in range(runs):
            t = clock()
            fn()
            times.append(clock() - t)
        medians.append(statistics.median(times))
    return statistics.median(medians)


def runners(n: int = 4) -> dict[str, Callable[[], object]]:
    """The three ways of computing the ADD model (see the module docstring)."""
    comp = nnc.Compilation(add_model(n))
    comp.finish()
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)

    ex = nnc.Execution(comp)
    ex.set_reusable(True)
    ex.set_input(0, a)
    ex.set_input(1, b)
    ex.set_output(0, out)
    ex.compute()
    assert np.array_equal(out, a + b), out

    def one_shot() -> None:
        e = nnc.Execution(comp)
        e.set_input(0, a)
        e.set_input(1, b)
        e.set_output(0, out)
        e.compute()

    exe = comp.executable([comp.model.operands[i].info() for i in comp.model.inputs], "bench")
    return {"reusable": ex.compute, "one-shot": one_shot, "native": lambda: exe.run([a, b], [out])}


def measure(runs: int = 2000, repeats: int = 5) -> dict[str, float]:
    """Median ns per call of each runner."""
    return {name: median_ns(fn, runs, repeats) for name, fn in runners().items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2000, help="timed calls per repeat")
    ap.add_argument("--repeats", type=int, default=5, help="repeats; the median of their medians is reported")
    ap.add_argument("--profile", action="store_true", help="cProfile the reusable compute() loop")
    args = ap.parse_args(argv)
    if args.profile:
        compute = runners()["reusable"]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.runs):
            compute()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0
    result = measure(args.runs, args.repeats)
    print(f"compute() of a 4-element float32 ADD, median of {args.repeats} x {args.runs} runs (median of medians):")
    for name, ns in result.items():
        print(f"  {name:9s} {ns / 1e3:8.2f} us")
    verdict = "met" if result["reusable"] <= TARGET_NS else "NOT met"
    print(f"target for a reusable execution: <= {TARGET_NS / 1e3:.0f} us: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
