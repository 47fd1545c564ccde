"""``nnc bench``: how fast a model compiles, prepares and runs on this machine.

What is measured (wall clock, ``time.perf_counter``):

* **compile**: ``nnc.compile(model)``, i.e. ``Compilation.finish``: the whole
  pipeline to native code, or a load from the compilation cache with
  ``--cache DIR`` (``cache`` then says hit or miss).  A model whose input
  shapes are open compiles on its first computation instead: that time is
  then part of *prepare*.
* **prepare**: the first computation of a reusable execution with the
  inputs and outputs bound; it plans everything the bindings fix (variant,
  output checks, pointer arrays, scratch arena: see ``nnc.execution``).
* **warmup** computations, untimed, then **runs** timed computations of the
  same execution, each the call of ``Execution.compute``: latency min,
  median, p90 and max, and throughput (computations per second at the
  median latency, one at a time).

With ``profile`` (``nnc bench --profile``) the model is compiled for
profiling (``Compilation.set_profiling``: its code records the monotonic
clock around each operation, see :mod:`nnc.profile`), every timed
computation's per-operation times are read after it (outside the timed
call), and the report adds a table per operation: median and mean time over the runs,
share of the sum of the medians, MACs and GFLOP/s where defined, longest
first, and how the times add up against the latencies (sums of medians and
of means against the median and mean latency, and per computation: see
:class:`nnc.profile.ProfileSummary`).  The latencies are then those of the
profiled code: two clock reads per operation more.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from nnc.api import CompiledModel
from nnc.api import compile as compile_model
from nnc.model import Model
from nnc.profile import OperationProfile, ProfileSummary, summarize


@dataclass
class BenchResult:
    """One benchmark's figures (seconds, except the ``*_ms`` latencies)."""

    model: str
    threads: int
    warmup: int
    runs: int
    compile_s: float
    #: "off", or the compilation cache's events ("hit"; "miss, saved"; ...)
    cache: str
    prepare_s: float
    latencies_ms: list[float]
    #: the per-operation table (``profile=True``), else None
    profile: ProfileSummary | None = None

    @property
    def stats(self) -> dict[str, float]:
        """min, median, p90, max (ms) and throughput (per second at the median)."""
        lat = sorted(self.latencies_ms)
        median = statistics.median(lat)
        return {
            "min_ms": lat[0],
            "median_ms": median,
            "p90_ms": percentile(lat, 90),
            "max_ms": lat[-1],
            "throughput_per_s": 1e3 / median if median > 0 else math.inf,
        }

    def to_json(self) -> dict:
        data = {**asdict(self), **self.stats}
        data["profile"] = None if self.profile is None else self.profile.to_json()
        return data

    def report(self, profile_rows: int | None = None) -> str:
        """The figures as text; with a profile, its table (``profile_rows``
        longest operations, the others summed on one line)."""
        s = self.stats
        table = [] if self.profile is None else ["per operation (median over the timed runs):",
                                                 self.profile.report(profile_rows)]  # fmt: skip
        return "\n".join(
            [
                f"model: {self.model}",
                f"threads: {self.threads}, warmup runs: {self.warmup}, timed runs: {self.runs}",
                f"compile: {self.compile_s * 1e3:.1f} ms (cache: {self.cache})",
                f"prepare (first computation): {self.prepare_s * 1e3:.2f} ms",
                f"latency: min {s['min_ms']:.3f} ms, median {s['median_ms']:.3f} ms, "
                f"p90 {s['p90_ms']:.3f} ms, max {s['max_ms']:.3f} ms",
                f"throughput: {s['throughput_per_s']:.1f} computations/s (one at a time, at the median latency)",
                *table,
            ]
        )


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile by linear interpolation between closest ranks
    (numpy's default), of already sorted values."""
    return float(np.percentile(np.asarray(sorted_values, dtype=np.float64), p))


def compile_timed(
    model: Model, cache_dir: str | os.PathLike | None = None, *, profile: bool = False
) -> tuple[CompiledModel, float, str]:
    """(compiled model, seconds, cache status) of ``nnc.compile(model, cache_dir, profile=profile)``."""
    t0 = time.perf_counter()
    compiled = compile_model(model, cache_dir, profile=profile)
    seconds = time.perf_counter() - t0
    events = compiled.compilation.cache_events
    return compiled, seconds, "off" if cache_dir is None else (", ".join(e[0] for e in events) or "not used")


def time_computations(
    compiled: CompiledModel, inputs: Sequence[np.ndarray], *, threads: int | None = None, runs: int = 50,
    warmup: int = 5,
    profiles: list[list[OperationProfile]] | None = None,
) -> tuple[int, float, list[float]]:
    """(threads used, prepare seconds, latencies in ms) of ``runs`` timed
    computations after ``warmup`` untimed ones (see the module docstring).
    ``profiles``: a list to which each timed computation's per-operation
    profile is appended (the model must be compiled for profiling)."""
    if runs < 1 or warmup < 0:
        raise ValueError("runs must be >= 1 and warmup >= 0")
    ex, _ = compiled.reusable_execution(list(inputs), threads)
    t0 = time.perf_counter()
    ex.compute()
    prepare_s = time.perf_counter() - t0
    for _ in range(warmup):
        ex.compute()
    latencies = []
    for _ in range(runs):
        t0 = time.perf_counter()
        ex.compute()
        latencies.append((time.perf_counter() - t0) * 1e3)
        if profiles is not None:
            profiles.append(ex.get_operation_profile())
    return ex.num_threads, prepare_s, latencies


def measure(
    compiled: CompiledModel, inputs: Sequence[np.ndarray], *, threads: int | None = None, runs: int = 50,
    warmup: int = 5, profile: bool = False,
) -> tuple[int, float, list[float], ProfileSummary | None]:
    """:func:`time_computations`, with the per-operation table when
    ``profile`` (the model compiled for profiling)."""
    runs_profiles: list[list[OperationProfile]] | None = [] if profile else None
    used, prepare_s, latencies = time_computations(
        compiled, inputs, threads=threads, runs=runs, warmup=warmup, profiles=runs_profiles
    )
    summary = None if runs_profiles is None else summarize(runs_profiles, latencies)
    return used, prepare_s, latencies, summary


def run_benchmark(
    model: Model,
    inputs: Sequence[np.ndarray],
    *,
    name: str = "model",
    threads: int | None = None,
    runs: int = 50,
    warmup: int = 5,
    cache_dir: str | os.PathLike | None = None,
    profile: bool = False,
) -> BenchResult:
    """Compile ``model`` and time its computations on ``inputs`` (with
    ``profile``, compiled for profiling, and the per-operation table)."""
    compiled, compile_s, cache = compile_timed(model, cache_dir, profile=profile)
    used, prepare_s, latencies, summary = measure(
        compiled, inputs, threads=threads, runs=runs, warmup=warmup, profile=profile
    )
    return BenchResult(name, used, warmup, runs, compile_s, cache, prepare_s, latencies, summary)
