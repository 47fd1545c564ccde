"""Cost of one ``nnc_parallel_for`` (the native thread pool, nnc.runtime.threadpool).

Run from the repository root::

    python benchmarks/threadpool_bench.py [--runs 7] [--calls 20000]

A hand-written LLVM IR loop calls ``nnc_parallel_for`` ``--calls`` times back
to back (as consecutive layers do), with

* a trivial body (each chunk stores one word): the pool's fixed cost per
  call -- publishing the job, waking or catching a spinning worker, claiming
  chunks, the join -- against the direct call at 1 thread; with the share of
  the chunks that workers ran (the caller runs those no worker claimed in
  time, which is cheaper: on a loaded machine the share drops and so does
  the cost);
* a body of about ``--work`` microseconds of arithmetic per call, split over
  the threads: the speed-up the pool gives work of that size;
* the same body after ``--gap`` microseconds of serial work (as a model's
  parallel layers follow a serial stretch, e.g. an LSTM's recurrence): the
  workers have gone to sleep meanwhile, so this shows what a wake-up costs:
  the time of serial work + call, and its ratio to 1 thread (below 1: the
  threads made it slower than one thread).

Each figure is the median of ``--runs`` runs, per call, at 1 and 2 threads
(and ``--threads`` more), all in the same process, so the ratios are
comparable even on a loaded machine (the absolute times are not).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import threading
import time

from nnc.runtime import threadpool
from nnc.runtime.jit import LLVM_LOCK, NativeModule, Target, optimize

IR = r"""
declare void @nnc_parallel_for(ptr, ptr, i64)
declare i64 @pthread_self()

; stores one word; counts the chunks run by a thread other than ctx[1000] (the caller) in ctx[1001]
define void @trivial(i64 %b, i64 %e, ptr %ctx) {
entry:
  %p = getelementptr i64, ptr %ctx, i64 %b
  store volatile i64 %e, ptr %p
  %callerp = getelementptr i64, ptr %ctx, i64 1000
  %caller = load i64, ptr %callerp
  %self = call i64 @pthread_self()
  %other = icmp ne i64 %self, %caller
  br i1 %other, label %count, label %done
count:
  %countp = getelementptr i64, ptr %ctx, i64 1001
  atomicrmw add ptr %countp, i64 1 monotonic
  br label %done
done:
  ret void
}

; ctx[0..]: per-index accumulators; each index runs %iters dependent multiply-adds
define void @work(i64 %b, i64 %e, ptr %ctx) {
entry:
  %itp = getelementptr i64, ptr %ctx, i64 1023
  %iters = load volatile i64, ptr %itp
  br label %outer
outer:
  %i = phi i64 [%b, %entry], [%i1, %inner_done]
  %go = icmp slt i64 %i, %e
  br i1 %go, label %inner, label %done
inner:
  %k = phi i64 [0, %outer], [%k1, %inner]
  %x = phi i64 [%i, %outer], [%x1, %inner]
  %m = mul i64 %x, 6364136223846793005
  %x1 = add i64 %m, 1442695040888963407
  %k1 = add i64 %k, 1
  %more = icmp slt i64 %k1, %iters
  br i1 %more, label %inner, label %inner_done
inner_done:
  %p = getelementptr i64, ptr %ctx, i64 %i
  store volatile i64 %x1, ptr %p
  %i1 = add i64 %i, 1
  br label %outer
done:
  ret void
}

; ctx[1022] dependent multiply-adds on this thread, then one parallel_for of %body
define void @gap_loop(ptr %body, ptr %ctx, i64 %calls, i64 %n) {
entry:
  %itp = getelementptr i64, ptr %ctx, i64 1022
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %serial_done]
  %iters = load volatile i64, ptr %itp
  br label %serial
serial:
  %k = phi i64 [0, %loop], [%k1, %serial]
  %x = phi i64 [%i, %loop], [%x1, %serial]
  %m = mul i64 %x, 6364136223846793005
  %x1 = add i64 %m, 1442695040888963407
  %k1 = add i64 %k, 1
  %more = icmp slt i64 %k1, %iters
  br i1 %more, label %serial, label %serial_done
serial_done:
  %p = getelementptr i64, ptr %ctx, i64 1021
  store volatile i64 %x1, ptr %p
  call void @nnc_parallel_for(ptr %body, ptr %ctx, i64 %n)
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %calls
  br i1 %d, label %loop, label %done
done:
  ret void
}

define void @loop(ptr %body, ptr %ctx, i64 %calls, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  call void @nnc_parallel_for(ptr %body, ptr %ctx, i64 %n)
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %calls
  br i1 %d, label %loop, label %done
done:
  ret void
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--work", type=float, default=20.0, help="microseconds of work per call (approx.)")
    ap.add_argument("--threads", type=int, nargs="*", default=[], help="more thread counts to measure")
    ap.add_argument("--gap", type=float, default=500.0, help="microseconds of serial work before the gap call")
    args = ap.parse_args()

    target = Target.host()
    threadpool.install()
    with LLVM_LOCK:
        native = NativeModule(optimize(IR, target, exported=("trivial", "work", "loop", "gap_loop")), target, entry=False)
    signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
    loop, gap_loop = signature(native.address("loop")), signature(native.address("gap_loop"))
    ctx = (ctypes.c_int64 * 1024)()
    trivial, work = native.address("trivial"), native.address("work")

    def per_call(body: int, calls: int, n: int, pick=statistics.median, run=loop) -> float:
        run(body, ctx, min(calls, 100), n)  # warm up (and start the workers)
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter_ns()
            run(body, ctx, calls, n)
            times.append((time.perf_counter_ns() - t0) / calls)
        return pick(times)

    # calibrate the work body: 64 indices, iterations per index for --work us at 1 thread
    threadpool.set_num_threads(1)
    ctx[1023] = 1000
    ns_per_iter = per_call(work, 200, 64, pick=min) / (64 * 1000)
    ctx[1023] = max(1, int(args.work * 1000 / (64 * ns_per_iter)))
    ctx[1022] = max(1, int(args.gap * 1000 / ns_per_iter))
    gap_calls = max(20, int(100_000 / (args.gap + args.work)))

    counts = [1, 2, *args.threads]
    print(f"host CPU {target.cpu}, {len(os.sched_getaffinity(0))} CPUs available; load average "
          f"{os.getloadavg()[0]:.2f}; median of {args.runs} runs; gap {args.gap:.0f} us")  # fmt: skip
    print(f"{'threads':>7} {'trivial ns/call':>16} {'on workers':>11} {'work us/call':>13} {'work speed-up':>14} "
          f"{'gap+call us':>12} {'speed-up':>9}")  # fmt: skip
    ctx[1000] = threading.get_ident()  # pthread_self() of this thread
    base = gap_base = None
    for t in counts:
        threadpool.set_num_threads(t)
        ctx[1001] = 0
        empty = per_call(trivial, args.calls, t)
        total = (min(args.calls, 100) + args.runs * args.calls) * t
        busy = per_call(work, max(args.calls // 50, 20), 64)
        base = base or busy
        after_gap = per_call(work, gap_calls, 64, run=gap_loop)
        gap_base = gap_base or after_gap
        print(f"{t:>7} {empty:>16.0f} {ctx[1001] / total:>11.0%} {busy / 1000:>13.1f} {base / busy:>14.2f} "
              f"{after_gap / 1000:>12.1f} {gap_base / after_gap:>9.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
