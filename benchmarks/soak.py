"""Soak: many executions of MobileNetV1 must not grow memory or descriptors.

Runs ``--n`` executions (default 10,000) of the zoo's MobileNetV1 (float32,
0.5 x 160) in four modes taking turns in rounds -- a fresh Execution each
time, one reusable Execution, a Burst, and async computations waited on
through their Event -- after a warm-up round, and prints the resident set
size and the number of open file descriptors at the start and the end:

    soak: 10000 executions in 123.4 s; RSS 210.3 -> 211.0 MiB (+0.3%); fds 12 -> 12

The exit status is 1 if either grew by more than 5%.  Outputs are checked
against the zoo's reference outputs every round.

    .venv/bin/python benchmarks/soak.py [--n N] [--round R]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import nnc

ZOO = os.environ.get("NNC_MODELS", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "models"))
NAME = "mobilenet_v1_0.5_160_float32"


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="executions in all (default 10000)")
    ap.add_argument("--round", type=int, default=25, help="executions per mode before switching (default 25)")
    args = ap.parse_args()

    model = nnc.import_tflite(os.path.join(ZOO, NAME + ".tflite"))
    io = np.load(os.path.join(ZOO, NAME + ".io.npz"))
    x = np.ascontiguousarray(io[io.files[0]], dtype=np.float32)
    ref = io[io.files[1]]
    c = nnc.Compilation(model)
    c.finish()
    out = np.zeros(ref.shape, np.float32)
    reusable = nnc.Execution(c)
    reusable.set_reusable(True)
    reusable.set_input(0, x)
    reusable.set_output(0, out)
    burst = nnc.Burst(c)
    burst_ex = nnc.Execution(c)
    burst_ex.set_reusable(True)
    burst_ex.set_input(0, x)
    burst_ex.set_output(0, out)

    def fresh() -> None:
        ex = nnc.Execution(c)
        ex.set_input(0, x)
        ex.set_output(0, out)
        ex.compute()

    def asynchronous() -> None:
        ex = nnc.Execution(c)
        ex.set_input(0, x)
        ex.set_output(0, out)
        event = ex.start_compute()
        event.wait()
        event.close()

    modes = [fresh, reusable.compute, lambda: burst_ex.burst_compute(burst), asynchronous]

    def round_(mode) -> None:
        for _ in range(args.round):
            mode()
        np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-4)

    for mode in modes:  # warm-up: lazily created pools, arenas and caches
        round_(mode)
    rss0, fds0 = rss_bytes(), open_fds()
    start, done, k = time.perf_counter(), 0, 0
    while done < args.n:
        round_(modes[k % len(modes)])
        done += args.round
        k += 1
    elapsed = time.perf_counter() - start
    rss1, fds1 = rss_bytes(), open_fds()
    growth = (rss1 - rss0) / rss0 * 100
    print(f"soak: {done} executions in {elapsed:.1f} s; RSS {rss0 / 2**20:.1f} -> {rss1 / 2**20:.1f} MiB "
          f"({growth:+.1f}%); fds {fds0} -> {fds1}")  # fmt: skip
    return 0 if growth <= 5 and fds1 <= fds0 * 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())
