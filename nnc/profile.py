"""Per-operation profiles (nnc extension): what each NNAPI operation costs.

A compilation made with ``Compilation.set_profiling(True)`` (``nnc.compile(model,
profile=True)``, ``nnc bench --profile``) runs code that reads the monotonic
clock before each operation of the main graph and after the last one
(:mod:`nnc.passes.profile` says how, and how views, fused operations, IF and
WHILE are attributed).  After a computation,
:meth:`nnc.Execution.get_operation_profile` gives one :class:`OperationProfile`
per operation, in model order; ``Execution.set_measure_timing`` and
``get_duration`` stay NNAPI's totals.

The operations' ``duration_ns`` add up to the time from the first stamp to
the last: the native call but its entry and the copies of outputs that are
not written in place, so a little less than ``DurationCode.ON_HARDWARE``.

MACs (multiply-accumulates) are given for the operations whose work is
dominated by them (:data:`MAC_COUNTS`), from the shapes shape inference gives
the operation (the filter's layout is NNAPI's, whatever the data layout):

==================  ==============================================================
CONV_2D             output elements x filter height x width x input depth
GROUPED_CONV_2D     output elements x filter height x width x input depth per group
DEPTHWISE_CONV_2D   output elements x filter height x width
TRANSPOSE_CONV_2D   input elements x output depth x filter height x width
FULLY_CONNECTED     output elements x input size
BATCH_MATMUL        output elements x the contracted dimension
UNIDIRECTIONAL_     time steps x batch x 4 gates x (input and recurrent weights of
SEQUENCE_LSTM       one gate)
==================  ==============================================================

``gflops`` is 2 x MACs / time (for quantised operations these are integer
operations).  :func:`summarize` turns the profiles of several computations
into the table ``nnc bench --profile`` prints: the median and mean time of
each operation, its share of the sum of the medians, sorted by time, and how
the times add up against the latencies (see :class:`ProfileSummary`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nnc.dialects.rules import OpCall
from nnc.enums import OperationType

if TYPE_CHECKING:
    import numpy as np

Shape = tuple[int, ...]


def _elements(shape: Sequence[int] | None) -> int:
    n = 1
    for d in shape or ():
        n *= d
    return n


def _dims(call: OpCall, i: int) -> Shape:
    dims = call.inputs[i].dims if i < len(call.inputs) else None
    return tuple(dims or ())


def _conv_macs(call: OpCall) -> int:
    """CONV_2D and GROUPED_CONV_2D: filter [depth_out, h, w, depth_in(/groups)]."""
    return _elements(call.outputs[0].dims) * _elements(_dims(call, 1)[1:])


def _depthwise_macs(call: OpCall) -> int:
    """Filter [1, h, w, depth_out]: one input channel per output element."""
    f = _dims(call, 1)
    return _elements(call.outputs[0].dims) * _elements(f[1:3])


def _transpose_conv_macs(call: OpCall) -> int:
    """Filter [depth_out, h, w, depth_in]: each input element meets depth_out x h x w weights."""
    return _elements(_dims(call, 0)) * _elements(_dims(call, 1)[:3])


def _fully_connected_macs(call: OpCall) -> int:
    """Weights [units, input_size]."""
    w = _dims(call, 1)
    return _elements(call.outputs[0].dims) * (w[1] if len(w) == 2 else 0)


def _batch_matmul_macs(call: OpCall) -> int:
    """lhs [..., M, K] (adj_x: [..., K, M])."""
    lhs = _dims(call, 0)
    adj_x = bool(call.scalar(2, False)) if len(call.inputs) > 2 else False
    k = lhs[-2] if adj_x else lhs[-1]
    return _elements(call.outputs[0].dims) * k


def _sequence_lstm_macs(call: OpCall) -> int:
    """Input [steps, batch, size] (or batch-major); the four gates' input and
    recurrent weights are as big as the forget gate's (inputs 4 and 8)."""
    x, w_in, w_rec = _dims(call, 0), _dims(call, 4), _dims(call, 8)
    return _elements(x[:2]) * 4 * (_elements(w_in) + _elements(w_rec))


