"""Every model of the conformance corpus, plain and with dynamic output shapes.

Every model is in scope (issue 15 closed the last gap, the detection/ROI
operations): an unsupported case is counted in the ``cts:`` line as
unsupported and fails the test, naming the missing feature.
"""

from __future__ import annotations

import pytest

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


def test_cts(case: Case, record_property) -> None:
    result = run_case(case)
    record_property("cts_status", result.status)
    if result.status == "failed":
        pytest.fail(result.message, pytrace=False)
    if result.status == "unsupported":
        pytest.fail(f"unsupported: {result.message}", pytrace=False)
