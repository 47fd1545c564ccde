"""Fault injection into nnc's LLVM workers, for tests only.

:func:`inject_fault` starts the workers of its block with a boot program of
its own: the real one (``worker._BOOT``) with the worker's
``jit.optimize`` replaced by a fault, so a test takes the real crash path
of a worker process that aborts, hangs or raises, and nnc's code has no
hook for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from nnc.runtime import worker

#: what the faulty worker does instead of optimising the IR
_FAULTS = {
    "abort": "os.abort()",
    "hang": "while True: time.sleep(3600)",
    "raise": "raise RuntimeError('fault injected by the test hook')",
}

_SERVE = ".serve(jit)"


@contextmanager
def inject_fault(kind: str) -> Iterator[None]:
    """Every worker started in the block makes its requests ``os.abort()``
    ("abort"), hang ("hang") or raise ("raise") instead of compiling.  The
    pool's idle workers are closed on entry (the next request starts a
    faulty one) and on exit (no faulty worker is reused)."""
    assert _SERVE in worker._BOOT, "the worker's boot program changed: update tests/worker_faults.py"
    fault = (
        "import os, time\n"
        "def _faulty(jit):\n"
        "    def optimize(*args, **kwargs):\n"
        f"        {_FAULTS[kind]}\n"
        "    jit.optimize = optimize\n"
        "    return jit\n"
    )
    boot = worker._BOOT
    worker.POOL.shutdown()
    worker._BOOT = fault + boot.replace(_SERVE, ".serve(_faulty(jit))")
    try:
        yield
    finally:
        worker._BOOT = boot
        worker.POOL.shutdown()
