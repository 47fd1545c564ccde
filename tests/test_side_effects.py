"""Importing nnc changes nothing process-wide, and compiling leaves the
garbage collector as it found it."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from nnc import driver


def test_importing_the_worker_pool_registers_no_hooks() -> None:
    """The LLVM worker pool registers its atexit and at-fork hooks when it
    starts its first worker, not when it is imported."""
    code = (
        "import atexit\n"
        "before = atexit._ncallbacks()\n"
        "from nnc.runtime import worker\n"
        "assert not worker.POOL._hooks and atexit._ncallbacks() == before, atexit._ncallbacks() - before\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("enabled", [True, False])
def test_gc_paused_restores_the_collector_even_on_error(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with pytest.raises(RuntimeError), driver.gc_paused():
            assert not gc.isenabled()
            with driver.gc_paused():  # nested (or concurrent) lowerings
                pass
            assert not gc.isenabled()
            raise RuntimeError("a failing lowering")
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()
