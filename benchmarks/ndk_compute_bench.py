"""The cost of ``ANeuralNetworksExecution_compute`` called from C.

Run from the repository root::

    python benchmarks/ndk_compute_bench.py [--runs 2000] [--repeats 5]

Builds libneuralnetworks.so (``nnc ndk-lib``) and ``ndk_compute_bench.c``
into a temporary directory and runs it: one reusable execution of a tiny
model, bound once, computed again and again; the figure is the median of the
repeats' median latencies (the target is at most 10 us).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build(out: Path) -> Path:
    """The benchmark program linked against a fresh library in ``out``."""
    subprocess.run([sys.executable, "-m", "nnc.cli", "ndk-lib", "-o", str(out)], check=True, stdout=subprocess.DEVNULL)
    cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
    exe = out / "ndk_compute_bench"
    subprocess.run([cc, "-O2", "-DNN_COMPATIBILITY_LIBRARY_BUILD", f"-I{out}", str(HERE / "ndk_compute_bench.c"),
                    f"-L{out}", "-lneuralnetworks", f"-Wl,-rpath,{out}", "-o", str(exe)], check=True)  # fmt: skip
    return exe


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(Path(tmp))
        proc = subprocess.run([str(exe), str(args.runs), str(args.repeats)], capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
