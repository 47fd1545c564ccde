"""What the lit tests of lit/ must cover, computed from the registries so that
a new pass or lowering without a lit test fails here:

* every operation with a lowering (a key of ``LOWERINGS``) appears, as
  ``"nnapi.<name>"``, in a positive lit test that lowers it (its RUN line runs
  ``convert-nnapi-to-linalg`` or the whole ``--pipeline``);
* every pass ``nnc-opt`` knows (``PASSES``) has a positive lit test (a RUN line
  ``nnc-opt %s -p ...<pass>...`` without ``not``) and a negative one,
  ``lit/passes/<pass>-invalid.mlir``, whose RUN line expects ``nnc-opt`` to
  fail on that pass and whose CHECK lines expect its ``error:`` line.

The lit tests themselves run in tests/test_lit.py.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from functools import cache

from nnc.passes.lowering import LOWERINGS
from nnc.passes.pipeline import PASSES

LIT_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "lit"))
_RUN = re.compile(r"^//\s*RUN:\s*(.*)$", re.MULTILINE)
_PASS_LIST = re.compile(r"(?:^|\s)-p\s+('[^']*'|\S+)")
_OPTIONS = re.compile(r"\{[^}]*\}")


@dataclass(frozen=True)
class LitFile:
    path: str
    text: str
    run: str

    @property
    def negative(self) -> bool:
        return self.run.startswith("not ")

    @property
    def passes(self) -> tuple[str, ...]:
        """The passes the RUN line gives nnc-opt with -p."""
        lists = (_OPTIONS.sub("", m.group(1).strip("'")) for m in _PASS_LIST.finditer(self.run))
        return tuple(p for passes in lists for p in passes.split(","))

    @property
    def lowers(self) -> bool:
        return "--pipeline" in self.run or "convert-nnapi-to-linalg" in self.passes


@cache
def lit_files() -> tuple[LitFile, ...]:
    files = []
    for path in sorted(glob.glob(os.path.join(LIT_DIR, "**", "*.mlir"), recursive=True)):
        with open(path) as f:
            text = f.read()
        runs = _RUN.findall(text)
        assert len(runs) == 1, f"{path}: expected one RUN line, found {len(runs)}"
        files.append(LitFile(path, text, runs[0].strip()))
    return tuple(files)


def test_lit_files_found() -> None:
    assert len(lit_files()) > 20
    assert all("nnc-opt" in f.run and "filecheck" in f.run for f in lit_files())


def test_every_lowered_operation_has_a_lit_test() -> None:
    lowering_tests = [f for f in lit_files() if f.lowers and not f.negative]
    missing = sorted(
        t.name
        for t in LOWERINGS
        if not any(f'"nnapi.{t.name.lower()}"' in f.text for f in lowering_tests)
    )
    assert not missing, f"lowered operations in no lit test that lowers them: {missing}"


def test_every_pass_has_a_positive_lit_test() -> None:
    positive = {p for f in lit_files() if not f.negative for p in f.passes}
    missing = sorted(set(PASSES) - positive)
    assert not missing, f"passes without a positive lit test (RUN: nnc-opt %s -p <pass> ...): {missing}"


def test_every_pass_has_an_invalid_lit_test() -> None:
    by_path = {f.path: f for f in lit_files()}
    problems = []
    for name in sorted(PASSES):
        path = os.path.join(LIT_DIR, "passes", f"{name}-invalid.mlir")
        f = by_path.get(path)
        if f is None:
            problems.append(f"{name}: no lit/passes/{name}-invalid.mlir")
        elif not (f.negative and name in f.passes and "2>&1" in f.run):
            problems.append(f"{name}: the RUN line must be 'not nnc-opt %s ... -p {name} 2>&1 | filecheck %s'")
        elif not re.search(r"^//\s*CHECK:\s*nnc-opt: error:", f.text, re.MULTILINE):
            problems.append(f"{name}: no 'CHECK: nnc-opt: error:' line")
    assert not problems, "\n".join(problems)
