"""nnc against LiteRT on real TFLite models: compile, prepare, inference.

Run from the repository root (LiteRT columns need the optional extra,
``pip install -e '.[bench]'``)::

    python benchmarks/model_bench.py [--models DIR] [--runs 30] [--repeats 3] [--threads 1 2]
                                     [--json results.json] [--only NAME] [--markdown]
                                     [--cache [--cache-runs 3] [--cache-hits 5]]

Above the table it prints the CPU (``/proc/cpuinfo``: model name and vector
flags), the load average, the host's float32 FMA peak per core (measured,
:mod:`fma_peak`) and nnc's per-``compute()`` overhead on a 4-element ADD
(:mod:`overhead_bench`).  For each ``*.tflite`` in ``--models`` (default
../shared/models):

* import: ``nnc.import_tflite`` (parse + NNAPI model + checks); a model nnc
  cannot import or compile is reported as "not supported: <reason>", counted,
  and left out of the geometric means (the output says which);
* cold compile: ``Compilation.finish()`` with caching into an empty directory
  and nnc's in-process cache of compiled modules cleared (the whole pipeline:
  xDSL passes, LLVM, object emission, writing the cache entry);
* cache-hit prepare: ``finish()`` of a fresh import with the same token and
  directory (key, verified read, loading the object);
* with ``--cache``, three more columns from :mod:`cache_bench`, each
  measured in fresh processes (``--cache-runs`` of each): cold compile,
  the first cache hit of a new process, and a hit in a process (a model
  read again, so its fingerprint is computed again) -- medians of wall time;
  off by default, since it compiles each model ``--cache-runs`` more times;
* max diff: nnc's first output against the stored LiteRT reference
  (``NAME.io.npz``), checked before anything is timed (:func:`check`); the
  largest absolute difference is printed (in quanta for quantised outputs);
* inference latency at each thread count: nnc computes a reusable execution
  whose buffers are bound once (``compute()`` only; with
  ``Execution.set_num_threads(n)`` when nnc has it), LiteRT runs ``invoke()``
  of an interpreter built with ``num_threads`` and its default CPU delegate
  (XNNPACK), inputs set once -- the same work on both sides.  ``--repeats``
  rounds of ``--runs`` timed runs, nnc and LiteRT alternating round by round
  so that a change of load hits both; the median is the median of the
  rounds' medians, p90 is over all runs; each model is measured in a fresh
  process, so no thread pool of an earlier model (nnc's or a LiteRT
  interpreter's) is still spinning or holding memory;
* GFLOP/s = 2 x multiply-accumulates / median latency, the MACs counted from
  the imported model (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and LSTM
  gate matmuls, as in ../shared/models/README.md), and as a percentage of the
  measured peak (peak per core x threads): the fp32 FMA peak, or for a model
  whose MACs run on the int8 kernels the int8 peak (:func:`fma_peak.measure_int8`:
  the target's best exact int8 multiply-accumulate);
* the ratio nnc / LiteRT of the median latencies per model and thread count,
  and their geometric mean (below 1 means nnc is faster), over all models and
  over the float and the int8 models apart (with the worst ratio of each).

``--markdown`` prints the table as markdown (the format of benchmarks/RESULTS.md).
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import cache_bench
import fma_peak
import nnc
import overhead_bench
from nnc import driver  # its _CACHE: the in-process cache of compiled modules
from nnc.model import Model
from nnc.operand_types import dtype_of
from nnc.profile import macs_of
from nnc.runtime.jit import Target

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = os.path.join(HERE, "..", "..", "shared", "models")
TOKEN = bytes(range(32))


def macs(model: Model) -> int:
    """Multiply-accumulates of the operations :data:`nnc.profile.MAC_COUNTS`
    counts (convolutions, fully connected, matmuls, LSTM gates), with the
    shapes the model declares."""
    return sum(macs_of(model.call_for(k, op)) or 0 for k, op in enumerate(model.operations))


#: operand types of 8-bit quantised activations
QUANT8 = (nnc.OperandType.TENSOR_QUANT8_ASYMM, nnc.OperandType.TENSOR_QUANT8_ASYMM_SIGNED)


def is_int8(model: Model) -> bool:
    """Whether the model's multiply-accumulates run on the int8 kernels: an
    operation counted by :func:`macs` reads an 8-bit quantised input."""
    for k, op in enumerate(model.operations):
        if macs_of(model.call_for(k, op)) and model.operands[op.inputs[0]].type in QUANT8:
            return True
    return False


def time_runs(fn, runs: int, warmup: int = 0) -> list[float]:
    for _ in range(warmup):
        fn()
    clock = time.perf_counter
    times = []
    for _ in range(runs):
        t = clock()
        fn()
        times.append(clock() - t)
    return times


def inputs_for(model: Model, io) -> list[np.ndarray]:
    """The stored input; zeros for the state inputs an import adds."""
    rest = [np.zeros(model.operands[i].dims, dtype_of(model.operands[i].type)) for i in model.inputs[1:]]
    return [np.ascontiguousarray(io["input_0"]), *rest]


def compile_cold(path: str, cache: str) -> tuple[float, float, Model, nnc.Compilation]:
    t = time.perf_counter()
    model = nnc.import_tflite(path)
    t_import = time.perf_counter() - t
    driver._CACHE.clear()
    comp = nnc.Compilation(model)
    comp.set_caching(cache, TOKEN)
    t = time.perf_counter()
    comp.finish()
    return t_import, time.perf_counter() - t, model, comp


def prepare_hit(path: str, cache: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        driver._CACHE.clear()
        comp = nnc.Compilation(nnc.import_tflite(path))
        comp.set_caching(cache, TOKEN)
        t = time.perf_counter()
        comp.finish()
        times.append(time.perf_counter() - t)
        assert comp.cache_events and comp.cache_events[-1][0] == "hit", comp.cache_events
    return statistics.median(times)


def has_threads() -> bool:
    """Whether nnc's generated code can use several threads (nnc extension)."""
    return hasattr(nnc.Execution, "set_num_threads")


