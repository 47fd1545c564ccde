"""Fuzzing in the suite (issues 17 and 33), in bounded time: hypothesis draws
seeds for the kinds of trials of tests/fuzz/ -- bad API arguments (one call,
and random call sequences), random float32 and quant8 graphs against numpy,
mutated model files, a damaged compilation cache (and concurrent writers),
out-of-range run-time inputs, conformance models at edge sizes compiled
for two targets at two thread counts.  Single bad calls only parse and validate, so
they run in this process; every other kind runs its examples in one forked
child per test (:func:`fuzz.generators.run_isolated`): native code runs
there, so a crash or a hang fails the test with its seed instead of killing
the run.  ``tests/fuzz/run.py`` runs the same trials for N minutes.

The suite's seeds are derandomised (the hypothesis profile of conftest.py):
a run of the suite passes or fails on the code alone, never on the seeds it
happened to draw.  New seeds are the long runs' job; whatever they find gets
a regression test."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.cache import _concurrent_writers
from fuzz.common import guarded, is_finding
from fuzz.generators import TRIALS, run_isolated

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)

#: examples per test, by kind (a few seconds each on a loaded 2-core machine)
EXAMPLES = {"api-sequence": 40, "graph": 6, "file": 60, "cache": 2, "runtime-input": 12, "edges": 16}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_bad_api_arguments_raise_nnerror(seed: int) -> None:
    assert TRIALS["api"](seed) is None


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_fuzz_kind_in_a_child(kind: str) -> None:
    """The seeds hypothesis draws for ``kind``, all in one child process."""
    seeds: list[int] = []

    @settings(max_examples=EXAMPLES[kind], deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
    @given(SEEDS)
    def draw(seed: int) -> None:
        seeds.append(seed)

    draw()
    results = run_isolated(TRIALS[kind], seeds, hang_s=120)
    failures = [f"{kind} seed {s}: {o[0]}: {o[1]}" for s, o in results if is_finding(o)]
    assert not failures, "\n".join(failures)
    assert len(results) == len(seeds)


def test_concurrent_cache_writers() -> None:
    """Three processes compile one model into one damaged cache directory at once."""
    results = run_isolated(guarded(_concurrent_writers), [17], hang_s=120)
    assert results == [(17, None)]


#: edge trials that once found a bug, with what it was
EDGE_REGRESSIONS = {
    # LSTM, batch 17, run-time weights: the GEMM's weight panels were placed
    # over the gate temporary (nnc-plan-buffers did not follow memref.view)
    1005358: "LSTM float16 at batch 17",
    # the same: a layer-normalised CIFG LSTM with peepholes and projection
    1006433: "LSTM float32 with layer norm, its operands computed by ADDs",
}


def test_edge_trials_that_found_bugs() -> None:
    seeds = sorted(EDGE_REGRESSIONS)
    results = run_isolated(TRIALS["edges"], seeds, hang_s=120)
    assert [(s, o) for s, o in results if is_finding(o)] == []
    assert [s for s, _ in results] == seeds
