"""Bursts (ANeuralNetworksBurst_*): a compilation's fast path for repeated executions.

A burst serves executions of one compilation, one at a time
(:meth:`Execution.burst_compute`).  nnc's burst keeps the scratch arena of
each compiled variant between computations, so a sequence of burst
computations allocates its working memory once; that is the state Android's
bursts keep on the driver side.  It caches no memory objects, so freeing a
memory before or after the burst that used it is always safe.

A second computation started while one is running on the same burst is
refused with BAD_STATE, as the runtime's ``tryLock`` does.
"""

from __future__ import annotations

import threading

import numpy as np

from nnc.compilation import Compilation, require_usable
from nnc.errors import BadStateError, ndk
from nnc.runtime.executable import new_arena

_CREATE = "ANeuralNetworksBurst_create"


class Burst:
    """ANeuralNetworksBurst for a finished compilation."""

    def __init__(self, compilation: Compilation):
        self.compilation = require_usable(compilation, _CREATE)  # strong reference: the compilation outlives the burst
        self._in_use = threading.Lock()
        #: id(executable) -> (executable, its arena); holding the executable keeps the id unique
        self._arenas: dict[int, tuple[object, np.ndarray]] = {}
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether the burst was closed (freed): it then accepts no computation."""
        return self._closed

    def acquire(self, fn: str) -> None:
        """Take the burst for one computation (BAD_STATE if it is busy)."""
        if not self._in_use.acquire(blocking=False):
            raise BadStateError(fn, "another computation is running on this burst")

    def release(self) -> None:
        """Give the burst back after the computation :meth:`acquire` took it for."""
        self._in_use.release()

    def arena(self, executable) -> np.ndarray | None:
        """The scratch arena kept for ``executable`` (only while acquired)."""
        entry = self._arenas.get(id(executable))
        if entry is None:
            entry = self._arenas[id(executable)] = (executable, new_arena(executable.arena_size))
        return entry[1]

    @ndk("ANeuralNetworksBurst_free", free=True)
    def close(self) -> None:
        """ANeuralNetworksBurst_free: idempotent.  A computation running on the
        burst keeps what it uses; the burst only stops accepting new ones."""
        self._closed = True

    def __enter__(self) -> Burst:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
