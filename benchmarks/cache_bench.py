"""Compilation caching benchmark: cold compile vs. cache-hit ``finish()``.

Run from the repository root::

    python benchmarks/cache_bench.py [--models DIR] [--only NAME] [--runs 3] [--hits 15] [--json PATH]
    python benchmarks/cache_bench.py --model ../shared/models/mobilenet_v2_1.0_224_float32.tflite
    python benchmarks/cache_bench.py --synthetic [--alpha 0.5] [--size 128]

By default every ``*.tflite`` in ``--models`` (default ../shared/models) is
measured; ``--model FILE`` (repeatable) names files instead (a TFLite
flatbuffer or an nnc model file, read with ``nnc.load_model``), and
``--synthetic`` builds a MobileNet v1 (Howard et al. 2017) through the API
instead: width multiplier ``--alpha`` at ``--size`` x ``--size`` x 3, float32
with random weights (a strided 3x3 CONV_2D, 13 depthwise-separable blocks,
AVERAGE_POOL_2D, FULLY_CONNECTED to 1000 classes and SOFTMAX).

Every measurement runs in a fresh process (``--child``), as an application
that starts sees it.  Per model, each the median of its samples, wall time
and CPU time (``time.process_time``) of ``Compilation.finish()``:

* cold: caching set, an empty cache directory (the whole pipeline -- xDSL
  passes, LLVM, object emission -- plus writing the entry); ``--runs``
  processes (its CPU time leaves out the LLVM stage, which runs in worker
  processes: :mod:`nnc.runtime.worker`);
* new-process hit: the first ``finish()`` of a process that has imported nnc
  and read the model (what an application restart pays: the model's
  fingerprint, which the cache directory's source index holds for a model
  file unchanged since the cold compilation, nnc's compiler id, reading and
  checking both files, loading the thread pool and the model's object);
  ``--runs`` processes;
* in-process hit: in each of those processes, ``--hits`` more ``finish()``
  calls, each of a model object read again from the file (a new object,
  whose fingerprint the process remembers by the file's identity), and
* same-model hit: ``--hits`` calls for the model object already compiled
  (fingerprint memoised: only the files are read, checked and loaded).

Also reported: ``import nnc`` and reading the model in the hit processes,
and whether the new-process hit imported xDSL (a model read from TFLite
imports the compiler anyway: the importer asks nnc's lowering table what it
supports).  The outputs of every hit process are checked against the cold
compilation's.  The machine's load average is printed before and after:
with other work on the machine, compare the ratios within one run.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = os.path.join(HERE, "..", "..", "shared", "models")
TOKEN = bytes(range(32))

#: (stride, output channels at alpha 1) of MobileNet v1's separable blocks.
BLOCKS = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + [(1, 512)] * 5 + [(2, 1024), (1, 1024)]


def mobilenet(alpha: float = 0.5, size: int = 128, classes: int = 1000, seed: int = 0):
    """(finished model, number of parameters)."""
    import numpy as np

    import nnc
    from nnc import FuseCode, PaddingCode
    from nnc import OperandType as T
    from nnc import OperationType as Op

    rng = np.random.default_rng(seed)
    m = nnc.Model()
    params = 0

    def const(dims, scale):
        nonlocal params
        i = m.add_operand(T.TENSOR_FLOAT32, dims)
        m.set_operand_value(i, (rng.standard_normal(dims) * scale).astype(np.float32))
        params += int(np.prod(dims))
        return i

    def i32(v):
        i = m.add_operand(T.INT32)
        m.set_operand_value(i, int(v))
        return i

    def act(dims):
        return m.add_operand(T.TENSOR_FLOAT32, dims)

    def ch(c):
        return max(8, int(c * alpha))

    x = act([1, size, size, 3])
    inp = x
    hw = (size + 1) // 2
    c = ch(32)
    y = act([1, hw, hw, c])
    m.add_operation(Op.CONV_2D, [x, const([c, 3, 3, 3], np.sqrt(2 / 27)), const([c], 0.01),
                                 i32(PaddingCode.SAME), i32(2), i32(2), i32(FuseCode.RELU6)], [y])  # fmt: skip
    x = y
    for stride, out in BLOCKS:
        hw = (hw + stride - 1) // stride
        d = act([1, hw, hw, c])
        m.add_operation(Op.DEPTHWISE_CONV_2D, [x, const([1, 3, 3, c], np.sqrt(2 / 9)), const([c], 0.01),
                                               i32(PaddingCode.SAME), i32(stride), i32(stride), i32(1),
                                               i32(FuseCode.RELU6)], [d])  # fmt: skip
        o = ch(out)
        p = act([1, hw, hw, o])
        m.add_operation(Op.CONV_2D, [d, const([o, 1, 1, c], np.sqrt(2 / c)), const([o], 0.01),
                                     i32(PaddingCode.SAME), i32(1), i32(1), i32(FuseCode.RELU6)], [p])  # fmt: skip
        x, c = p, o
    pooled = act([1, 1, 1, c])
    m.add_operation(Op.AVERAGE_POOL_2D, [x, i32(PaddingCode.VALID), i32(1), i32(1), i32(hw), i32(hw),
                                         i32(FuseCode.NONE)], [pooled])  # fmt: skip
    logits = act([1, classes])
    m.add_operation(Op.FULLY_CONNECTED, [pooled, const([classes, c], np.sqrt(1 / c)), const([classes], 0.0),
                                         i32(FuseCode.NONE)], [logits])  # fmt: skip
    probs = act([1, classes])
    beta = m.add_operand(T.FLOAT32)
    m.set_operand_value(beta, 1.0)
    m.add_operation(Op.SOFTMAX, [logits, beta], [probs])
    m.identify_inputs_and_outputs([inp], [probs])
    m.finish()
    return m, params


# -- one measurement in this (fresh) process: --child ------------------------------------------------


def _load(source: str):
    """The model named by ``source``: a file, or ``synthetic:ALPHA:SIZE``."""
    import nnc

    if source.startswith("synthetic:"):
        _, alpha, size = source.split(":")
        return mobilenet(float(alpha), int(size))[0]
    return nnc.load_model(source)


def _timed_finish(model, cache_dir: str):
    """(compilation, wall s, CPU s) of one finish() with caching set."""
    import nnc

    c = nnc.Compilation(model)
    c.set_caching(cache_dir, TOKEN)
    t, p = time.perf_counter(), time.process_time()
    c.finish()
    return c, time.perf_counter() - t, time.process_time() - p


def _output(c, model) -> list:
    """The first output for a fixed random input (zeros for other inputs)."""
    import numpy as np

    import nnc
    from nnc.operand_types import dtype_of

    rng = np.random.default_rng(1)
    ex = nnc.Execution(c)
    for k, i in enumerate(model.inputs):
        o = model.operands[i]
        dt = dtype_of(o.type)
        x = rng.standard_normal(o.dims).astype(dt) if k == 0 and dt.kind == "f" else np.zeros(o.dims, dt)
        ex.set_input(k, x)
    outs = []
    for k, i in enumerate(model.outputs):
        o = model.operands[i]
        outs.append(np.zeros(o.dims, dtype_of(o.type)))
        ex.set_output(k, outs[-1])
    ex.compute()
    return outs[0].astype(np.float64).ravel().tolist()


def _child(mode: str, source: str, cache_dir: str, hits: int) -> dict:
    t = time.perf_counter()
    import nnc  # noqa: F401

    res: dict = {"import_s": time.perf_counter() - t}
    t = time.perf_counter()
    model = _load(source)
    res["load_s"] = time.perf_counter() - t
    xdsl_before = "xdsl" in sys.modules
    c, res["first_s"], res["first_cpu_s"] = _timed_finish(model, cache_dir)
    res["xdsl_imported_by_finish"] = "xdsl" in sys.modules and not xdsl_before
    res["xdsl_loaded"] = "xdsl" in sys.modules
    res["events"] = [e for e, _, _ in c.cache_events]
    res["out"] = _output(c, model)
    if mode == "hit":
        fresh, same = [], []
        for _ in range(hits):
            m = _load(source)  # a new model object: its fingerprint is computed again
            h, wall, cpu = _timed_finish(m, cache_dir)
            assert [e for e, _, _ in h.cache_events] == ["hit"], h.cache_events
            fresh.append((wall, cpu))
            h, wall, cpu = _timed_finish(m, cache_dir)  # the same object: fingerprint memoised
            assert [e for e, _, _ in h.cache_events] == ["hit"], h.cache_events
            same.append((wall, cpu))
        res["fresh"], res["same"] = fresh, same
    return res


def _run_child(mode: str, source: str, cache_dir: str, hits: int = 0) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--source", source, "--cache-dir", cache_dir, "--hits", str(hits)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- per model ------------------------------------------------------------------------------------------


class Mismatch(AssertionError):
    """A hit computed something else than the cold compilation."""


def _close(a: list, b: list) -> bool:
    import numpy as np

    x, y = np.asarray(a), np.asarray(b)
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(y).max()))))


def _med(xs) -> float:
    return statistics.median(xs)


def measure(source: str, runs: int = 3, hits: int = 15) -> dict:
    """Cold compile, new-process, in-process and same-model hits of one
    model (see the module docstring): medians, in seconds, wall and CPU."""
    cold, cold_cpu, new, new_cpu, fresh, same, imports, loads = [], [], [], [], [], [], [], []
    xdsl = set()
    with tempfile.TemporaryDirectory(prefix="nnc-cache-bench-") as root:
        for r in range(runs):
            d = os.path.join(root, f"cold{r}")
            os.mkdir(d)
            res = _run_child("cold", source, d)
            if res["events"] != ["miss", "saved"]:
                raise Mismatch(f"cold compile: cache events {res['events']}")
            cold.append(res["first_s"])
            cold_cpu.append(res["first_cpu_s"])
            reference = res["out"]
        reprimed = 0
        while len(new) < runs:
            res = _run_child("hit", source, d, hits)
            if res["events"] != ["hit"]:
                # The key covers a digest of nnc's sources: someone edited nnc
                # meanwhile, so the process compiled and saved a fresh entry.
                reprimed += 1
                if reprimed > 5:
                    raise Mismatch(f"new-process hit: cache events {res['events']} (nnc's sources keep changing?)")
                continue
            if not _close(res["out"], reference):
                raise Mismatch("a cache hit computed other outputs than the cold compilation")
            new.append(res["first_s"])
            new_cpu.append(res["first_cpu_s"])
            fresh += res["fresh"]
            same += res["same"]
            imports.append(res["import_s"])
            loads.append(res["load_s"])
            xdsl.add(res["xdsl_imported_by_finish"])
    return {
        "cold_s": _med(cold), "cold_cpu_s": _med(cold_cpu),
        "new_process_hit_s": _med(new), "new_process_hit_cpu_s": _med(new_cpu),
        "hit_s": _med(w for w, _ in fresh), "hit_cpu_s": _med(c for _, c in fresh),
        "same_model_hit_s": _med(w for w, _ in same), "same_model_hit_cpu_s": _med(c for _, c in same),
        "import_nnc_s": _med(imports), "load_model_s": _med(loads),
        "hit_imported_xdsl": any(xdsl), "runs": runs, "hits": hits,
    }  # fmt: skip


def table(rows: list[dict]) -> str:
    head = ["model", "cold compile", "new-process hit", "in-process hit", "same-model hit", "cold / hit",
            "import nnc", "read model", "hit imports xDSL"]  # fmt: skip
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append([r["model"], f"failed: {r['error']}"] + [""] * (len(head) - 2))
            continue
        lines.append([
            r["model"],
            f"{r['cold_s']:.2f} s ({r['cold_cpu_s']:.2f} CPU)",
            f"{r['new_process_hit_s'] * 1e3:.1f} ms ({r['new_process_hit_cpu_s'] * 1e3:.1f} CPU)",
            f"{r['hit_s'] * 1e3:.1f} ms ({r['hit_cpu_s'] * 1e3:.1f} CPU)",
            f"{r['same_model_hit_s'] * 1e3:.1f} ms ({r['same_model_hit_cpu_s'] * 1e3:.1f} CPU)",
            f"{r['cold_s'] / r['hit_s']:.0f}x",
            f"{r['import_nnc_s'] * 1e3:.0f} ms",
            f"{r['load_model_s'] * 1e3:.0f} ms",
            "yes" if r["hit_imported_xdsl"] else "no",
        ])  # fmt: skip
    widths = [max(len(line[k]) for line in lines if len(line) == len(head)) for k in range(len(head))]
    out = ["  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(line, widths)))
           for line in lines]  # fmt: skip
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS, help="directory of *.tflite (default ../shared/models)")
    ap.add_argument("--only", default="", help="only models whose file name contains this")
    ap.add_argument("--model", action="append", default=[], help="a model file instead (repeatable)")
    ap.add_argument("--synthetic", action="store_true", help="the synthetic MobileNet v1 built through the API")
    ap.add_argument("--alpha", type=float, default=0.5, help="synthetic MobileNet width multiplier (default 0.5)")
    ap.add_argument("--size", type=int, default=128, help="synthetic input height and width (default 128)")
    ap.add_argument("--runs", type=int, default=3, help="cold-compile processes and hit processes per model")
    ap.add_argument("--hits", type=int, default=15, help="in-process and same-model hits per hit process")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON (- for stdout)")
    ap.add_argument("--child", choices=["cold", "hit"], help=argparse.SUPPRESS)
    ap.add_argument("--source", help=argparse.SUPPRESS)
    ap.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.source, args.cache_dir, args.hits)))
        return 0
    if args.synthetic:
        sources = [f"synthetic:{args.alpha}:{args.size}"]
    elif args.model:
        sources = args.model
    else:
        sources = sorted(p for p in glob.glob(os.path.join(args.models, "*.tflite")) if args.only in os.path.basename(p))
    if not sources:
        print(f"cache_bench: no .tflite models in {args.models}", file=sys.stderr)
        return 2
    load_before = os.getloadavg()
    rows = []
    for s in sources:
        name = os.path.basename(s).removesuffix(".tflite")
        print(f"cache_bench: {name} ...", file=sys.stderr, flush=True)
        try:
            rows.append({"model": name, **measure(s, args.runs, args.hits)})
        except subprocess.CalledProcessError as e:
            rows.append({"model": name, "error": ((e.stderr or "").strip().splitlines() or ["?"])[-1]})
    load_after = os.getloadavg()
    print(f"finish() wall time, CPU time in parentheses; medians of {args.runs} cold-compile processes, "
          f"{args.runs} new-process hits and {args.runs} x {args.hits} in-process and same-model hits; "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after on {os.cpu_count()} CPUs")
    print(table(rows))
    if args.json:
        text = json.dumps({"models": rows, "load_average": [load_before[0], load_after[0]]}, indent=2)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