def nnc_runner(model: Model, comp: nnc.Compilation, inputs: list[np.ndarray], threads: int):
    """(compute callable, outputs): one reusable execution bound once."""
    outs = [np.zeros(model.operands[i].dims, dtype_of(model.operands[i].type)) for i in model.outputs]
    ex = nnc.Execution(comp)
    ex.set_reusable(True)
    if has_threads():
        ex.set_num_threads(threads)
    for k, x in enumerate(inputs):
        ex.set_input(k, x)
    for k, y in enumerate(outs):
        ex.set_output(k, y)
    return ex.compute, outs


def litert_runner(path: str, inputs: list[np.ndarray], threads: int):
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=path, num_threads=threads)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], inputs[0])
    return it.invoke


class Mismatch(Exception):
    """nnc's output is not LiteRT's reference within the tolerance."""


#: quantised outputs: LiteRT's own CPU kernels (builtin, reference) land at
#: most 0.66 units from its XNNPACK reference on average and agree with its
#: argmax at 99.3% of positions or more on the shared int8 models
#: (../shared/models/README.md, "Tolerance"); nnc rounds as NNAPI's reference
#: kernels do, so it may differ as much: it must stay within twice that spread
QUANT_MEAN_UNITS = 1.5
QUANT_ARGMAX_AGREEMENT = 0.985

#: dynamic-range ("hybrid") models: nnc computes in float32 with the weights
#: dequantised, LiteRT's hybrid kernels quantise the activations on the fly,
#: and those kernels differ from each other by up to 0.16 of the largest
#: output (../shared/models/README.md, "A dynamic-range quantised model"):
#: only the top-1 class and a fifth of the largest output are asked for
HYBRID_RELATIVE = 0.2


def is_hybrid(path: str) -> bool:
    """Whether a TFLite model has dynamic-range operators (int8 weights,
    float32 activations), as the importer reports them."""
    return any(o.note.startswith("hybrid") for o in nnc.translate_tflite(path).operators)


