"""Fuzzing in the suite (issue 17), in bounded time: hypothesis draws seeds
for the trials of tests/fuzz/generators.py -- bad API arguments and mutated
model files in this process (they only parse and validate), random float32
graphs against numpy in a forked child (they compile and run native code, so
a crash fails the test with its seed).  ``tests/fuzz/run.py`` runs the same
trials for N minutes."""

from __future__ import annotations

import pytest
from fuzz.generators import api_trial, file_trial, graph_trial, run_isolated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(SEEDS)
def test_bad_api_arguments_raise_nnerror(seed: int) -> None:
    assert api_trial(seed) is None


@FAST
@given(SEEDS)
def test_mutated_model_files_raise_nnerror(seed: int) -> None:
    assert file_trial(seed) is None


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SEEDS)
def test_random_float_graphs_match_numpy(seed: int) -> None:
    outcome = run_isolated(graph_trial, seed)
    if outcome is not None:
        pytest.fail(f"{outcome[0]}: {outcome[1]}")
