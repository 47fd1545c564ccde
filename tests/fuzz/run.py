"""Run the fuzz trials of tests/fuzz/ for N minutes.

    .venv/bin/python tests/fuzz/run.py [--minutes N] [--seed S] [--kinds api,graph,...]

The kinds take turns, a batch of consecutive seeds at a time, each batch in
one forked child (a crash or a hang is counted with its seed, never fatal;
the batch goes on after it in a new child).  The script ends with ``fuzz: T
trials, C crashes, I internal compiler errors, M mismatches, E unexpected
exceptions, W wrong results`` (hangs count as crashes), how many generated
models the rules rejected, trials per kind (and, for a kind whose trial has
a ``family``, per operation family), the seed range and the first findings
with their kind and seed; exit status 1 if any.  Reproduce one with
``--kinds KIND --seed SEED --trials 1``.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/ (tflite_builder)

from fuzz.common import is_finding
from fuzz.generators import TRIALS, run_isolated

#: seeds per child, by kind (cheap kinds in longer batches)
BATCH = {"api": 50, "api-sequence": 20, "file": 20, "graph": 16, "runtime-input": 10, "cache": 3, "edges": 10}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--trials", type=int, default=0, help="stop after this many trials (0: no limit)")
    ap.add_argument("--seed", type=int, default=int(time.time()), help="first seed")
    ap.add_argument("--kinds", default=",".join(TRIALS), help=f"comma-separated subset of {','.join(TRIALS)}")
    args = ap.parse_args()
    kinds = args.kinds.split(",")
    unknown = set(kinds) - set(TRIALS)
    if unknown:
        ap.error(f"unknown kinds {sorted(unknown)}")
    end = time.monotonic() + args.minutes * 60
    counts: collections.Counter[str] = collections.Counter()
    per_kind: collections.Counter[str] = collections.Counter()
    findings: list[str] = []
    #: (kind, family) -> [trials, rejected] for kinds whose trial names a family
    families: collections.defaultdict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    trials, seed, turn = 0, args.seed, 0
    while time.monotonic() < end and (not args.trials or trials < args.trials):
        kind = kinds[turn % len(kinds)]
        turn += 1
        n = BATCH.get(kind, 5)
        if args.trials:
            n = min(n, args.trials - trials)
        for s, outcome in run_isolated(TRIALS[kind], range(seed, seed + n)):
            trials += 1
            per_kind[kind] += 1
            seed = s + 1
            family = getattr(TRIALS[kind], "family", None)
            if family is not None:
                tally = families[kind, family(s)]
                tally[0] += 1
                tally[1] += outcome is not None and not is_finding(outcome)
            if outcome is not None:
                counts[outcome[0]] += 1
            if is_finding(outcome):
                findings.append(f"{kind} seed {s}: {outcome[0]}: {outcome[1]}")
                print(findings[-1], flush=True)
    crashes = counts["crash"] + counts["hang"]
    print(f"fuzz: {trials} trials, {crashes} crashes, {counts['ice']} internal compiler errors, "
          f"{counts['mismatch']} mismatches, {counts['unexpected']} unexpected exceptions, "
          f"{counts['wrong']} wrong results")  # fmt: skip
    print(f"generated models the rules rejected (no finding): {counts['rejected']}")
    print(f"seeds {args.seed}..{seed - 1}; per kind: " + ", ".join(f"{k} {per_kind[k]}" for k in kinds))
    for (kind, fam), (n, rejected) in sorted(families.items()):
        print(f"  {kind} {fam}: {n} trials ({n - rejected} compiled and compared, {rejected} rejected)")
    for line in findings[:20]:
        print("  " + line)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
