"""pytest options and the conformance summary line.

``--cts-dir DIR`` runs another corpus of the nnapi-cts format.  Each CTS test
records its status; at the end the controller (also under xdist) prints

    cts: P passed, F failed, U unsupported of N models
    cts-c: P passed, F failed, U unsupported of N models

the second for the same runs through libneuralnetworks.so (the C API).

N counts runs: each corpus model as declared, plus (where CTS runs it) once
more with its output shapes left unspecified; a second line splits N so.

API checklist coverage (issue 6): a test marked ``@pytest.mark.checklist(12, 13)``
covers items C12 and C13 of ``../shared/spec/api-behaviour-checklist.md``.  An
item counts as covered when at least one of its tests passed (and none failed);
the run ends with

    api-checklist: N of 242 items covered, K not applicable (see tests/checklist_na.py)

followed by the non-applicable items with their reasons and any applicable
item that has no passing test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))

#: Every hypothesis test draws the same examples on every run, on every
#: machine: the suite passes or fails on the code alone.  Exploring new
#: examples is the job of the long fuzz runs (tests/fuzz/run.py).
settings.register_profile("suite", derandomize=True, database=None)
settings.load_profile("suite")

_COUNTS: dict[str, int] = {}
#: checklist item -> outcomes of the tests that cover it ("passed"/"failed"/"skipped")
_CHECKLIST: dict[int, set[str]] = {}
CHECKLIST_ITEMS = 242


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "checklist(*items): covers these api-behaviour-checklist items (C numbers)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("checklist"):
        item.user_properties.append(("checklist", tuple(int(i) for i in mark.args)))


#: Test modules run first, longest first (by the per-test durations of a
#: full run): pytest-xdist's load scheduling hands each worker consecutive
#: runs of tests in collection order, so a module of tests lasting tens of
#: seconds each, collected last, keeps one worker busy after the other ran
#: out of tests.  Only the order changes; every test runs.
LONG_FIRST = (
    "test_reduction_sizes.py", "test_tflite.py", "test_lit.py", "test_quant_arith.py",
    "test_parallel_loops.py", "test_thread_counts.py", "test_aarch64.py", "test_target.py",
    "test_kernels.py", "test_row_kernels.py",
)  # fmt: skip


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: k for k, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FIRST)))  # stable: modules stay whole


@pytest.fixture(scope="session")
def ndk_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """libneuralnetworks.so (with its headers) built once per test run by ``nnc ndk-lib``."""
    out = tmp_path_factory.mktemp("ndk-lib")
    subprocess.run([sys.executable, "-m", "nnc.cli", "ndk-lib", "-o", str(out)], check=True, capture_output=True)
    return out


def pytest_addoption(parser: pytest.Parser) -> None:
    from cts import DEFAULT_CTS_DIR

    parser.addoption("--cts-dir", default=os.environ.get("NNC_CTS_DIR", DEFAULT_CTS_DIR),
                     help="directory of an nnapi-cts style corpus (default: ../shared/nnapi-cts)")  # fmt: skip
    parser.addoption("--cts-filter", default="", help="only CTS models whose name contains this")
    parser.addoption("--cts-scope", choices=("all", "foundation", "v1_1"), default="all",
                     help="foundation: NNAPI 1.0 operations on float32/int32 operands; "
                          "v1_1: V1_0, V1_1 and NNAPI 1.0/1.1 operations on float/int/quant8 operands")  # fmt: skip


def _record_checklist(report: pytest.TestReport) -> None:
    items = [i for k, v in report.user_properties if k == "checklist" for i in v]
    if not items or (report.when != "call" and not report.failed and not report.skipped):
        return
    outcome = "failed" if report.failed else "skipped" if report.skipped else "passed"
    for i in items:
        _CHECKLIST.setdefault(i, set()).add(outcome)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _record_checklist(report)
    if "test_cts.py::test_cts[" not in report.nodeid:
        return
    props = dict(report.user_properties)
    c_status = props.get("cts_c_status")
    if report.when == "call" and c_status is not None:
        _COUNTS["c-" + c_status] = _COUNTS.get("c-" + c_status, 0) + 1
    status = props.get("cts_status")
    if report.when == "call" and status is not None:
        _COUNTS[status] = _COUNTS.get(status, 0) + 1
        kind = "dynamic" if report.nodeid.endswith("-dynamic]") else "plain"
        _COUNTS[kind] = _COUNTS.get(kind, 0) + 1
    elif report.failed and status is None:
        # A case that never reported (e.g. its worker process crashed) failed.
        _COUNTS["failed"] = _COUNTS.get("failed", 0) + 1


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if hasattr(config, "workerinput"):
        return
    _checklist_summary(terminalreporter)
    _cts_summary(terminalreporter)


def _checklist_summary(terminalreporter) -> None:
    if not _CHECKLIST:
        return
    from checklist_na import NOT_APPLICABLE

    covered = sorted(i for i, o in _CHECKLIST.items() if o == {"passed"} and i not in NOT_APPLICABLE)
    terminalreporter.write_line(
        f"api-checklist: {len(covered)} of {CHECKLIST_ITEMS} items covered, "
        f"{len(NOT_APPLICABLE)} not applicable (see tests/checklist_na.py)"
    )
    for i, why in sorted(NOT_APPLICABLE.items()):
        terminalreporter.write_line(f"  C{i} not applicable: {why}")
    missing = [i for i in range(1, CHECKLIST_ITEMS + 1) if i not in covered and i not in NOT_APPLICABLE]
    if missing:
        terminalreporter.write_line("  not covered: " + " ".join(f"C{i}" for i in missing))


def _cts_summary(terminalreporter) -> None:
    if not _COUNTS:
        return
    p, f, u = (_COUNTS.get(k, 0) for k in ("passed", "failed", "unsupported"))
    terminalreporter.write_line(f"cts: {p} passed, {f} failed, {u} unsupported of {p + f + u} models")
    cp, cf, cu = (_COUNTS.get("c-" + k, 0) for k in ("passed", "failed", "unsupported"))
    if cp + cf + cu:
        terminalreporter.write_line(f"cts-c: {cp} passed, {cf} failed, {cu} unsupported of {cp + cf + cu} models")
    terminalreporter.write_line(
        f"cts runs: {_COUNTS.get('plain', 0)} models as declared, "
        f"{_COUNTS.get('dynamic', 0)} with unspecified output shapes"
    )
