"""LLVM in a worker process: a crash in LLVM never takes the caller down.

llvmlite's LLVM is built with assertions on, so an LLVM bug (such as an
assertion in the loop vectorizer's cost model, which a ``llvm.maxnum``
reduction loop triggers on AVX CPUs) calls ``abort()`` and kills the process
that runs it -- the application embedding nnc.  The LLVM stage of a
compilation (optimising the LLVM IR and emitting the object file,
:func:`nnc.runtime.jit.optimize` and :func:`~nnc.runtime.jit.emit_object`)
therefore runs in a worker process owned by nnc; the object comes back as
bytes and the caller loads it itself (MCJIT, after the thread pool's
symbols are installed).  A worker that dies, or does not answer within the
time it is given, is killed and forgotten: the caller gets
:class:`WorkerCrash` and the next compilation starts a fresh worker.

Workers are plain Python processes started with :mod:`subprocess` (never a
bare ``fork()``: the caller has native threads, e.g. the thread pool's) that
run llvmlite and the source of ``runtime/jit.py`` and of this module, which
the caller sends them as it imported it (:data:`_SOURCES`), not the ``nnc``
package (importing it pulls xDSL and numpy in: about a second per start).
This module imports nothing from nnc for the same reason: the worker runs it
too.  Workers are reused: up to :data:`MAX_WORKERS` live at once (the
CPU count, as many as the compiler gate admits), so independent compilations
run their LLVM stages in parallel, and idle ones wait for the next request.
A worker is retired after :data:`MAX_JOBS` requests (LLVM's global context
keeps interned types and constants).  A forked child of the caller forgets
the parent's workers (it must not share their pipes) and starts its own.

Protocol: length-prefixed pickles of plain tuples over the worker's stdin and
stdout: first the sources ``(jit_source, worker_source)``, then each request
``(ir_text, exported, triple, cpu, features)`` (``exported``:
the functions that keep external linkage), reply
``("ok", object_bytes)`` or ``("error", exception_type_name, message)``.  The
worker's fd 1 points at its stderr, so a stray print cannot corrupt a reply;
its stderr is a file the parent reads after a crash (LLVM's assertion text).
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nnc.runtime.jit import Target

#: the worker's program: read the source of jit.py and of this module from
#: the parent (the first message on stdin), run them, serve requests.  Read
#: with os.read: a buffered reader could take bytes of the first request.
_BOOT = """
import os, pickle, struct, sys, types
def read(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data
def load(name, source):
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(source, name, "exec"), mod.__dict__)
    return mod
(size,) = struct.unpack("<Q", read(8))
jit_source, worker_source = pickle.loads(read(size))
jit = load("_nnc_worker_jit", jit_source)
load("_nnc_worker", worker_source).serve(jit)  # the name is _IN_WORKER
"""


def _read_sources() -> tuple[str, str]:
    """The text of runtime/jit.py and of this module, read when this module
    is imported: what the caller runs, and what its workers will run.

    Why not let a worker load the files itself: a process outlives an
    upgrade of nnc's files on disk, and workers started after it would run
    the new code against the old caller (a changed request format was seen
    to break every compilation of a long fuzz run that way)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "jit.py"), encoding="utf-8") as jit, open(__file__, encoding="utf-8") as this:
        return jit.read(), this.read()


#: The name this module has in a worker, which runs it from the caller's text.
_IN_WORKER = "_nnc_worker"
#: (jit.py, worker.py) as this process imported them (:func:`_read_sources`);
#: a worker, running from text without a file, starts no workers and needs none
_SOURCES = ("", "") if __name__ == _IN_WORKER else _read_sources()

#: live workers at most (each runs one LLVM stage at a time)
MAX_WORKERS = os.cpu_count() or 1
#: requests a worker serves before it is replaced
MAX_JOBS = 500
#: bytes of the worker's stderr quoted after a crash
_TAIL = 2000
_HEADER = struct.Struct("<Q")


