"""``nnc-opt --where OPERATION``: every place an operation lives, as
``path:line`` lines that point at the definitions they name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nnc.opt import main

ROOT = Path(__file__).resolve().parent.parent


def where(name: str, capsys) -> list[tuple[str, Path, int, str]]:
    """(what, file, line, name) of each line ``--where`` prints (paths from the repository root)."""
    assert main(["--where", name]) == 0
    rows = []
    for line in capsys.readouterr().out.splitlines():
        m = re.fullmatch(r"(.+?)\s+(\S+):(\d+)(?:\s+(\S+))?", line)
        assert m, line
        rows.append((m[1].strip(), (ROOT / m[2]).resolve() if not Path(m[2]).is_absolute() else Path(m[2]), int(m[3]), m[4] or ""))
    return rows


def _points_at_its_definition(path: Path, line: int, name: str) -> bool:
    text = path.read_text().splitlines()[line - 1]
    return re.search(rf"\bdef {re.escape(name.rsplit('.', 1)[-1])}\b", text) is not None


@pytest.mark.parametrize(
    "op,expected",
    [
        ("DEPTHWISE_CONV_2D", {
            "record": "dialects/optable.py", "rule": "dialects/rules/conv/depthwise.py", "lowering": "passes/lowering/conv/depthwise.py",
            "kernel": "passes/kernels/q8.py", "tflite DEPTHWISE_CONV_2D": "nnc/tflite/converters.py", "lit": "lit/lowering/conv.mlir",
        }),
        ("HARD_SWISH", {
            "record": "dialects/optable.py", "rule": "dialects/rules/elementwise.py",
            "lowering": "passes/lowering/elementwise_q8.py", "tflite HARD_SWISH": "nnc/tflite/converters.py",
            "lit": "lit/lowering/elementwise.mlir",
        }),
    ],
)  # fmt: skip
def test_where_lists_every_place(op: str, expected: dict[str, str], capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    rows = where(op, capsys)
    for what, path in expected.items():
        assert any(w == what and p == (ROOT / path).resolve() for w, p, _, _ in rows), (what, path, rows)
    for what, path, line, name in rows:
        if what == "record":
            assert f"_T.{op}" in path.read_text().splitlines()[line - 1]
        elif what != "lit":
            assert _points_at_its_definition(path, line, name), (what, path, line, name)
        else:
            assert f"nnapi.{op.lower()}" in path.read_text().splitlines()[line - 1]


def test_where_finds_both_depthwise_kernels(capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    kernels = {(p.name, n) for w, p, _, n in where("DEPTHWISE_CONV_2D", capsys) if w == "kernel"}
    assert {("f32.py", "dw_kernel"), ("q8.py", "dw_kernel")} <= kernels


def test_where_of_an_unknown_operation_is_an_argument_error(capsys) -> None:
    assert main(["--where", "DEPTHWISE"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nnc-opt: error: unknown operation 'DEPTHWISE'") and "DEPTHWISE_CONV_2D" in err


def test_nnc_opt_stops_quietly_when_its_reader_leaves() -> None:
    """``nnc-opt ... | head``: a write to a pipe nobody reads ends nnc-opt
    with a broken pipe's exit status (141), without a traceback.  The read
    end is closed before nnc-opt starts, so its first write fails."""
    import os
    import subprocess
    import sys

    lit = ROOT / "lit" / "passes" / "convert-nnapi-to-linalg-target-attr.mlir"
    script = f"import sys; from nnc.opt import main; sys.exit(main([{str(lit)!r}, '-p', 'convert-nnapi-to-linalg']))"
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-c", script], stdout=w, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 141 and b"Traceback" not in proc.stderr, proc.stderr.decode()