#: operation type -> its multiply-accumulates, from its call with static shapes
MAC_COUNTS: dict[OperationType, Callable[[OpCall], int]] = {
    OperationType.CONV_2D: _conv_macs,
    OperationType.GROUPED_CONV_2D: _conv_macs,
    OperationType.DEPTHWISE_CONV_2D: _depthwise_macs,
    OperationType.TRANSPOSE_CONV_2D: _transpose_conv_macs,
    OperationType.FULLY_CONNECTED: _fully_connected_macs,
    OperationType.BATCH_MATMUL: _batch_matmul_macs,
    OperationType.UNIDIRECTIONAL_SEQUENCE_LSTM: _sequence_lstm_macs,
}


@dataclass(frozen=True)
class OperationDetails:
    """One operation of the main graph as the compiler saw it."""

    index: int
    type: OperationType
    output_shapes: tuple[Shape, ...]
    #: multiply-accumulates (None where :data:`MAC_COUNTS` defines none)
    macs: int | None
    #: the operation whose code computes this one (a fused epilogue's
    #: producer, a fused element-wise group's root), or None
    fused_into: int | None = None


def macs_of(call: OpCall) -> int | None:
    """``call``'s multiply-accumulates, or None if not defined for its type."""
    count = MAC_COUNTS.get(call.type)
    return None if count is None else int(count(call))


def operation_details(calls: Sequence[OpCall], fused_into: Mapping[int, int] | None = None) -> list[OperationDetails]:
    """The details of the main graph's operations and which of them other
    operations compute (``driver.operation_calls``)."""
    into = fused_into or {}
    return [
        OperationDetails(k, OperationType(c.type), tuple(tuple(o.dims or ()) for o in c.outputs), macs_of(c), into.get(k))
        for k, c in enumerate(calls)
    ]


@dataclass(frozen=True)
class OperationProfile:
    """One operation's time in one computation."""

    index: int
    type: OperationType
    output_shapes: tuple[Shape, ...]
    macs: int | None
    #: the monotonic clock (``time.monotonic_ns()``'s) when it started
    start_ns: int
    duration_ns: int
    #: the operation whose code computes this one (its own time is then ~0)
    fused_into: int | None = None

    @property
    def gflops(self) -> float | None:
        """2 x MACs per nanosecond (None without MACs or time)."""
        if self.macs is None or self.duration_ns <= 0:
            return None
        return 2.0 * self.macs / self.duration_ns


def profiles(details: Sequence[OperationDetails], stamps: Sequence[int] | np.ndarray) -> list[OperationProfile]:
    """The operations' profiles from one computation's ``stamps`` (one per
    operation and one after the last)."""
    if len(stamps) != len(details) + 1:
        raise ValueError(f"{len(stamps)} timestamps for {len(details)} operations")
    return [
        OperationProfile(
            d.index, d.type, d.output_shapes, d.macs, int(stamps[k]), int(stamps[k + 1] - stamps[k]), d.fused_into
        )
        for k, d in enumerate(details)
    ]


# -- the table of nnc bench --profile ------------------------------------------------------------


