"""Compilation caching benchmark: cold compile vs. cache-hit ``finish()``.

Run from the repository root::

    python benchmarks/cache_bench.py [--runs 5] [--alpha 0.5] [--size 128]
    python benchmarks/cache_bench.py --model ../shared/models/mobilenet_v2_1.0_224_float32.tflite

With ``--model`` the model is read from that file (``nnc.load_model``: a
TFLite flatbuffer or an nnc model file), each hit from a fresh read of the
file (a new model object, as an application that restarts or reopens it);
otherwise it is built through the API: a MobileNet v1 (Howard et al. 2017) with width multiplier ``--alpha``
at ``--size`` x ``--size`` x 3, float32 with random weights: a strided 3x3
CONV_2D, 13 depthwise-separable blocks (3x3 DEPTHWISE_CONV_2D + 1x1 CONV_2D,
RELU6), AVERAGE_POOL_2D, FULLY_CONNECTED to 1000 classes and SOFTMAX.  The
defaults (alpha 0.5) give about 1.3M parameters; alpha 1.0 is the full 4.2M.

Reported, each the median of ``--runs`` runs:

* cold: ``Compilation.finish()`` with caching set and an empty cache directory
  (the whole pipeline, xDSL passes + LLVM O3 + object emission, plus writing
  the entry); nnc's in-process cache of compiled modules is cleared first;
* hit: ``finish()`` of a freshly built copy of the model, same token, same
  directory: cache key (model fingerprint incl. hashing the weights),
  mapping and verifying both files, loading the object with MCJIT;
* hit, same model object: ``finish()`` of a new Compilation of a model object
  already compiled (its fingerprint is memoised: only the files are verified);
* hit in a new process: the same, timed inside a fresh interpreter (what an
  application restart sees; includes computing nnc's compiler id once, not
  the import of nnc's compiler modules, which is reported apart).

The outputs of every hit are checked against the cold compilation's.
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

import numpy as np

import nnc
from nnc import FuseCode, PaddingCode
from nnc import OperandType as T
from nnc import OperationType as Op

TOKEN = bytes(range(32))

#: (stride, output channels at alpha 1) of MobileNet v1's separable blocks.
BLOCKS = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + [(1, 512)] * 5 + [(2, 1024), (1, 1024)]


def mobilenet(alpha: float = 0.5, size: int = 128, classes: int = 1000, seed: int = 0) -> tuple[nnc.Model, int]:
    """(finished model, number of parameters)."""
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


def load(args) -> tuple[nnc.Model, int]:
    """(finished model, number of parameters) of the benchmark's model."""
    if args.model:
        m = nnc.load_model(args.model)
        return m, sum(int(o.value.size) for o in m.operands if isinstance(o.value, np.ndarray) and o.value.ndim)
    return mobilenet(args.alpha, args.size)


def sample_input(model: nnc.Model) -> np.ndarray:
    o = model.operands[model.inputs[0]]
    return np.random.default_rng(1).standard_normal(o.dims).astype(nnc.model.dtype_of(o.type))


def compile_cached(model: nnc.Model, cache_dir: str) -> tuple[nnc.Compilation, float]:
    c = nnc.Compilation(model)
    c.set_caching(cache_dir, TOKEN)
    t = time.perf_counter()
    c.finish()
    return c, time.perf_counter() - t


def infer(c: nnc.Compilation, x: np.ndarray) -> np.ndarray:
    out = c.model.operands[c.model.outputs[0]]
    y = np.zeros(out.dims, nnc.model.dtype_of(out.type))
    ex = nnc.Execution(c)
    ex.set_input(0, x)
    ex.set_output(0, y)
    ex.compute()
    return y


