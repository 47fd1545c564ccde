"""Two native artifacts of one model timed against each other in one process.

Run from the repository root::

    python benchmarks/artifact_ab.py A.so B.so [--threads 1 2] [--rounds 12] [--runs 40]

``A.so`` and ``B.so`` are what ``nnc compile`` wrote for the same model
(for example by two checkouts of nnc, to measure a change), each with its
``.so.weights`` beside it.  Both are loaded into this process and run on
zero inputs with ``nnc_model_run``: blocks of ``--runs`` computations, A
and B alternated (the order flipped every round), ``--rounds`` blocks each,
at each thread count (``nnc_model_set_num_threads``).  Each artifact has
its own thread pool, so a pause between blocks lets the other's workers go
to sleep first.

Printed per thread count: the minimum and the median of the blocks'
median latencies, and B / A of both.  On a machine whose speed drifts
from minute to minute (a shared virtual machine), alternating blocks in
one process keeps the drift out of the ratio, where separate benchmark
runs minutes apart do not.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

#: seconds between blocks: longer than the thread pool's idle spin, so the
#: other artifact's workers are asleep when a block starts
PAUSE_S = 0.01


def load(path: str) -> Callable[[], None]:
    """A callable running one computation of the artifact at ``path``
    (inputs zero, outputs discarded); its buffers live in the closure."""
    lib = ctypes.CDLL(path)
    lib.nnc_model_input_size.restype = ctypes.c_size_t
    lib.nnc_model_output_size.restype = ctypes.c_size_t
    weights = np.fromfile(path + ".weights", dtype=np.uint8)
    ins = [np.zeros(lib.nnc_model_input_size(i), np.uint8) for i in range(lib.nnc_model_num_inputs())]
    outs = [np.zeros(lib.nnc_model_output_size(i), np.uint8) for i in range(lib.nnc_model_num_outputs())]
    in_ptrs = (ctypes.c_void_p * len(ins))(*[a.ctypes.data for a in ins])
    out_ptrs = (ctypes.c_void_p * len(outs))(*[a.ctypes.data for a in outs])
    run = lib.nnc_model_run
    run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

    def compute() -> None:
        rc = run(in_ptrs, out_ptrs, weights.ctypes.data)
        if rc != 0:
            raise RuntimeError(f"{path}: nnc_model_run returned {rc}")

    compute.lib = lib  # type: ignore[attr-defined]  # keeps the library and the buffers alive
    compute.buffers = (weights, ins, outs)  # type: ignore[attr-defined]
    return compute


def block(compute: Callable[[], None], runs: int) -> float:
    """The median latency of ``runs`` computations, in seconds."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        compute()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="artifact A (.so)")
    ap.add_argument("b", help="artifact B (.so) of the same model")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=12, help="blocks of each artifact per thread count")
    ap.add_argument("--runs", type=int, default=40, help="computations per block")
    args = ap.parse_args()
    for path in (args.a, args.b):
        for need in (path, path + ".weights"):
            if not os.path.isfile(need):
                ap.error(f"{need}: no such file (nnc compile MODEL -o {path} writes both)")
    computes = [load(args.a), load(args.b)]
    for threads in args.threads:
        for c in computes:
            c.lib.nnc_model_set_num_threads(threads)  # type: ignore[attr-defined]
            block(c, 10)  # warm-up: pool started, caches filled
        medians: tuple[list[float], list[float]] = ([], [])
        for r in range(args.rounds):
            for k in (0, 1) if r % 2 == 0 else (1, 0):
                time.sleep(PAUSE_S)
                medians[k].append(block(computes[k], args.runs))
        a, b = medians
        print(
            f"{threads} thread(s): A min {min(a) * 1e3:.3f} median {statistics.median(a) * 1e3:.3f} ms, "
            f"B min {min(b) * 1e3:.3f} median {statistics.median(b) * 1e3:.3f} ms; "
            f"B/A min {min(b) / min(a):.3f} median {statistics.median(b) / statistics.median(a):.3f}"
        )


if __name__ == "__main__":
    main()
