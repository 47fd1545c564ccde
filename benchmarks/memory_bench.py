"""Memory and time of large models: import, cold compile, cache hit, one run.

Run from the repository root::

    python benchmarks/memory_bench.py [--models resnet50 resnet50_int8 deep] [--deep 250 500 1000]
                                      [--repeats 3] [--size 224] [--json out.json]

The models are built here as TFLite flatbuffers with random weights (the
tests' flatbuffer builder), written to a temporary directory:

* ``resnet50``: ResNet-50 v1.5's layer shapes (He et al. 2016: a 7x7/2
  convolution, 3x3/2 max pooling, bottleneck stages of 3, 4, 6 and 3 blocks,
  the stride on each stage's first 3x3 convolution, a projection shortcut on
  each stage's first block), a MEAN over the spatial axes and a fully
  connected layer to 1000 classes, float32, input 1 x ``--size`` x
  ``--size`` x 3 (224: about 100 MB of weights);
* ``resnet50_int8``: the same network quantised: int8 activations, int8
  filters with a scale per output channel, int32 biases (about 26 MB);
* ``small`` (always measured first): a chain of 8 such operations, 2 KB of
  weights: nnc's fixed footprint in each step (its code, xDSL's, LLVM's and
  the thread pool's), which the table subtracts ("above small") to give what
  the model's size costs, as the baseline of a 60 KB model does;
* ``deep``: a narrow chain of ``N`` small element-wise operations (ADD and
  MUL by a 64-element constant, each other one with a fused RELU) for each
  ``N`` of ``--deep``: how the steps scale with the operation count rather
  than with the weights.

Every step of every model runs in a fresh process (``--child``), so each
figure is what an application that starts pays:

* ``import``: ``nnc.import_tflite(path)``;
* ``cold``: import, then ``nnc.compile(model, cache_dir)`` with an empty
  cache directory (the step's time is the compilation's);
* ``hit``: import, then ``nnc.compile`` from the warm cache directory (the
  step's time is the compilation's);
* ``run``: import, a cache hit, one warm-up run, then one timed run.

Each process reports, above its baseline (its resident set after
``import nnc, numpy``), the peak resident set (``VmHWM``: of the whole
process, so of the import too in the later steps; not ``getrusage``'s
``ru_maxrss``, which Linux carries over ``exec``, so that a process started
by a big parent reports at least the parent's resident set) and the resident set right
after the step (``VmRSS``) and the anonymous part of it (``RssAnon``: not
pages of mapped files, which the kernel may drop and read again), each in MiB
and as a multiple of the model's weight bytes (the bytes of its constant operands after import).  The LLVM
stage of a cold compile runs in worker processes
(:mod:`nnc.runtime.worker`), whose largest peak (``VmHWM``) is reported
apart.  Times are the median of ``--repeats`` processes (a cold compile runs
once unless ``--cold-repeats`` says otherwise), memory the median too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

# The measuring processes never import the builder (nor through it the
# tflite package before their baseline): it is imported where models are built.
if TYPE_CHECKING:
    from tflite_builder import TFLiteBuilder

FLOAT32, INT32, INT8 = 0, 2, 9  # TFLite tensor types (as tflite_builder names them)

STEPS = ("import", "cold", "hit", "run")
#: the model every run measures first: nnc's fixed footprint in each step
SMALL = "small"
MIB = 1 << 20
#: (blocks, bottleneck width) of ResNet-50's four stages
STAGES = ((3, 64), (4, 128), (6, 256), (3, 512))
SAME, VALID = 0, 1
NONE, RELU = 0, 1


# -- models ------------------------------------------------------------------------------------------


def _builder() -> TFLiteBuilder:
    from tflite_builder import TFLiteBuilder

    return TFLiteBuilder()


class _Net:
    """A TFLiteBuilder that adds float32 or int8 layers with random weights:
    the two ResNet-50s share one description of the network."""

    def __init__(self, quantised: bool, seed: int = 0):
        self.b = _builder()
        self.q = quantised
        self.rng = np.random.default_rng(seed)
        self.n = 0

    def _name(self, what: str) -> str:
        self.n += 1
        return f"{what}_{self.n}"

    def activation(self, shape: list[int]) -> int:
        """An activation tensor: float32, or int8 (scale 0.05, zero point -128
        for what follows a RELU and the rest alike: the values are random)."""
        if self.q:
            return self.b.tensor(self._name("act"), shape, INT8, scale=0.05, zero_point=-128)
        return self.b.tensor(self._name("act"), shape, FLOAT32)

    def weights(self, shape: list[int], per_channel: bool) -> int:
        """A filter: He-initialised float32, or int8 with a scale per output
        channel (dimension 0) or one scale."""
        fan_in = int(np.prod(shape[1:]))
        if not self.q:
            w = self.rng.standard_normal(shape, np.float32) * np.float32(np.sqrt(2.0 / fan_in))
            return self.b.tensor(self._name("w"), shape, FLOAT32, w)
        w = self.rng.integers(-127, 128, shape, dtype=np.int8)
        scale = np.full(shape[0] if per_channel else 1, 0.002, np.float32)
        return self.b.tensor(self._name("w"), shape, INT8, w, scale=scale, zero_point=np.zeros(scale.size, np.int64))

    def bias(self, n: int, filter_scale_count: int) -> int:
        if not self.q:
            return self.b.tensor(self._name("b"), [n], FLOAT32, self.rng.standard_normal(n, np.float32) * 0.01)
        scale = np.full(filter_scale_count, 0.05 * 0.002, np.float32)
        zps = np.zeros(filter_scale_count, np.int64)
        return self.b.tensor(self._name("b"), [n], INT32, self.rng.integers(-100, 100, n, dtype=np.int32),
                             scale=scale, zero_point=zps)  # fmt: skip

    def conv(self, x: int, shape: list[int], out: int, k: int, stride: int, act: int) -> tuple[int, list[int]]:
        """CONV_2D ``k`` x ``k`` / ``stride`` (SAME padding) to ``out`` channels."""
        n, h, w, c = shape
        oshape = [n, -(-h // stride), -(-w // stride), out]
        y = self.activation(oshape)
        opts = {"Padding": SAME, "StrideW": stride, "StrideH": stride, "FusedActivationFunction": act,
                "DilationWFactor": 1, "DilationHFactor": 1}  # fmt: skip
        inputs = [x, self.weights([out, k, k, c], True), self.bias(out, out if self.q else 1)]
        self.b.op("CONV_2D", inputs, [y], ("Conv2DOptions", opts))
        return y, oshape

    def bottleneck(self, x: int, shape: list[int], width: int, stride: int) -> tuple[int, list[int]]:
        """1x1 -> 3x3/stride -> 1x1 (x4 channels), plus the shortcut, RELU."""
        a, s = self.conv(x, shape, width, 1, 1, RELU)
        a, s = self.conv(a, s, width, 3, stride, RELU)
        a, s = self.conv(a, s, 4 * width, 1, 1, NONE)
        short = x
        if stride != 1 or shape[3] != 4 * width:
            short, _ = self.conv(x, shape, 4 * width, 1, stride, NONE)
        total = self.activation(s)
        self.b.op("ADD", [a, short], [total], ("AddOptions", {"FusedActivationFunction": NONE}))
        y = self.activation(s)
        self.b.op("RELU", [total], [y])
        return y, s


def resnet50(quantised: bool, size: int = 224) -> bytes:
    """ResNet-50 (v1.5 strides) with random weights, float32 or int8."""
    net = _Net(quantised)
    b = net.b
    shape = [1, size, size, 3]
    x = net.activation(shape)
    y, s = net.conv(x, shape, 64, 7, 2, RELU)
    s = [1, -(-s[1] // 2), -(-s[2] // 2), 64]
    pooled = net.activation(s)
    pool = {"Padding": SAME, "StrideW": 2, "StrideH": 2, "FilterWidth": 3, "FilterHeight": 3,
            "FusedActivationFunction": NONE}  # fmt: skip
    b.op("MAX_POOL_2D", [y], [pooled], ("Pool2DOptions", pool))
    y = pooled
    for stage, (blocks, width) in enumerate(STAGES):
        for k in range(blocks):
            y, s = net.bottleneck(y, s, width, 2 if k == 0 and stage > 0 else 1)
    axes = b.tensor("axes", [2], INT32, np.array([1, 2], np.int32))
    mean = net.activation([1, s[3]])
    b.op("MEAN", [y, axes], [mean], ("ReducerOptions", {"KeepDims": False}))
    logits = net.activation([1, 1000])
    fc = [mean, net.weights([1000, s[3]], False), net.bias(1000, 1)]
    b.op("FULLY_CONNECTED", fc, [logits], ("FullyConnectedOptions", {"FusedActivationFunction": NONE}))
    return b.build([x], [logits])


def deep(n: int, width: int = 64) -> bytes:
    """A chain of ``n`` ADD/MUL operations on a [1, width] float32 tensor,
    each by its own constant, every other one with a fused RELU."""
    b = _builder()
    rng = np.random.default_rng(n)
    x = first = b.tensor("x", [1, width], FLOAT32)
    for k in range(n):
        c = b.tensor(f"c{k}", [1, width], FLOAT32, rng.uniform(0.5, 1.5, (1, width)).astype(np.float32))
        y = b.tensor(f"y{k}", [1, width], FLOAT32)
        name, opts = ("ADD", "AddOptions") if k % 2 == 0 else ("MUL", "MulOptions")
        b.op(name, [x, c], [y], (opts, {"FusedActivationFunction": RELU if k % 4 == 1 else NONE}))
        x = y
    return b.build([first], [x])


def build_models(names: list[str], deep_sizes: list[int], size: int, directory: str) -> dict[str, str]:
    """Write each requested model to ``directory``: {name: path}."""
    makers: dict[str, Callable[[], bytes]] = {SMALL: lambda: deep(8)}
    if "resnet50" in names:
        makers["resnet50"] = lambda: resnet50(False, size)
    if "resnet50_int8" in names:
        makers["resnet50_int8"] = lambda: resnet50(True, size)
    if "deep" in names:
        for n in deep_sizes:
            makers[f"deep{n}"] = lambda n=n: deep(n)
    paths = {}
    for name, make in makers.items():
        path = os.path.join(directory, f"{name}.tflite")
        with open(path, "wb") as f:
            f.write(make())
        paths[name] = path
    return paths


# -- one step in a fresh process ---------------------------------------------------------------------


def _status(field: str, pid: int | str = "self") -> int:
    """A ``/proc/<pid>/status`` field in bytes (0 if absent)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children_peak() -> int:
    """The largest peak resident set (VmHWM) of this process's live children
    (the LLVM workers), in bytes."""
    me = str(os.getpid())
    peak = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
        except OSError:
            continue
        if ppid == me:
            peak = max(peak, _status("VmHWM", pid))
    return peak