class WorkerCrash(Exception):
    """The worker died (a signal or an exit) or did not answer in time."""

    def __init__(self, reason: str, stderr_tail: str = ""):
        self.reason = reason
        self.stderr_tail = stderr_tail
        last = stderr_tail.strip().splitlines()[-1:] if stderr_tail.strip() else []
        super().__init__(reason + (f": {last[0]}" if last else ""))


class WorkerError(RuntimeError):
    """A Python exception the worker raised (LLVM rejected the IR, ...)."""


# -- the worker's side -------------------------------------------------------------------------------


def _read_message(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    return pickle.loads(stream.read(size))


def _write_message(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def serve(jit: Any) -> None:
    """The worker's loop (``jit`` is runtime/jit.py as the caller sent it): one
    request at a time until the parent closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray output goes to stderr, never into a reply
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    while True:
        request = _read_message(requests)
        if request is None:
            return
        ir_text, exported, triple, cpu, features = request
        try:
            target = jit.Target(triple, cpu, features)
            reply: tuple = ("ok", jit.emit_object(jit.optimize(ir_text, target, exported=exported), target))
        except Exception as e:  # noqa: BLE001 - reported to the parent, which raises it
            reply = ("error", type(e).__name__, str(e))
        _write_message(replies, reply)


# -- the caller's side ---------------------------------------------------------------------------------


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        self.stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                close_fds=True,
                start_new_session=True,  # the terminal's Ctrl-C is not the worker's
            )
        except BaseException:
            self.stderr.close()
            raise
        assert self.proc.stdin is not None
        try:
            _write_message(self.proc.stdin, _SOURCES)
        except OSError:
            pass  # the worker died at once: the first request reports it
        self.jobs = 0

    def call(self, request: tuple, timeout_s: float | None) -> tuple:
        """Send ``request`` and wait for the reply; WorkerCrash if the worker
        dies or ``timeout_s`` passes (the worker is then killed)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.jobs += 1
        try:
            _write_message(self.proc.stdin, request)
        except (BrokenPipeError, OSError):
            raise self._crash() from None
        reply = self._receive(None if timeout_s is None else time.monotonic() + timeout_s, timeout_s)
        if self.stderr.tell() > 1 << 16:  # keep the file small (the worker is idle now)
            self.stderr.truncate(0)
            self.stderr.seek(0)
        return reply

    def _receive(self, until: float | None, timeout_s: float | None) -> tuple:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        data = bytearray()
        need = _HEADER.size
        while len(data) < need:
            wait = None if until is None else max(0.0, until - time.monotonic())
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                self.kill()
                raise WorkerCrash(f"no answer within {timeout_s:g} s (killed)", self._tail())
            chunk = os.read(fd, max(need - len(data), 1 << 16))
            if not chunk:
                raise self._crash()
            data += chunk
            if need == _HEADER.size and len(data) >= _HEADER.size:
                need += _HEADER.unpack_from(data)[0]
        return pickle.loads(bytes(data[_HEADER.size : need]))

    def _crash(self) -> WorkerCrash:
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            status = self.proc.returncode
        if status is not None and status < 0:
            try:
                reason = f"killed by {signal.Signals(-status).name}"
            except ValueError:
                reason = f"killed by signal {-status}"
        else:
            reason = f"exited with status {status}"
        return WorkerCrash(reason, self._tail())

    def _tail(self) -> str:
        fd = self.stderr.fileno()
        size = os.fstat(fd).st_size
        return os.pread(fd, min(size, _TAIL), max(0, size - _TAIL)).decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        """Close the request pipe (the worker exits at its end) and reap it."""
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
        self.stderr.close()

    def forget(self) -> None:
        """In a forked child: drop this process's copies of the parent's
        worker pipes without touching the worker."""
        for f in (self.proc.stdin, self.proc.stdout, self.stderr):
            try:
                if f is not None:
                    os.close(f.fileno())
            except (OSError, ValueError):
                pass
        self.proc.returncode = 0  # not ours to reap


class WorkerPool:
    """Reused worker processes, at most ``size`` at once."""

    def __init__(self, size: int = MAX_WORKERS):
        self.size = size
        self._hooks = False
        self._reset()

    def _start_worker(self) -> _Worker:
        """A new worker; the first one registers the pool's exit and
        at-fork hooks (a process that never compiles registers none)."""
        with self._cond:
            if not self._hooks:
                atexit.register(self.shutdown)
                os.register_at_fork(after_in_child=self._after_fork)
                self._hooks = True
        return _Worker()

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._live = 0

    @contextmanager
    def _worker(self) -> Iterator[_Worker]:
        with self._cond:
            while not self._idle and self._live >= self.size:
                self._cond.wait()
            worker = self._idle.pop() if self._idle else None
            if worker is None:
                self._live += 1  # a slot for the worker started below
        healthy = False
        try:
            if worker is None:
                worker = self._start_worker()
            yield worker
            healthy = True
        finally:
            keep = healthy and worker is not None and worker.jobs < MAX_JOBS
            with self._cond:
                if keep and worker is not None:
                    self._idle.append(worker)
                else:
                    self._live -= 1
                self._cond.notify()
            if not keep and worker is not None:
                worker.close() if healthy else _discard(worker)

    def compile_object(
        self,
        ir_text: str,
        target: Target,
        timeout_s: float | None = None,
        exported: Sequence[str] = ("nnc_run",),
    ) -> bytes:
        """``jit.emit_object(jit.optimize(ir_text, target, exported=exported), target)``
        in a worker.  WorkerCrash if it died or ran past ``timeout_s``
        (seconds); WorkerError for an exception LLVM raised."""
        request = (ir_text, tuple(exported), target.triple, target.cpu, target.features)
        with self._worker() as worker:
            reply = worker.call(request, timeout_s)
        if reply[0] == "ok":
            return reply[1]
        raise WorkerError(f"{reply[1]}: {reply[2]}")

    def compile_objects(
        self, parts: Sequence[tuple[str, Sequence[str]]], target: Target, timeout_s: float | None = None
    ) -> list[bytes]:
        """:meth:`compile_object` of each ``(ir_text, exported)`` at once,
        one worker each (as many as the pool has; the rest wait), the
        first in the calling thread.  The first part that failed raises
        (a crash before an LLVM error: it is the worse news)."""
        results: list[bytes] = [b""] * len(parts)
        errors: list[BaseException | None] = [None] * len(parts)

        def run(k: int) -> None:
            try:
                results[k] = self.compile_object(parts[k][0], target, timeout_s, parts[k][1])
            except BaseException as e:  # noqa: BLE001 - raised in the calling thread below
                errors[k] = e

        threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(1, len(parts))]
        for t in threads:
            t.start()
        run(0)
        for t in threads:
            t.join()
        failed = [e for e in errors if e is not None]
        if failed:
            raise next((e for e in failed if isinstance(e, WorkerCrash)), failed[0])
        return results

    def prestart(self, count: int = 1) -> None:
        """Start workers until ``count`` (at most the pool's size) are idle
        or all slots are taken, without waiting for them: a worker's Python
        and LLVM start up (a few hundred ms) while the caller lowers the
        model, instead of after it."""
        with self._cond:
            want = min(count, self.size) - len(self._idle)
            new = min(want, self.size - self._live)
            if new <= 0:
                return
            self._live += new
        started: list[_Worker] = []
        try:
            for _ in range(new):
                started.append(self._start_worker())
        finally:
            with self._cond:
                self._live -= new - len(started)
                self._idle.extend(started)
                self._cond.notify_all()

    def workers(self) -> list[int]:
        """The pids of the idle workers (for tests)."""
        with self._cond:
            return [w.proc.pid for w in self._idle]

    def shutdown(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
            self._live -= len(idle)
        for w in idle:
            w.close()

    def _after_fork(self) -> None:
        for w in self._idle:
            w.forget()
        self._reset()


def _discard(worker: _Worker) -> None:
    """A worker that crashed, hung or was interrupted mid-request: its pipe
    may hold half a message, so it is never reused."""
    worker.kill()
    worker.close()


#: The process's workers (none started before the first compilation).
POOL = WorkerPool()