@dataclass(frozen=True)
class OperationSummary:
    """One operation over several computations."""

    index: int
    type: str
    output_shapes: list[list[int]]
    macs: int | None
    median_ms: float
    mean_ms: float
    #: share of the sum of every operation's median
    share: float
    #: 2 x MACs per second at the median time, in 10^9 (None without MACs)
    gflops: float | None
    #: the operations the entry's time covers, in model order: its own type
    #: alone, or with the operations its code computes (fused)
    covers: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The type, or the fused operations' types joined with ``+``
        (long ones as ``TYPE+N fused``; :meth:`ProfileSummary.report`
        lists them in full below the table)."""
        joined = "+".join(self.covers) if len(self.covers) > 1 else self.type
        return joined if len(joined) <= 20 else f"{self.type}+{len(self.covers) - 1} fused"


@dataclass(frozen=True)
class ProfileSummary:
    """The per-operation table, sorted by median time (longest first), and
    how its times add up against the latencies of the same computations.

    Medians resist the outliers of a loaded machine but do not add up (the
    median of sums is not the sum of medians); means do: the sum of the
    operations' means is the mean of the computations' operation time, the
    comparison with the mean latency that holds under any load."""

    operations: list[OperationSummary]
    #: sum of the operations' medians and the median latency (``Execution.compute``)
    sum_median_ms: float
    median_latency_ms: float
    #: sum of the operations' means and the mean latency
    sum_mean_ms: float
    mean_latency_ms: float
    #: median over the computations of (its operations' time / its latency)
    covered: float

    def to_json(self) -> dict:
        return {**{k: v for k, v in vars(self).items() if k != "operations"},
                "operations": [vars(o) for o in self.operations]}  # fmt: skip

    def report(self, limit: int | None = None) -> str:
        """The table (the ``limit`` longest operations, the rest summed on a last line)."""
        shown = self.operations if limit is None else self.operations[:limit]
        lines = [f"{'#':>4}  {'operation':<20} {'output shape':<16} {'MACs':>11} {'median us':>9} "
                 f"{'mean us':>8} {'share':>6} {'GFLOP/s':>7}"]  # fmt: skip
        for o in shown:
            shape = "; ".join("x".join(map(str, s)) for s in o.output_shapes)
            macs = "" if o.macs is None else f"{o.macs:,}"
            gflops = "" if o.gflops is None else f"{o.gflops:.1f}"
            lines.append(f"{o.index:>4}  {o.label:<20} {shape:<16} {macs:>11} {o.median_ms * 1e3:>9.1f} "
                         f"{o.mean_ms * 1e3:>8.1f} {o.share:>6.1%} {gflops:>7}")  # fmt: skip
        rest = self.operations[len(shown) :]
        if rest:
            label = f"({len(rest)} more)"
            lines.append(f"{'':>4}  {label:<20} {'':<16} {'':>11} {sum(o.median_ms for o in rest) * 1e3:>9.1f} "
                         f"{sum(o.mean_ms for o in rest) * 1e3:>8.1f} {sum(o.share for o in rest):>6.1%}")  # fmt: skip
        lines += [f"{o.index:>4}  covers {'+'.join(o.covers)}" for o in shown if o.label != "+".join(o.covers)
                  and len(o.covers) > 1]  # fmt: skip
        lines += [
            f"sum of the operations' medians {self.sum_median_ms:.3f} ms, median latency "
            f"{self.median_latency_ms:.3f} ms ({_ratio(self.sum_median_ms, self.median_latency_ms)})",
            f"sum of the operations' means {self.sum_mean_ms:.3f} ms, mean latency "
            f"{self.mean_latency_ms:.3f} ms ({_ratio(self.sum_mean_ms, self.mean_latency_ms)})",
            f"operations' time / latency of the same computation: median {self.covered:.1%} "
            "(the rest: compute()'s Python and the native entry)",
        ]
        return "\n".join(lines)


def _ratio(part: float, whole: float) -> str:
    return f"{part / whole:.1%}" if whole > 0 else "n/a"


def summarize(runs: Sequence[Sequence[OperationProfile]], latencies_ms: Sequence[float]) -> ProfileSummary:
    """The table of ``runs`` (the profiles of several computations of one
    variant) and ``latencies_ms`` (the same computations' latencies, in order)."""
    if not runs or len(runs) != len(latencies_ms):
        raise ValueError(f"{len(runs)} profiles for {len(latencies_ms)} latencies")
    first = runs[0]
    # an operation another one computes is counted in that one's entry,
    # which names every operation it covers ("CONV_2D+ADD", "LOGISTIC+MUL")
    covered_by = {p.index: p.fused_into for p in first if p.fused_into is not None}
    entries = [p for p in first if p.fused_into is None]
    members = {p.index: [q for q in first if covered_by.get(q.index) == p.index] for p in entries}
    position = {p.index: k for k, p in enumerate(first)}
    per_op = [
        [sum(r[position[q.index]].duration_ns for q in (p, *members[p.index])) / 1e6 for r in runs] for p in entries
    ]
    medians = [statistics.median(t) for t in per_op]
    means = [statistics.fmean(t) for t in per_op]
    total = sum(medians)
    ops = [
        OperationSummary(
            p.index, p.type.name, [list(s) for s in p.output_shapes], p.macs, ms, mean,
            ms / total if total > 0 else 0.0,
            None if p.macs is None or ms <= 0 else 2.0 * p.macs / (ms * 1e6),
            [q.type.name for q in sorted((p, *members[p.index]), key=lambda q: q.index)],
        )  # fmt: skip
        for p, ms, mean in zip(entries, medians, means)
    ]
    ops.sort(key=lambda o: (-o.median_ms, o.index))
    covered = statistics.median(
        sum(p.duration_ns for p in r) / 1e6 / lat if lat > 0 else 0.0 for r, lat in zip(runs, latencies_ms)
    )
    return ProfileSummary(
        ops, total, statistics.median(latencies_ms), sum(means), statistics.fmean(latencies_ms), covered
    )