def check(out: np.ndarray, ref: np.ndarray, hybrid: bool = False) -> float:
    """The largest absolute difference between nnc's output and LiteRT's
    reference (in quanta for integer outputs), if within the tolerance:

    * float outputs: within 1e-4 of the largest reference value (of
      :data:`HYBRID_RELATIVE` of it for a ``hybrid`` model), the same
      argmax;
    * quantised (integer) outputs: the argmax over the last axis the same at
      :data:`QUANT_ARGMAX_AGREEMENT` of the positions or more (at every
      position of a one-row output: a classifier's top-1), and the mean
      absolute difference at most :data:`QUANT_MEAN_UNITS` units.

    Otherwise :class:`Mismatch`."""
    if out.shape != ref.shape:
        raise Mismatch(f"nnc output has shape {out.shape}, the reference {ref.shape}")
    diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
    err = float(diff.max())
    if np.issubdtype(ref.dtype, np.integer):
        rows_out, rows_ref = out.reshape(-1, out.shape[-1]), ref.reshape(-1, ref.shape[-1])
        agree = float((rows_out.argmax(-1) == rows_ref.argmax(-1)).mean())
        mean = float(diff.mean())
        if agree < QUANT_ARGMAX_AGREEMENT or mean > QUANT_MEAN_UNITS:
            raise Mismatch(f"nnc output differs from the reference: mean difference {mean:.3g} units "
                           f"(max {err:.3g}), argmax agrees at {agree:.2%} of positions")  # fmt: skip
        return err
    if err > (HYBRID_RELATIVE if hybrid else 1e-4) * float(np.abs(ref).max()) or out.argmax() != ref.argmax():
        raise Mismatch(f"nnc output differs from the reference: max difference {err:.3g}, "
                       f"argmax {out.argmax()} vs {ref.argmax()}")  # fmt: skip
    return err


def not_supported(error: nnc.NNError) -> str:
    """A one-line reason: the operators that failed, with counts, and the first reason."""
    problems = getattr(error, "problems", None)
    if not problems:
        return str(error).splitlines()[0][:100]
    counts: dict[str, int] = {}
    for _, op, _why in problems:
        counts[op] = counts.get(op, 0) + 1
    ops = ", ".join(f"{op} x{n}" for op, n in counts.items())
    why = problems[0][2].removeprefix("NNAPI rejects the mapped operation: ")
    if len(why) > 90:
        why = f"{why[:40]}...{why[-45:]}"  # the end says what was found
    return f"{ops} (e.g. {why})"


def median_of_rounds(rounds: list[list[float]]) -> tuple[float, float]:
    """(median of the rounds' medians, p90 of all runs), in ms."""
    med = statistics.median(statistics.median(r) for r in rounds)
    return med * 1e3, float(np.percentile(np.concatenate(rounds), 90)) * 1e3


def bench_model(path: str, args, have_litert: bool, peaks: tuple[float, float]) -> dict:
    """One model's row; ``peaks``: the fp32 and int8 peaks per core (GOP/s),
    the int8 one for a model whose MACs run on the int8 kernels."""
    name = os.path.basename(path).removesuffix(".tflite")
    io = np.load(path.removesuffix(".tflite") + ".io.npz")
    row: dict = {"model": name}
    try:
        with tempfile.TemporaryDirectory() as cache:
            row["import_s"], row["compile_cold_s"], model, comp = compile_cold(path, cache)
            row["prepare_hit_ms"] = prepare_hit(path, cache) * 1e3
    except nnc.NNError as e:
        row["not_supported"] = not_supported(e)
        return row
    row["macs"] = macs(model)
    row["int8"] = is_int8(model)
    peak = peaks[1] if row["int8"] else peaks[0]
    if args.cache:
        row["cache"] = cache_bench.measure(path, runs=args.cache_runs, hits=args.cache_hits)
    inputs = inputs_for(model, io)
    for th in args.threads:
        run, outs = nnc_runner(model, comp, inputs, th)
        run()
        row["max_diff"] = check(outs[0], io["output_0"], is_hybrid(path))
        sides = {"nnc": run}
        if have_litert:
            sides["litert"] = litert_runner(path, inputs, th)
        rounds: dict[str, list[list[float]]] = {side: [] for side in sides}
        for fn in sides.values():
            time_runs(fn, args.warmup)
        for _ in range(args.repeats):
            for side, fn in sides.items():
                rounds[side].append(time_runs(fn, args.runs))
        for side in sides:
            med, p90 = median_of_rounds(rounds[side])
            row[f"{side}_t{th}_median_ms"], row[f"{side}_t{th}_p90_ms"] = med, p90
            row[f"{side}_t{th}_gflops"] = 2 * row["macs"] / med / 1e6
            row[f"{side}_t{th}_peak_pct"] = 100 * row[f"{side}_t{th}_gflops"] / (peak * th)
        if have_litert:
            row[f"ratio_t{th}"] = row[f"nnc_t{th}_median_ms"] / row[f"litert_t{th}_median_ms"]
    return row


# -- the table ---------------------------------------------------------------------------------------
def columns(have_litert: bool, cache: bool = False) -> list[str]:
    head = ["model", "MMACs", "import", "cold compile", "cache-hit prepare", "max diff", "threads",
            "nnc median / p90", "nnc GFLOP/s", "nnc % peak"]  # fmt: skip
    if have_litert:
        head += ["LiteRT median / p90", "LiteRT GFLOP/s", "LiteRT % peak", "nnc / LiteRT"]
    if cache:
        head += ["cold (new process)", "hit (new process)", "hit (in process)"]
    return head