def child(step: str, path: str, cache_dir: str) -> dict:
    """Run ``step`` on the model at ``path``; what it measured, in bytes and seconds."""
    import nnc

    # The API's modules load lazily on first use; they are code, the same
    # for every model, so they are loaded before the baseline.
    _ = (nnc.compile, nnc.Compilation)
    base, base_anon = _status("VmRSS"), _status("RssAnon")
    t0 = time.perf_counter()
    model = nnc.import_tflite(path)
    seconds = time.perf_counter() - t0
    weights = sum(o.value.nbytes for o in model.operands if o.value is not None)
    if step != "import":
        t0 = time.perf_counter()
        compiled = nnc.compile(model, cache_dir)
        seconds = time.perf_counter() - t0
    if step == "run":
        x = [np.zeros(d.shape, d.dtype) for d in compiled.inputs]
        compiled.run(*x)
        t0 = time.perf_counter()
        compiled.run(*x)
        seconds = time.perf_counter() - t0
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over exec, so a
    # process started by a big parent reports the parent's resident set.
    peak = _status("VmHWM")
    return {"seconds": seconds, "weights": weights, "rss_after": _status("VmRSS") - base,
            "anon_after": _status("RssAnon") - base_anon,
            "peak": peak - base, "workers_peak": _children_peak(), "baseline": base}  # fmt: skip


