"""Fuzzing in the suite (issue 17), in bounded time: hypothesis draws seeds
for the five kinds of trials of tests/fuzz/ -- bad API arguments (one call,
and random call sequences), random float32 and quant8 graphs against numpy,
mutated model files, a damaged compilation cache (and concurrent writers),
out-of-range run-time inputs.  Single bad calls only parse and validate, so
they run in this process; every other kind runs its examples in one forked
child per test (:func:`fuzz.generators.run_isolated`): native code runs
there, so a crash or a hang fails the test with its seed instead of killing
the run.  ``tests/fuzz/run.py`` runs the same trials for N minutes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.cache import _concurrent_writers
from fuzz.common import guarded
from fuzz.generators import TRIALS, run_isolated

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)

#: examples per test, by kind (a few seconds each on a loaded 2-core machine)
EXAMPLES = {"api-sequence": 40, "graph": 6, "file": 60, "cache": 2, "runtime-input": 12}


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
    failures = [f"{kind} seed {s}: {o[0]}: {o[1]}" for s, o in results if o is not None]
    assert not failures, "\n".join(failures)
    assert len(results) == len(seeds)


def test_concurrent_cache_writers() -> None:
    """Three processes compile one model into one damaged cache directory at once."""
    results = run_isolated(guarded(_concurrent_writers), [17], hang_s=120)
    assert results == [(17, None)]
