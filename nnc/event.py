"""Events (ANeuralNetworksEvent_*): completion of an asynchronous computation.

An event is created by :meth:`Execution.start_compute`,
:meth:`Execution.start_compute_with_dependencies` or
:meth:`Event.from_sync_fence_fd`.  It is signalled when its computation ends;
:meth:`Event.wait` then returns (NO_ERROR) or raises the computation's error,
as ``ANeuralNetworksEvent_wait`` returns its result code.  Any number
of threads may wait on one event.

Sync fences on Linux
--------------------
Android's sync fence is a file descriptor that becomes signalled (``poll``
reports it readable) when the work behind it completes, with a status
(success or an error).  Linux has no sync_file for CPU work, so nnc maps it
onto plain pollable descriptors:

* The fence of an event from ``start_compute_with_dependencies`` is one end
  of an ``AF_UNIX`` stream ``socketpair``.  When the computation ends, nnc
  writes one status byte (the ResultCode, 0 = NO_ERROR) into the other end
  and closes it: from then on the descriptor is readable (``POLLIN``) for
  good, and the status can be read with ``recv(1, MSG_PEEK)`` without
  consuming it.  :meth:`Event.get_sync_fence_fd` returns a new duplicate that
  the caller owns and must close.  Events from ``start_compute`` have no
  fence: BAD_DATA (the Android 12 behaviour; Android 11 said OP_FAILED).
* :meth:`Event.from_sync_fence_fd` accepts any pollable descriptor -- such a
  socket, an ``eventfd``, the read end of a pipe -- and duplicates it (the
  caller keeps its own).  The event counts as signalled once ``poll`` reports
  it readable or hung up.  Its status is the peeked status byte when the
  descriptor is a socket with one waiting, OP_FAILED when ``poll`` reports an
  error (``POLLERR``/``POLLNVAL``), and NO_ERROR otherwise.  nnc never reads
  from the descriptor, so several events (and processes) can share it; an
  ``eventfd`` stays signalled as long as nobody reads it.

Closing an event (``ANeuralNetworksEvent_free``) waits for it first, as
Android's does; closing twice is harmless.  The computation itself
keeps its event, execution and buffers alive until it ends, so dropping the
last reference to an event early never frees anything in use.
"""

from __future__ import annotations

import os
import select
import socket
import stat
import threading
import weakref

import numpy as np

from nnc.enums import ResultCode
from nnc.errors import BadDataError, NNError, OpFailedError, error_for, ndk, rebrand

_WAIT = "ANeuralNetworksEvent_wait"
_GET_FD = "ANeuralNetworksEvent_getSyncFenceFd"
_CREATE_FD = "ANeuralNetworksEvent_createFromSyncFenceFd"
_FREE = "ANeuralNetworksEvent_free"