def _spawn(step: str, path: str, cache_dir: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", step, path, cache_dir], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{step} of {path} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median(samples: list[dict]) -> dict:
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


def measure(name: str, path: str, repeats: int, cold_repeats: int, work: str) -> list[dict]:
    """Every step of one model: one row per step (medians over the processes)."""
    rows = []
    warm = os.path.join(work, f"{name}.cache")
    for step in STEPS:
        samples = []
        for r in range(cold_repeats if step == "cold" else repeats):
            cache = os.path.join(work, f"{name}.cold{r}") if step == "cold" else warm
            os.makedirs(cache, exist_ok=True)
            samples.append(_spawn(step, path, cache))
            if step == "cold" and r == 0:
                os.rename(cache, warm)  # the first cold entry is the warm cache of the later steps
        rows.append({"model": name, "step": step, **_median(samples)})
        print(_line(rows[-1]), flush=True)
    return rows


# -- report ------------------------------------------------------------------------------------------


def _line(r: dict) -> str:
    return (f"{r['model']:<14} {r['step']:<6} {r['seconds'] * 1e3:10.1f} ms  peak {r['peak'] / MIB:8.1f} MiB "
            f"({_times(r, 'peak')}x)  after {r['rss_after'] / MIB:8.1f} MiB ({_times(r, 'rss_after')}x), "
            f"anonymous {r['anon_after'] / MIB:8.1f} MiB  "
            f"workers {r['workers_peak'] / MIB:7.1f} MiB")  # fmt: skip


def markdown(rows: list[dict]) -> str:
    """The rows as a Markdown table (what benchmarks/RESULTS.md records).
    "above small": the figure minus the ``small`` model's in the same step
    (nnc's own code and the compiler's fixed footprint), as a multiple of
    the weights: what the model's size costs."""
    small = {r["step"]: r for r in rows if r["model"] == SMALL}
    lines = ["| model | weights | step | wall | peak RSS | x weights | above small | RSS after | x weights | above small "
             "| anonymous after | x weights | LLVM workers' peak |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        lines.append(f"| {r['model']} | {r['weights'] / MIB:.2f} MiB | {r['step']} | {_time(r['seconds'])} | "
                     f"{r['peak'] / MIB:.1f} MiB | {_times(r, 'peak')} | {_above(r, small, 'peak')} | "
                     f"{r['rss_after'] / MIB:.1f} MiB | {_times(r, 'rss_after')} | {_above(r, small, 'rss_after')} | "
                     f"{r['anon_after'] / MIB:.1f} MiB | {_times(r, 'anon_after')} | {_workers(r)} |")  # fmt: skip
    return "\n".join(lines)


def _above(r: dict, small: dict[str, dict], key: str) -> str:
    """``r[key]`` above the small model's in the same step, as a multiple of
    the weights ("-" where :func:`_times` gives none or no small row exists)."""
    base = small.get(r["step"])
    if base is None or r["weights"] < MIB:
        return "-"
    return f"{(r[key] - base[key]) / r['weights']:.2f}"


def _times(r: dict, key: str) -> str:
    """``r[key]`` as a multiple of the weight bytes ("-" below 1 MiB of
    weights, where the fixed cost of nnc's code makes the ratio meaningless)."""
    return f"{r[key] / r['weights']:.2f}" if r["weights"] >= MIB else "-"


def _time(s: float) -> str:
    return f"{s:.2f} s" if s >= 1 else f"{s * 1e3:.1f} ms"


def _workers(r: dict) -> str:
    return f"{r['workers_peak'] / MIB:.1f} MiB" if r["workers_peak"] else "-"


def cpu_description() -> str:
    """The CPU's model name and its vector flags, from /proc/cpuinfo."""
    model, flags = "unknown CPU", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown CPU":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = value.split()
    except OSError:
        pass
    wanted = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx_vnni", "sha_ni")
    return f"{model}, {os.cpu_count()} cores; flags " + " ".join(f for f in wanted if f in flags)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=["resnet50", "resnet50_int8", "deep"],
                   choices=["resnet50", "resnet50_int8", "deep"])  # fmt: skip
    p.add_argument("--deep", nargs="+", type=int, default=[250, 500, 1000], help="operation counts of 'deep'")
    p.add_argument("--size", type=int, default=224, help="the ResNets' input height and width")
    p.add_argument("--repeats", type=int, default=3, help="processes per step (median)")
    p.add_argument("--cold-repeats", type=int, default=1, help="processes per cold compile (median)")
    p.add_argument("--json", help="write the rows to this file")
    p.add_argument("--child", nargs=3, metavar=("STEP", "MODEL", "CACHE"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    print(cpu_description())
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    rows = []
    with tempfile.TemporaryDirectory(prefix="nnc-memory-bench-") as work:
        for name, path in build_models(args.models, args.deep, args.size, work).items():
            rows += measure(name, path, args.repeats, args.cold_repeats, work)
    print(markdown(rows))
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_description(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
