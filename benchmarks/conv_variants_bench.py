"""TRANSPOSE_CONV_2D and GROUPED_CONV_2D (float32): nnc's GEMM paths
against references in the same run.

Run from the repository root::

    python benchmarks/conv_variants_bench.py [--runs 20]

Per case, the median of ``--runs`` timed runs after warm-up of:

* ``nnc nhwc``: the NHWC model (TRANSPOSE_CONV_2D: one GEMM per sub-pixel
  phase; GROUPED_CONV_2D: the CONV_2D GEMM with a group level);
* ``nnc nchw``: the same operation in NCHW, which nnc lowers to plain
  linalg loops (the "plain-loop" reference, the same arithmetic);
* ``numpy``: a vectorised numpy implementation (matrix products per filter
  tap, BLAS inside), checked against nnc's output.

Ratios are printed against ``nnc nhwc`` (above 1: slower than it).  Timings
on a shared machine are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

F32 = T.TENSOR_FLOAT32


def _model(op: Op, x_shape, w: np.ndarray, b: np.ndarray, params: list[tuple[T, object]], out_shape) -> nnc.Model:
    m = nnc.Model()
    xi = m.add_operand(F32, list(x_shape))
    wi = m.add_operand(F32, list(w.shape))
    m.set_operand_value(wi, w)
    bi = m.add_operand(F32, list(b.shape))
    m.set_operand_value(bi, b)
    ps = []
    for t, v in params:
        i = m.add_operand(t)
        m.set_operand_value(i, v)
        ps.append(i)
    y = m.add_operand(F32, list(out_shape))
    m.add_operation(op, [xi, wi, bi, *ps], [y])
    m.identify_inputs_and_outputs([xi], [y])
    m.finish()
    return m


def _median_time(fn: Callable[[], object], runs: int) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _nnc_runner(m: nnc.Model, x: np.ndarray, out_shape) -> tuple[Callable[[], object], np.ndarray]:
    c = nnc.Compilation(m)
    c.finish()
    ex = nnc.Execution(c)
    ex.set_reusable(True)
    y = np.zeros(out_shape, np.float32)
    ex.set_input(0, x)
    ex.set_output(0, y)
    return ex.compute, y


def transpose_numpy(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, pad: int, out_hw) -> np.ndarray:
    """NHWC transposed convolution: per filter tap one matrix product, added
    to the strided output pixels it lands on (the reference's scatter)."""
    n, h, wd, _ = x.shape
    k, fh, fw, _ = w.shape
    oh, ow = out_hw
    full = np.zeros((n, (h - 1) * stride + fh, (wd - 1) * stride + fw, k), np.float32)
    flat = x.reshape(-1, x.shape[-1])
    for i in range(fh):
        for j in range(fw):
            full[:, i : i + stride * h : stride, j : j + stride * wd : stride] += (flat @ w[:, i, j].T).reshape(n, h, wd, k)
    return full[:, pad : pad + oh, pad : pad + ow] + b


def grouped_numpy(x: np.ndarray, w: np.ndarray, b: np.ndarray, groups: int) -> np.ndarray:
    """NHWC grouped convolution, stride 1, SAME for an odd filter: per group
    and tap one matrix product."""
    n, h, wd, c = x.shape
    k, fh, fw, cig = w.shape
    ph, pw = fh // 2, fw // 2
    xp = np.zeros((n, h + 2 * ph, wd + 2 * pw, c), np.float32)
    xp[:, ph : ph + h, pw : pw + wd] = x
    cog = k // groups
    out = np.empty((n, h, wd, k), np.float32)
    for g in range(groups):
        acc = np.zeros((n * h * wd, cog), np.float32)
        for i in range(fh):
            for j in range(fw):
                patch = xp[:, i : i + h, j : j + wd, g * cig : (g + 1) * cig].reshape(-1, cig)
                acc += patch @ w[g * cog : (g + 1) * cog, i, j].T
        out[..., g * cog : (g + 1) * cog] = acc.reshape(n, h, wd, cog)
    return out + b


def bench_transpose(runs: int, n: int, h: int, c: int, k: int, f: int, stride: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, h, h, c)).astype(np.float32)
    w = (rng.standard_normal((k, f, f, c)) / np.sqrt(f * f * c)).astype(np.float32)
    b = rng.standard_normal(k).astype(np.float32)
    pad = (f - stride) // 2  # explicit padding giving an output stride x larger
    oh = h * stride + f - stride - 2 * pad
    results = {}
    for nchw in (False, True):
        xs = x.transpose(0, 3, 1, 2).copy() if nchw else x
        oshape = (n, k, oh, oh) if nchw else (n, oh, oh, k)
        params = [(T.INT32, pad)] * 4 + [(T.INT32, stride)] * 2 + [(T.INT32, 0), (T.BOOL, nchw)]
        run, y = _nnc_runner(_model(Op.TRANSPOSE_CONV_2D, xs.shape, w, b, params, oshape), xs, oshape)
        results["nnc nchw" if nchw else "nnc nhwc"] = _median_time(run, runs)
        got = y.transpose(0, 2, 3, 1) if nchw else y
    ref = transpose_numpy(x, w, b, stride, pad, (oh, oh))
    np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-3)
    results["numpy"] = _median_time(lambda: transpose_numpy(x, w, b, stride, pad, (oh, oh)), runs)
    _report(f"TRANSPOSE_CONV_2D {n}x{h}x{h}x{c} -> {oh}x{oh}x{k}, {f}x{f} stride {stride}",
            2 * n * h * h * c * k * f * f, results)


def bench_grouped(runs: int, n: int, h: int, c: int, k: int, f: int, groups: int) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, h, h, c)).astype(np.float32)
    w = (rng.standard_normal((k, f, f, c // groups)) / np.sqrt(f * f * c)).astype(np.float32)
    b = rng.standard_normal(k).astype(np.float32)
    results = {}
    for nchw in (False, True):
        xs = x.transpose(0, 3, 1, 2).copy() if nchw else x
        oshape = (n, k, h, h) if nchw else (n, h, h, k)
        params = [(T.INT32, 1), (T.INT32, 1), (T.INT32, 1), (T.INT32, groups), (T.INT32, 0), (T.BOOL, nchw)]
        run, y = _nnc_runner(_model(Op.GROUPED_CONV_2D, xs.shape, w, b, params, oshape), xs, oshape)
        results["nnc nchw" if nchw else "nnc nhwc"] = _median_time(run, runs)
        got = y.transpose(0, 2, 3, 1) if nchw else y
    np.testing.assert_allclose(got, grouped_numpy(x, w, b, groups), rtol=1e-3, atol=1e-3)
    results["numpy"] = _median_time(lambda: grouped_numpy(x, w, b, groups), runs)
    _report(f"GROUPED_CONV_2D {n}x{h}x{h}x{c} -> {k}, {f}x{f}, {groups} groups",
            2 * n * h * h * (c // groups) * k * f * f, results)


def _report(title: str, flops: int, results: dict[str, float]) -> None:
    base = results["nnc nhwc"]
    print(title)
    for name, t in results.items():
        print(f"  {name:9s} {t * 1e3:9.3f} ms  {flops / t / 1e9:7.2f} GFLOP/s  x{t / base:6.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    bench_transpose(args.runs, 1, 32, 64, 64, 4, 2)  # a decoder's 2x upsampling
    bench_transpose(args.runs, 1, 16, 128, 64, 3, 2)
    bench_grouped(args.runs, 1, 28, 240, 240, 3, 3)  # ShuffleNet-like
    bench_grouped(args.runs, 1, 28, 256, 256, 1, 8)


if __name__ == "__main__":
    main()
