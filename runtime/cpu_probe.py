"""Which CPUs LLVM can generate code for, checked in a child process.

``nnc compile --target-cpu NAME`` needs to know, before the slow part, that
LLVM knows NAME for this machine's triple.  LLVM reports an unknown CPU only as
a warning on stderr and aborts the whole process on some names (a 32-bit-only
CPU for a 64-bit triple), so the probe runs in a child Python process.
Separate from :mod:`nnc.runtime.artifact`, which links and documents code
once the target is chosen.
"""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys

import llvmlite.binding as llvm

from nnc.runtime.artifact import ArtifactError, ArtifactUsageError
from nnc.runtime.jit import Target, initialize

_PROBE = r"""
import json, os, sys, tempfile
import llvmlite.binding as llvm
llvm.initialize_native_target(); llvm.initialize_native_asmprinter()
t = llvm.Target.from_triple(sys.argv[1])
def machine(cpu):
    sys.stderr.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(2); os.dup2(f.fileno(), 2)
        try:
            tm = t.create_target_machine(cpu=cpu, features="", opt=3, reloc="pic")
        finally:
            os.dup2(saved, 2); os.close(saved)
        f.seek(0)
        return tm, f.read().decode(errors="replace")
if sys.argv[2] == "help":
    print(json.dumps({"listing": machine("help")[1]}))
    sys.exit(0)
tm, warnings = machine(sys.argv[2])
if "not a recognized processor" in warnings:
    _, listing = machine("help")
    print(json.dumps({"unknown": True, "listing": listing}))
    sys.exit(0)
m = llvm.parse_assembly("define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}")
m.triple = sys.argv[1]
tm.emit_object(m)
print(json.dumps({"unknown": False}))
"""


def _probe(cpu: str) -> tuple[subprocess.CompletedProcess, str]:
    initialize()
    triple = llvm.get_process_triple()
    proc = subprocess.run([sys.executable, "-c", _PROBE, triple, cpu], capture_output=True, text=True, timeout=120)
    return proc, triple


def _cpu_names(listing: str) -> list[str]:
    return re.findall(r"^\s+(\S+)\s+- Select the", listing, re.M)


def known_cpus() -> list[str]:
    """The CPU names LLVM accepts for this machine's triple."""
    proc, triple = _probe("help")
    if proc.returncode != 0:
        raise ArtifactError(f"cannot list the CPUs LLVM knows for {triple}: {proc.stderr.strip()}")
    return _cpu_names(json.loads(proc.stdout.strip().splitlines()[-1])["listing"])


def target_for_cpu(cpu: str | None) -> Target:
    """The host target, or the host triple for ``cpu``.  The CPU is checked in
    a child process first: LLVM aborts the process on some CPU names (a
    32-bit-only CPU for a 64-bit triple) instead of reporting an error."""
    if cpu is None or cpu in ("host", "native"):
        return Target.host()
    if not cpu or cpu == "help" or cpu.startswith("-") or any(c.isspace() for c in cpu):
        raise ArtifactUsageError(f"--target-cpu {cpu!r} is not a CPU name (--target-cpu help lists them)")
    proc, triple = _probe(cpu)
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["LLVM aborted"])[-1]
        raise ArtifactUsageError(f"--target-cpu {cpu!r} cannot generate code for {triple}: {why}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["unknown"]:
        near = difflib.get_close_matches(cpu, _cpu_names(result["listing"]), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else " (--target-cpu help lists them)"
        raise ArtifactUsageError(f"--target-cpu {cpu!r} is not a CPU LLVM knows for {triple}{hint}")
    return Target.for_cpu(cpu)
