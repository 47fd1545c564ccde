"""Run the fuzz trials of tests/fuzz/generators.py for N minutes (issue 17).

    .venv/bin/python tests/fuzz/run.py [--minutes N] [--seed S]

Each trial runs in a forked child (a crash is counted, never fatal) and the
script ends with ``fuzz: T trials, C crashes, E unexpected exceptions, W wrong
results`` and the first few findings with their seeds; exit status 1 if any.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/ (tflite_builder)

from fuzz.generators import TRIALS, run_isolated


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    end = time.monotonic() + args.minutes * 60
    counts = {"crash": 0, "unexpected": 0, "wrong": 0}
    findings: list[str] = []
    trials = 0
    kinds = itertools.cycle(sorted(TRIALS))
    for seed in itertools.count(args.seed):
        if time.monotonic() >= end:
            break
        kind = next(kinds)
        outcome = run_isolated(TRIALS[kind], seed)
        trials += 1
        if outcome is not None:
            counts[outcome[0]] += 1
            findings.append(f"{kind} seed {seed}: {outcome[0]}: {outcome[1]}")
    print(f"fuzz: {trials} trials, {counts['crash']} crashes, {counts['unexpected']} unexpected exceptions, "
          f"{counts['wrong']} wrong results")  # fmt: skip
    for line in findings[:20]:
        print("  " + line)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