def cells(r: dict, threads: list[int], have_litert: bool, cache: bool = False) -> list[list[str]]:
    """One line per model and thread count (one for an unsupported model)."""
    width = len(columns(have_litert, cache))
    if "not_supported" in r:
        return [[r["model"], f"not supported: {r['not_supported']}"] + [""] * (width - 2)]
    lines = []
    for th in threads:
        line = [r["model"], f"{r['macs'] / 1e6:.1f}", f"{r['import_s']:.2f} s", f"{r['compile_cold_s']:.1f} s",
                f"{r['prepare_hit_ms']:.1f} ms", f"{r['max_diff']:.2g}", str(th)]  # fmt: skip
        for side in ("nnc", "litert") if have_litert else ("nnc",):
            line += [f"{r[f'{side}_t{th}_median_ms']:.2f} / {r[f'{side}_t{th}_p90_ms']:.2f} ms",
                     f"{r[f'{side}_t{th}_gflops']:.1f}", f"{r[f'{side}_t{th}_peak_pct']:.0f}%"]  # fmt: skip
        if have_litert:
            line.append(f"{r[f'ratio_t{th}']:.2f}")
        if cache:
            c = r["cache"]
            line += [f"{c['cold_s']:.1f} s", f"{c['new_process_hit_s'] * 1e3:.1f} ms", f"{c['hit_s'] * 1e3:.1f} ms"]
        lines.append(line)
    return lines


def _has_cache(rows: list[dict]) -> bool:
    return any("cache" in r for r in rows)


