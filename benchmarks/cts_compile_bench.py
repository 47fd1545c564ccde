"""Compile time of the conformance corpus, per pipeline stage.

Run from the repository root::

    NNC_COMPILER_IN_PROCESS=1 python benchmarks/cts_compile_bench.py [--cases 100] [--seed 9] [--runs 3]

The test command spends most of its time compiling corpus models
(``tests/test_cts.py``), so this is the number to watch when making the
compiler faster.  It runs ``--cases`` corpus cases drawn with ``--seed``
(the same cases every time) through the conformance harness, ``--runs``
times, and reports the median CPU seconds of a pass over the sample and,
per stage (``driver.timed``: each pass, LLVM IR translation, LLVM), the
median wall seconds.  nnc's in-process cache is cleared before each run.
With ``NNC_COMPILER_IN_PROCESS=1`` the LLVM stage runs in this process, so
the CPU time covers the whole compilation (otherwise LLVM's share is spent
in the worker process and only its wall time shows).

CPU time, not wall time, is the headline: on a shared machine wall time
follows the load of other processes.  Compare two trees by running both
with the same arguments at the same time.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from cts import DEFAULT_CTS_DIR, cases, run_case  # noqa: E402
from nnc import driver  # noqa: E402


def one_run(sample: list) -> tuple[float, dict[str, float]]:
    """CPU seconds of compiling and running ``sample``, and wall seconds per stage."""
    driver._CACHE.clear()
    stages: dict[str, float] = collections.Counter()
    start = time.process_time()
    with driver.timed() as timings:
        for case in sample:
            run_case(case)
    cpu = time.process_time() - start
    for t in timings:
        stages[t.name] += t.seconds
    return cpu, stages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cts-dir", default=DEFAULT_CTS_DIR)
    args = ap.parse_args()
    sample = cases(args.cts_dir)
    random.Random(args.seed).shuffle(sample)
    sample = sample[: args.cases]
    runs = [one_run(sample) for _ in range(args.runs)]
    cpu = statistics.median(r[0] for r in runs)
    where = "LLVM in process" if driver.IN_PROCESS else "LLVM in worker processes (not in the CPU time)"
    print(f"{len(sample)} corpus cases (seed {args.seed}), {where}: median CPU {cpu:.2f} s "
          f"({cpu / len(sample) * 1000:.0f} ms a case) over {args.runs} runs")  # fmt: skip
    names = sorted({n for _, s in runs for n in s}, key=lambda n: -statistics.median(s.get(n, 0.0) for _, s in runs))
    for name in names:
        print(f"  {statistics.median(s.get(name, 0.0) for _, s in runs):8.2f} s  {name}")


if __name__ == "__main__":
    main()
