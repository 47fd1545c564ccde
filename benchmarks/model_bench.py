"""nnc against LiteRT on real TFLite models: compile, prepare, inference.

Run from the repository root (LiteRT columns need the optional extra,
``pip install -e '.[bench]'``)::

    python benchmarks/model_bench.py [--models DIR] [--runs 50] [--threads 1 2]
                                     [--json results.json] [--only NAME]

For each ``*.tflite`` in ``--models`` (default ../shared/models) it reports:

* import: ``nnc.import_tflite`` (parse + NNAPI model + checks);
* cold compile: ``Compilation.finish()`` with caching into an empty directory
  and nnc's in-process cache of compiled modules cleared (the whole pipeline:
  xDSL passes, LLVM O3, object emission, writing the cache entry);
* cache-hit prepare: ``finish()`` of a fresh import with the same token and
  directory (key, verified read, loading the object);
* inference latency, median and p90 over ``--runs`` timed runs after warm-up,
  at each thread count: nnc computes a reusable execution whose buffers are
  bound once (``compute()`` only), LiteRT runs ``invoke()`` of an interpreter
  built with ``num_threads`` and its default CPU delegate (XNNPACK), inputs
  set once — the same work on both sides, in the same process run;
* GFLOP/s = 2 x multiply-accumulates / median latency, the MACs counted from
  the imported model (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and LSTM
  gate matmuls, as in ../shared/models/README.md);
* the ratio nnc / LiteRT of the median latencies per model and thread count,
  and their geometric mean (below 1 means nnc is faster).

nnc's generated code is single-threaded: it has no thread pool yet, so its
2-thread latency is the same code run again (the table says so), while
LiteRT's uses two threads.  Every nnc output is checked against the stored
LiteRT reference (``NAME.io.npz``) before it is timed.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import nnc
from nnc import OperationType as Op
from nnc.model import Model
from nnc.operand_types import dtype_of

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = os.path.join(HERE, "..", "..", "shared", "models")
TOKEN = bytes(range(32))


def macs(model: Model) -> int:
    """Multiply-accumulates of the conv / depthwise / FC / LSTM-gate matmuls."""
    total = 0
    for op in model.operations:
        t = Op(op.type)
        dims = [model.operands[i].dims for i in op.inputs]
        out = model.operands[op.outputs[0]].dims
        if t == Op.CONV_2D:
            total += math.prod(out) * math.prod(dims[1][1:])
        elif t == Op.DEPTHWISE_CONV_2D:
            total += math.prod(out) * dims[1][1] * dims[1][2]
        elif t == Op.FULLY_CONNECTED:
            total += math.prod(out) * dims[1][1]
        elif t == Op.UNIDIRECTIONAL_SEQUENCE_LSTM:
            x, w_in, w_rec = dims[0], dims[4], dims[8]  # input, input-to-forget, recurrent-to-forget
            steps = x[0] * x[1]
            total += steps * 4 * (w_in[0] * w_in[1] + w_rec[0] * w_rec[1])
    return total


def percentile(xs: list[float], q: float) -> float:
    return float(np.percentile(np.array(xs), q))


def time_runs(fn, runs: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def inputs_for(model: Model, io) -> list[np.ndarray]:
    """The stored input; zeros for the state inputs an import adds."""
    rest = [np.zeros(model.operands[i].dims, dtype_of(model.operands[i].type)) for i in model.inputs[1:]]
    return [np.ascontiguousarray(io["input_0"]), *rest]


def compile_cold(path: str, cache: str) -> tuple[float, float, Model, nnc.Compilation]:
    from nnc import driver as executable  # the in-process cache of compiled modules

    t = time.perf_counter()
    model = nnc.import_tflite(path)
    t_import = time.perf_counter() - t
    executable._CACHE.clear()
    comp = nnc.Compilation(model)
    comp.set_caching(cache, TOKEN)
    t = time.perf_counter()
    comp.finish()
    return t_import, time.perf_counter() - t, model, comp


def prepare_hit(path: str, cache: str, runs: int = 3) -> float:
    from nnc import driver as executable  # the in-process cache of compiled modules

    times = []
    for _ in range(runs):
        executable._CACHE.clear()
        comp = nnc.Compilation(nnc.import_tflite(path))
        comp.set_caching(cache, TOKEN)
        t = time.perf_counter()
        comp.finish()
        times.append(time.perf_counter() - t)
        assert comp.cache_events and comp.cache_events[-1][0] == "hit", comp.cache_events
    return statistics.median(times)


def nnc_runner(model: Model, comp: nnc.Compilation, inputs: list[np.ndarray]):
    """(compute callable, outputs): one execution bound once, computed again and again."""
    outs = [np.zeros(model.operands[i].dims, dtype_of(model.operands[i].type)) for i in model.outputs]
    ex = nnc.Execution(comp)
    reusable = hasattr(ex, "set_reusable")
    if reusable:
        ex.set_reusable(True)

    def bind(e: nnc.Execution) -> nnc.Execution:
        for k, x in enumerate(inputs):
            e.set_input(k, x)
        for k, y in enumerate(outs):
            e.set_output(k, y)
        return e

    bind(ex)
    if reusable:
        return ex.compute, outs
    return (lambda: bind(nnc.Execution(comp)).compute()), outs


def litert_runner(path: str, inputs: list[np.ndarray], threads: int):
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=path, num_threads=threads)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], inputs[0])
    return it.invoke


def check(out: np.ndarray, ref: np.ndarray) -> float:
    err = float(np.abs(out - ref).max())
    if err > 1e-4 * float(np.abs(ref).max()) or out.argmax() != ref.argmax():
        raise SystemExit(f"nnc output differs from the reference: max error {err:.3g}")
    return err


def bench_model(path: str, args, have_litert: bool) -> dict:
    name = os.path.basename(path).removesuffix(".tflite")
    io = np.load(path.removesuffix(".tflite") + ".io.npz")
    row: dict = {"model": name}
    with tempfile.TemporaryDirectory() as cache:
        row["import_s"], row["compile_cold_s"], model, comp = compile_cold(path, cache)
        row["prepare_hit_ms"] = prepare_hit(path, cache) * 1e3
    row["macs"] = macs(model)
    inputs = inputs_for(model, io)
    run, outs = nnc_runner(model, comp, inputs)
    run()
    row["max_abs_error"] = check(outs[0], io["output_0"])
    for th in args.threads:
        t = time_runs(run, args.runs, args.warmup)
        row[f"nnc_t{th}_median_ms"], row[f"nnc_t{th}_p90_ms"] = statistics.median(t) * 1e3, percentile(t, 90) * 1e3
        row[f"nnc_t{th}_gflops"] = 2 * row["macs"] / statistics.median(t) / 1e9
        if have_litert:
            lt = time_runs(litert_runner(path, inputs, th), args.runs, args.warmup)
            row[f"litert_t{th}_median_ms"] = statistics.median(lt) * 1e3
            row[f"litert_t{th}_p90_ms"] = percentile(lt, 90) * 1e3
            row[f"litert_t{th}_gflops"] = 2 * row["macs"] / statistics.median(lt) / 1e9
            row[f"ratio_t{th}"] = row[f"nnc_t{th}_median_ms"] / row[f"litert_t{th}_median_ms"]
    return row


def table(rows: list[dict], threads: list[int], have_litert: bool) -> str:
    head = ["model", "MMACs", "import s", "cold s", "hit ms"]
    for th in threads:
        head += [f"nnc t{th} med/p90 ms", f"GFLOP/s"]
        if have_litert:
            head += [f"LiteRT t{th} med/p90 ms", "GFLOP/s", "nnc/LiteRT"]
    lines = [head]
    for r in rows:
        cells = [r["model"], f"{r['macs'] / 1e6:.1f}", f"{r['import_s']:.2f}", f"{r['compile_cold_s']:.1f}",
                 f"{r['prepare_hit_ms']:.1f}"]  # fmt: skip
        for th in threads:
            cells += [f"{r[f'nnc_t{th}_median_ms']:.2f}/{r[f'nnc_t{th}_p90_ms']:.2f}", f"{r[f'nnc_t{th}_gflops']:.1f}"]
            if have_litert:
                cells += [f"{r[f'litert_t{th}_median_ms']:.2f}/{r[f'litert_t{th}_p90_ms']:.2f}",
                          f"{r[f'litert_t{th}_gflops']:.1f}", f"{r[f'ratio_t{th}']:.2f}"]  # fmt: skip
        lines.append(cells)
    widths = [max(len(str(row[k])) for row in lines) for k in range(len(head))]
    out = ["  ".join(str(c).rjust(w) for c, w in zip(row, widths)) for row in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS, help="directory of NAME.tflite + NAME.io.npz")
    ap.add_argument("--only", default="", help="only models whose name contains this")
    ap.add_argument("--runs", type=int, default=50, help="timed runs per measurement (>= 50 for the issue's table)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON (- for stdout)")
    args = ap.parse_args(argv)
    paths = sorted(p for p in glob.glob(os.path.join(args.models, "*.tflite")) if args.only in os.path.basename(p))
    if not paths:
        print(f"model_bench: no .tflite models in {args.models}", file=sys.stderr)
        return 2
    try:
        import ai_edge_litert  # noqa: F401

        have_litert = True
    except ImportError:
        have_litert = False
        print("model_bench: ai-edge-litert is not installed (pip install -e '.[bench]'): nnc only", file=sys.stderr)
    rows = []
    for p in paths:
        print(f"model_bench: {os.path.basename(p)} ...", file=sys.stderr, flush=True)
        rows.append(bench_model(p, args, have_litert))
    print(table(rows, args.threads, have_litert))
    print("nnc's native code is single-threaded: its t2 columns run the same code as t1.")
    summary: dict = {"models": rows, "runs": args.runs, "threads": args.threads, "litert": have_litert}
    if have_litert:
        for th in args.threads:
            ratios = [r[f"ratio_t{th}"] for r in rows]
            summary[f"geomean_ratio_t{th}"] = math.exp(sum(map(math.log, ratios)) / len(ratios))
            print(f"geometric mean nnc/LiteRT at {th} thread(s): {summary[f'geomean_ratio_t{th}']:.2f}")
    if args.json:
        text = json.dumps(summary, indent=2)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