def _child(args) -> None:
    """--child: one cache-hit finish() in this fresh process; prints JSON."""
    model, _ = load(args)
    # What finish() would import on first use (nnc's passes and xDSL, the
    # runtime), timed apart: an application pays it once per process, with or
    # without a cache.
    t = time.perf_counter()
    import nnc.passes.lowering  # noqa: F401
    import nnc.runtime.cache  # noqa: F401
    imports = time.perf_counter() - t
    c, t = compile_cached(model, args.cache_dir)
    x = sample_input(model)
    events = [e for e, _, _ in c.cache_events]
    print(json.dumps({"seconds": t, "imports": imports, "events": events, "out": infer(c, x).tolist()}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=0.5, help="MobileNet width multiplier (default 0.5)")
    ap.add_argument("--size", type=int, default=128, help="input height and width (default 128)")
    ap.add_argument("--model", help="a model file (.tflite or nnc's format) instead of the synthetic MobileNet v1")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child(args)

    import nnc.driver as executable_mod  # the in-process cache of compiled modules
    from nnc.runtime import cache

    model, params = load(args)
    name = os.path.basename(args.model) if args.model else f"MobileNet v1 alpha={args.alpha} {args.size}x{args.size}x3"
    print(f"model: {name}, "
          f"{len(model.operations)} operations, {params / 1e6:.2f}M parameters "
          f"({params * 4 / 2**20:.1f} MiB of weights)", flush=True)  # fmt: skip
    x = sample_input(model)

    cold, hot, same, fresh, imports = [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="nnc-cache-bench-") as root:
        for r in range(args.runs):
            d = os.path.join(root, f"cold{r}")
            os.mkdir(d)
            executable_mod._CACHE.clear()  # no in-process reuse of compiled modules
            c, t = compile_cached(model, d)
            assert [e for e, _, _ in c.cache_events] == ["miss", "saved"], c.cache_events
            cold.append(t)
            print(f"  cold run {r + 1}: {t:.3f} s", flush=True)
        reference = infer(c, x)
        key = c.cache_events[-1][1]
        sizes = [os.path.getsize(p) for p in cache.entry_paths(d, key)]

        for _ in range(args.runs):
            fresh_model, _ = load(args)  # new object: fingerprint computed again
            h, t = compile_cached(fresh_model, d)
            assert [e for e, _, _ in h.cache_events] == ["hit"], h.cache_events
            assert np.array_equal(infer(h, x), reference)
            hot.append(t)
            h, t = compile_cached(fresh_model, d)  # the same object again: fingerprint memoised
            assert [e for e, _, _ in h.cache_events] == ["hit"], h.cache_events
            same.append(t)

        def child() -> dict:
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--alpha", str(args.alpha), "--size", str(args.size),
                 "--cache-dir", d, *(["--model", args.model] if args.model else [])],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            return json.loads(out.stdout.strip().splitlines()[-1])

        reprimed = 0
        while len(fresh) < args.runs:
            res = child()
            if res["events"] != ["hit"]:
                # The key covers a digest of nnc's sources: someone edited nnc
                # since this process started, so the new process compiled and
                # saved a fresh entry.  Measure hits of that one.
                assert res["events"] == ["miss", "saved"], res["events"]
                reprimed += 1
                assert reprimed <= 10, "nnc's sources keep changing; rerun the benchmark"
                continue
            np.testing.assert_allclose(np.asarray(res["out"], np.float32), reference, rtol=1e-4, atol=1e-6)
            fresh.append(res["seconds"])
            imports.append(res["imports"])

    mc, mh, ms, mf = (statistics.median(v) for v in (cold, hot, same, fresh))
    print(f"cache entry: model file {sizes[0] / 2**10:.0f} KiB, data file {sizes[1] / 2**20:.2f} MiB")
    print(f"cold compile finish():         median {mc:8.3f} s   (runs: {', '.join(f'{t:.3f}' for t in cold)})")
    print(f"cache-hit finish():            median {mh * 1e3:8.1f} ms  (runs: {', '.join(f'{t * 1e3:.1f}' for t in hot)})")
    print(f"cache-hit finish(), same model: median {ms * 1e3:8.1f} ms  (runs: {', '.join(f'{t * 1e3:.1f}' for t in same)})")
    print(f"cache-hit finish(), new proc:  median {mf * 1e3:8.1f} ms  (runs: {', '.join(f'{t * 1e3:.1f}' for t in fresh)})")
    print(f"  (+ importing nnc's compiler modules once per process, not included: median "
          f"{statistics.median(imports) * 1e3:.0f} ms)")
    if reprimed:
        print(f"(nnc's sources changed during the run: new-process entry re-primed {reprimed}x)")
    print(f"speed-up: {mc / mh:.0f}x (in process), {mc / mf:.0f}x (new process)")


if __name__ == "__main__":
    main()
