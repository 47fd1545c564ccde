"""Every model of the conformance corpus, plain and with dynamic output shapes.

Unsupported cases are counted in the ``cts:`` line and reported as skips
naming the missing feature; inside the scope nnc has promised (every model
without a detection/ROI operation, issue 12's scope, which contains NNAPI 1.0
and 1.1: see ``cts.in_promised_scope``) an unsupported case is a failure.
"""

from __future__ import annotations

import pytest
from cts import Case, cases, in_foundation_scope, in_promised_scope, in_v1_1_scope, model_json, run_case


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
    record_property("cts_promised", in_promised_scope(case))
    if result.status == "failed":
        pytest.fail(result.message, pytrace=False)
    if result.status == "unsupported":
        if in_promised_scope(case):
            pytest.fail(f"in scope but unsupported: {result.message}", pytrace=False)
        pytest.skip(f"unsupported: {result.message}")