def text_table(rows: list[dict], threads: list[int], have_litert: bool) -> str:
    cache = _has_cache(rows)
    lines = [columns(have_litert, cache)] + [c for r in rows for c in cells(r, threads, have_litert, cache)]
    supported = [line for line in lines if not line[1].startswith("not supported")]
    widths = [max(len(line[k]) for line in supported) for k in range(len(lines[0]))]
    out = []
    for line in lines:
        if line[1].startswith("not supported"):
            out.append(f"{line[0].ljust(widths[0])}  {line[1]}")
        else:
            out.append("  ".join([line[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(line[1:], widths[1:])]))
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def markdown_table(rows: list[dict], threads: list[int], have_litert: bool) -> str:
    cache = _has_cache(rows)
    head = columns(have_litert, cache)
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        for line in cells(r, threads, have_litert, cache):
            lines.append("| " + " | ".join(line) + " |")
    return "\n".join(lines)


# -- the machine -------------------------------------------------------------------------------------
VECTOR_FLAGS = ("sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avxvnni")


def cpu_description() -> str:
    """The CPU's model name (with family/model: a virtual machine's name may
    be only "AMD EPYC"), LLVM's name for it, count and vector flags, from
    /proc/cpuinfo."""
    info: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    flags = set(info.get("flags", "").split())
    vector = [f for f in VECTOR_FLAGS if f in flags] + sorted(f for f in flags if f.startswith(("avx512", "amx")))
    return (f"{info.get('model name', 'unknown CPU')} (family {info.get('cpu family', '?')} model "
            f"{info.get('model', '?')}, LLVM: {Target.host().cpu}), {os.cpu_count()} CPUs; "
            f"vector flags: {' '.join(vector) or 'none found'}")  # fmt: skip


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def _have_litert() -> bool:
    try:
        import ai_edge_litert  # noqa: F401
    except ImportError:
        return False
    return True


def _bench_in_child(path: str, argv: list[str], peaks: tuple[float, float]) -> dict:
    """:func:`bench_model` of one model in a fresh process (this script with
    ``--child``, the same options): the thread pools of the models measured
    before it (nnc's and each LiteRT interpreter's) are gone, so none spins
    or holds memory while this one runs."""
    cmd = [sys.executable, os.path.abspath(__file__), *argv, "--child", path, repr(peaks[0]), repr(peaks[1])]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"{path}: exit {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS, help="directory of NAME.tflite + NAME.io.npz")
    ap.add_argument("--only", default="", help="only models whose name contains this")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per round")
    ap.add_argument("--repeats", type=int, default=3, help="rounds; the median of their medians is reported")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON (- for stdout)")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown (as in benchmarks/RESULTS.md)")
    ap.add_argument("--cache", action="store_true",
                    help="add cold compile, new-process and in-process cache hits, each in fresh processes (slow)")
    ap.add_argument("--cache-runs", type=int, default=3, help="with --cache: processes of each kind per model")
    ap.add_argument("--cache-hits", type=int, default=5, help="with --cache: in-process hits per hit process")
    ap.add_argument("--child", nargs=3, metavar=("MODEL", "PEAK", "INT8_PEAK"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        path, fp32, int8 = args.child
        try:
            row = bench_model(path, args, _have_litert(), (float(fp32), float(int8)))
        except Mismatch as e:
            raise SystemExit(f"{os.path.basename(path)}: {e}") from None
        print(json.dumps(row))
        return 0
    paths = sorted(p for p in glob.glob(os.path.join(args.models, "*.tflite")) if args.only in os.path.basename(p))
    if not paths:
        print(f"model_bench: no .tflite models in {args.models}", file=sys.stderr)
        return 2
    have_litert = _have_litert()
    if not have_litert:
        print("model_bench: ai-edge-litert is not installed (pip install -e '.[bench]'): nnc only", file=sys.stderr)
    load_before = os.getloadavg()
    peak = fma_peak.measure()
    int8_peak = fma_peak.measure_int8()
    overhead = overhead_bench.measure(runs=2000, repeats=5)
    print(f"CPU: {cpu_description()}")
    print(f"fp32 FMA peak: {peak.gflops:.1f} GFLOP/s per core ({peak.isa}, {peak.lanes} float32 lanes, measured)")
    print(f"int8 peak: {int8_peak.gops:.1f} GOP/s per core ({int8_peak.form}, {int8_peak.lanes} int32 lanes, measured); "
          "the % peak of int8 models is of this one")  # fmt: skip
    print(f"compute() overhead of a 4-element ADD (median of 5 x 2000): {overhead['reusable'] / 1e3:.1f} us reusable, "
          f"{overhead['one-shot'] / 1e3:.1f} us non-reusable (a new execution bound each time)")  # fmt: skip
    rows = []
    for p in paths:
        print(f"model_bench: {os.path.basename(p)} ...", file=sys.stderr, flush=True)
        rows.append(_bench_in_child(p, argv if argv is not None else sys.argv[1:], (peak.gflops, int8_peak.gops)))
    load_after = os.getloadavg()
    print(f"latency: median of {args.repeats} x {args.runs} runs (median of the rounds' medians; p90 over all runs), "
          f"after {args.warmup} warm-up runs; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
          f"on {os.cpu_count()} CPUs")  # fmt: skip
    print((markdown_table if args.markdown else text_table)(rows, args.threads, have_litert))
    if not has_threads():
        print("nnc's generated code is single-threaded here (no Execution.set_num_threads): "
              "its 2-thread lines run the same code as 1 thread.")  # fmt: skip
    supported = [r for r in rows if "not_supported" not in r]
    skipped = [r["model"] for r in rows if "not_supported" in r]
    if skipped:
        print(f"{len(skipped)} of {len(rows)} model(s) not supported by nnc, left out of the geometric means: "
              f"{', '.join(skipped)}")  # fmt: skip
    summary: dict = {"cpu": cpu_description(), "peak_gflops_per_core": peak.gflops, "vector_isa": peak.isa,
                     "int8_peak_gops_per_core": int8_peak.gops, "int8_form": int8_peak.form,
                     "overhead_ns": overhead, "models": rows, "runs": args.runs, "repeats": args.repeats,
                     "threads": args.threads, "litert": have_litert, "nnc_threads": has_threads(),
                     "load_average": [load_before[0], load_after[0]]}  # fmt: skip
    if have_litert and supported:
        for th in args.threads:
            summary[f"geomean_ratio_t{th}"] = geomean([r[f"ratio_t{th}"] for r in supported])
            print(f"geometric mean nnc/LiteRT at {th} thread(s) over {len(supported)} model(s): "
                  f"{summary[f'geomean_ratio_t{th}']:.2f}")  # fmt: skip
            for kind, int8 in (("float", False), ("int8", True)):
                part = [r[f"ratio_t{th}"] for r in supported if r["int8"] == int8]
                if part:
                    summary[f"geomean_ratio_{kind}_t{th}"] = geomean(part)
                    print(f"  {kind} models ({len(part)}): {geomean(part):.2f}, worst {max(part):.2f}")
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
