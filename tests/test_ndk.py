"""libneuralnetworks.so, the NNAPI NDK C API backed by nnc (``nnc ndk-lib``).

The library is built once per test run; the C programs in ``tests/ndk/`` are
compiled against it and run: the API test (success and error paths, also
under AddressSanitizer), 8 threads x 200 executions, and a Python process
that loads the library joins its interpreter.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "ndk"
CC = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


def compile_c(lib: Path, source: str, out: Path, *extra: str) -> Path:
    exe = out / Path(source).stem
    cmd = [CC, "-Wall", "-Werror", "-O1", "-g", "-DNN_COMPATIBILITY_LIBRARY_BUILD", f"-I{lib}", str(SOURCES / source),
           f"-L{lib}", "-lneuralnetworks", "-lpthread", f"-Wl,-rpath,{lib}", "-o", str(exe), *extra]  # fmt: skip
    subprocess.run(cmd, check=True)
    return exe


def run(exe: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_exports_and_soname(ndk_lib: Path) -> None:
    """Every function of NeuralNetworks.h (69 with the AHardwareBuffer one), SONAME libneuralnetworks.so."""
    so = ndk_lib / "libneuralnetworks.so"
    nm = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in nm.splitlines() if "ANeuralNetworks" in line}
    header = (ndk_lib / "NeuralNetworks.h").read_text()

    declared = set(re.findall(r"\b(ANeuralNetworks\w*)\s*\(", header))
    assert declared == exported, declared ^ exported
    assert len(exported) == 69
    dyn = subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True, check=True).stdout
    assert "Library soname: [libneuralnetworks.so]" in dyn


def test_c_api_program(ndk_lib: Path, tmp_path: Path) -> None:
    out = run(compile_c(ndk_lib, "ndk_test.c", tmp_path))
    assert out.startswith("ndk_test: ") and "checks passed" in out


def test_c_api_program_asan(ndk_lib: Path, tmp_path: Path) -> None:
    """The API test built with AddressSanitizer: no invalid access on the C side
    (leak detection off: the embedded interpreter keeps its allocations)."""
    exe = compile_c(ndk_lib, "ndk_test.c", tmp_path, "-fsanitize=address", "-fno-omit-frame-pointer")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    out = run(exe, env)
    assert "checks passed" in out


def test_threads(ndk_lib: Path, tmp_path: Path) -> None:
    out = run(compile_c(ndk_lib, "ndk_threads.c", tmp_path))
    assert "ndk_threads: 1600 executions correct" in out


def test_joins_running_interpreter(ndk_lib: Path) -> None:
    """Loaded into a Python process, the library uses that interpreter and its nnc."""
    import nnc

    lib = ctypes.CDLL(str(ndk_lib / "libneuralnetworks.so"))
    lib.ANeuralNetworks_getRuntimeFeatureLevel.restype = ctypes.c_int64
    assert lib.ANeuralNetworks_getRuntimeFeatureLevel() == 1000008  # ANEURALNETWORKS_FEATURE_LEVEL_8
    assert sys.modules["nnc"] is nnc
    assert [m for m in sys.modules if m.endswith("nnc") and m != "nnc"] == []


def test_compute_benchmark_runs() -> None:
    """benchmarks/ndk_compute_bench.py builds and reports a latency (its figure is
    recorded in benchmarks/RESULTS.md; a shared CI machine is no place to assert it)."""
    bench = HERE.parent / "benchmarks" / "ndk_compute_bench.py"
    proc = subprocess.run([sys.executable, str(bench), "--runs", "200", "--repeats", "3"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"median [0-9.]+ us", proc.stdout), proc.stdout
