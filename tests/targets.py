"""Named targets for the tests that depend on the target.

A test that asserts a kernel name, a vector width, a tile or an instruction
compiles for a CPU it names, never for the host: the suite runs on AVX2 and
AVX-512 machines alike (and on AArch64 for the cross tests), and what the
host would pick differs between them.

* :data:`X86_CPUS`: one CPU per x86-64 kernel path (SSE2, SSE4.2, AVX2 + FMA,
  AVX-512).  LLVM emits code for any of them on any machine, so tests that
  read IR or assembly cover all four everywhere.
* :func:`runnable_cpus`: those of them whose code this machine can execute
  (every feature LLVM implies for the CPU is one the host has), for tests
  that run the code and compare the results of several kernel paths.
"""

from __future__ import annotations

import functools

from nnc.driver import target_description
from nnc.passes.target import TargetDescription
from nnc.runtime.jit import Target, host_triple

#: generic x86-64 (SSE2), x86-64-v2 (SSE4.2), AVX2 + FMA, AVX-512
X86_CPUS = ("x86-64", "x86-64-v2", "haswell", "skylake-avx512")


def x86_target(cpu: str) -> Target:
    """``cpu`` on x86-64 Linux, whatever the host (code may be emitted, not run)."""
    return Target("x86_64-unknown-linux-gnu", cpu, "")


def description(target: Target) -> TargetDescription:
    """What the lowering derives from ``target`` (its features as LLVM implies them)."""
    return target_description(target)


@functools.cache
def runnable_cpus() -> tuple[str, ...]:
    """The CPUs of :data:`X86_CPUS` whose code the host can execute: all of
    them that the host's features cover (none on a non-x86 host, where the
    host itself stands in, named ``""``)."""
    if not host_triple().startswith("x86_64"):
        return ("",)
    host = description(Target.host()).features
    return tuple(cpu for cpu in X86_CPUS if description(Target.for_cpu(cpu)).features <= host)


def runnable_target(cpu: str) -> Target:
    """A CPU of :func:`runnable_cpus` as a target for this process (``""``: the host)."""
    return Target.for_cpu(cpu) if cpu else Target.host()
