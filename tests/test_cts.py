"""Every model of the conformance corpus, plain and with dynamic output shapes.

Every model is in scope (issue 15 closed the last gap, the detection/ROI
operations): an unsupported case is counted in the ``cts:`` line as
unsupported and fails the test, naming the missing feature.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

import cts_c
from cts import Case, cases, in_foundation_scope, in_v1_1_scope, model_json, run_case


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" in metafunc.fixturenames:
        opt = metafunc.config.getoption
        selected = [c for c in cases(opt("--cts-dir")) if opt("--cts-filter") in c.name]
        if opt("--cts-scope") == "foundation":
            selected = [c for c in selected if in_foundation_scope(model_json(c))]
        elif opt("--cts-scope") == "v1_1":
            selected = [c for c in selected if in_v1_1_scope(c)]
        metafunc.parametrize("case", selected, ids=[c.id for c in selected])


@pytest.fixture(scope="session")
def c_api(request: pytest.FixtureRequest) -> SimpleNamespace | None:
    """The harness's classes over libneuralnetworks.so; None without a C compiler."""
    if shutil.which(os.environ.get("CC") or "cc") is None and shutil.which("gcc") is None:
        return None
    lib: Path = request.getfixturevalue("ndk_lib")
    return cts_c.api(str(lib / "libneuralnetworks.so"))


def test_cts(case: Case, record_property, c_api: SimpleNamespace | None) -> None:
    """The case through nnc's Python API, then the same through the C library.

    Why one test runs both: right after the Python run, the C run's
    compilation hits nnc's in-process compile cache (the library joins this
    interpreter), so the C API costs the corpus almost no compile time."""
    result = run_case(case)
    record_property("cts_status", result.status)
    c_result = run_case(case, c_api) if c_api is not None else None
    if c_result is not None:
        record_property("cts_c_status", c_result.status)
    if result.status == "failed":
        pytest.fail(result.message, pytrace=False)
    if result.status == "unsupported":
        pytest.fail(f"unsupported: {result.message}", pytrace=False)
    if c_result is not None and c_result.status != "passed":
        pytest.fail(f"through the C library: {c_result.status}: {c_result.message}", pytrace=False)