class Event:
    """ANeuralNetworksEvent: the completion of one computation."""

    def __init__(self, *, _origin: str):
        if _origin not in ("compute", "fenced", "fd"):
            raise TypeError("events come from Execution.start_compute* or Event.from_sync_fence_fd")
        self._origin = _origin
        self._done = threading.Event()
        self._error: NNError | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._holds: object = None  # the running computation's execution (kept alive until done)
        self._fence_r: socket.socket | None = None
        self._fence_w: socket.socket | None = None
        self._fd = -1

    # -- runtime side -------------------------------------------------------------------------
    @classmethod
    def for_computation(cls, execution: object, fenced: bool) -> Event:
        """The event of a computation ``execution`` starts, keeping it alive
        until signalled; ``fenced``: with a sync fence."""
        ev = cls(_origin="fenced" if fenced else "compute")
        ev._holds = execution
        if fenced:
            ev._fence_r, ev._fence_w = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        return ev

    def signal(self, error: NNError | None) -> None:
        """Signal the event with the computation's result (worker thread)."""
        with self._lock:
            self._error = error
            if self._fence_w is not None:
                code = ResultCode.NO_ERROR if error is None else int(error.code)
                try:
                    self._fence_w.sendall(bytes([min(int(code), 255)]))
                finally:
                    self._fence_w.close()
                    self._fence_w = None
            self._holds = None
            self._done.set()

    def wait_error(self) -> NNError | None:
        """Block until signalled; the computation's error or None."""
        if self._origin == "fd":
            return self._wait_fd(block=True)[1]
        self._done.wait()
        return self._error

    def poll(self) -> tuple[bool, NNError | None]:
        """(signalled, error) without blocking."""
        if self._origin == "fd":
            return self._wait_fd(block=False)
        return self._done.is_set(), self._error

    @property
    def closed(self) -> bool:
        """Whether the event was closed (freed)."""
        return self._closed

    def _wait_fd(self, block: bool) -> tuple[bool, NNError | None]:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        while True:
            ready = poller.poll(None if block else 0)
            if ready or not block:
                break
        if not ready:
            return False, None
        events = ready[0][1]
        if events & (select.POLLERR | select.POLLNVAL):
            return True, OpFailedError(_WAIT, "the sync fence reports an error")
        code = _peek_status(self._fd)
        if code:
            return True, error_for(code, _WAIT, "the sync fence was signalled with this status")
        return True, None

    # -- NDK API --------------------------------------------------------------------------------
    @ndk(_WAIT)
    def wait(self) -> None:
        """ANeuralNetworksEvent_wait: block until the computation ends; return
        if it succeeded, else raise its error (e.g. OutputInsufficientSizeError
        with the output shapes, MissedDeadlineError, OpFailedError), reported
        by ``ANeuralNetworksEvent_wait`` with the original as ``__cause__``."""
        error = self.wait_error()
        if error is not None:
            raise rebrand(error, _WAIT)

    @ndk(_GET_FD)
    def get_sync_fence_fd(self) -> int:
        """ANeuralNetworksEvent_getSyncFenceFd: a new fd (the caller closes it)
        that becomes readable when the computation ends.  BAD_DATA for an
        event without a fence (from ``start_compute``)."""
        if self._origin == "compute":
            raise BadDataError(_GET_FD, "the event is not backed by a sync fence (it comes from start_compute)")
        if self._origin == "fd":
            fd = self._fd
        else:
            assert self._fence_r is not None  # a fence event's socket, until freed
            fd = self._fence_r.fileno()
        return os.dup(fd)

    @staticmethod
    def from_sync_fence_fd(sync_fence_fd: int) -> Event:
        """ANeuralNetworksEvent_createFromSyncFenceFd: an event signalled when
        ``sync_fence_fd`` becomes readable (see the module docstring).  The fd
        is duplicated; BAD_DATA for an fd <= 0 or one that is not open."""
        fn = _CREATE_FD
        if isinstance(sync_fence_fd, bool) or not isinstance(sync_fence_fd, int | np.integer):
            raise BadDataError(fn, f"the sync fence fd must be an int, got {type(sync_fence_fd).__name__}")
        if not 0 < int(sync_fence_fd) <= 2**31 - 1:  # a C int
            raise BadDataError(fn, f"invalid sync fence fd {sync_fence_fd}")
        try:
            dup = os.dup(int(sync_fence_fd))
        except OSError as e:
            raise BadDataError(fn, f"fd {sync_fence_fd} cannot be used: {e.strerror}") from None
        ev = Event(_origin="fd")
        ev._fd = dup
        weakref.finalize(ev, _close_fd, dup)
        return ev

    @property
    def signalled(self) -> bool:
        """Whether the computation has ended (never blocks)."""
        return self.poll()[0]

    @ndk(_FREE, free=True)
    def close(self) -> None:
        """ANeuralNetworksEvent_free: waits for the computation, then releases
        the fence.  Idempotent; never raises."""
        if self._closed:
            return
        try:
            self.wait_error()
        except Exception:  # noqa: BLE001 - freeing never fails
            pass
        self._closed = True
        if self._fence_r is not None:
            self._fence_r.close()
            self._fence_r = None

    def __enter__(self) -> Event:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<nnc.Event {self._origin} {'signalled' if self.signalled else 'pending'}>"


def _peek_status(fd: int) -> int:
    """The status byte waiting in a socket fence (0 if none or not a socket)."""
    try:
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            return 0
        with socket.socket(fileno=os.dup(fd)) as s:
            data = s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:
        return 0
    return data[0] if data else 0


def _close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
