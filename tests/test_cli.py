"""The nnc command line: the bundled example, files in and out, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import nnc

ROOT = os.path.join(os.path.dirname(__file__), "..")
EXAMPLE = os.path.join(ROOT, "examples", "tiny_cnn.nnc")


def nnc_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from nnc.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_run_example_prints_inputs_and_outputs():
    proc = nnc_cli("run", EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert "input_0 [1, 8, 8, 1] float32" in proc.stdout
    assert "output_0 [1, 3] float32" in proc.stdout


def test_run_with_files_matches_python_api(tmp_path):
    x = np.random.default_rng(3).uniform(-1, 1, (1, 8, 8, 1)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    proc = nnc_cli("run", EXAMPLE, "--input", f"input_0={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    y = np.load(tmp_path / "out" / "output_0.npy")
    [ref] = nnc.compile(nnc.Model.load(EXAMPLE)).run(x)
    np.testing.assert_array_equal(y, ref)
    assert abs(float(y.sum()) - 1.0) < 1e-5  # softmax


def test_errors_exit_nonzero_with_a_message(tmp_path):
    proc = nnc_cli("run", str(tmp_path / "missing.nnc"))
    assert proc.returncode == 1 and "BAD_DATA" in proc.stderr
    proc = nnc_cli("run", EXAMPLE, "--input", "nope=x.npy")
    assert proc.returncode == 2 and "unknown input" in proc.stderr
    proc = nnc_cli("info", EXAMPLE)
    assert proc.returncode == 0 and "CONV_2D" in proc.stdout


def test_compile_timings_list_every_pass_in_order(tmp_path):
    """``nnc compile --timings``: one line per stage on stderr, the passes in
    pipeline order with their op counts, and the LLVM stage."""
    from nnc.passes.pipeline import DEFAULT_PIPELINE

    proc = nnc_cli("compile", EXAMPLE, "-o", str(tmp_path / "m.ll"), "--emit", "llvm", "--timings")
    assert proc.returncode == 0, proc.stderr
    stages = [line.split()[-1] for line in proc.stderr.splitlines() if line.strip() and line.split()[0][0].isdigit()]
    passes = [s for s in stages if s in DEFAULT_PIPELINE]
    assert passes == list(DEFAULT_PIPELINE), stages
    assert stages[0] == "import-model" and stages[-1] == "total" and "emit)" in stages
    rows = [line.split() for line in proc.stderr.splitlines() if line.strip().endswith("convert-nnapi-to-linalg")]
    assert len(rows) == 1 and int(rows[0][2]) < int(rows[0][3])  # the lowering adds operations


def test_help_and_reading_an_nnc_model_import_no_compiler():
    """``nnc --help``, argument errors and reading an .nnc model file never
    import the compiler (xDSL and the passes: about a second of start-up);
    only a compilation or a TFLite import does."""
    code = (
        "import sys, contextlib, io\n"
        "import nnc, nnc.cli\n"
        f"nnc.load_model({EXAMPLE!r})\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    nnc.cli.main(['--help'])\n"
        "with contextlib.redirect_stderr(io.StringIO()):\n"
        f"    assert nnc.cli.main(['compile', {EXAMPLE!r}, '-o', '-', '--emit', 'obj']) == 2\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'xdsl' or m.startswith('nnc.passes')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
