"""Fuzz kind (d): a corrupted compilation cache.

A random graph of :mod:`fuzz.graphs` is compiled through the compilation
cache (``nnc.compile(model, cache_dir)``), then the entry's files are
damaged -- truncated, bits flipped, overwritten with random bytes, replaced
by the other file of the entry or by another model's entry, deleted, made
a FIFO (opening it would block) or a directory -- and the model is compiled
again through the cache in a fresh process state (the in-process code cache
cleared).  With ``concurrent`` several processes compile the same model into
one cache directory at once while the files are damaged under them.  Every
compilation must succeed and compute the numpy reference.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

from nnc import driver

from .common import Finding, guarded
from .graphs import build, check


def _damage(rng: random.Random, directory: Path, foreign: list[bytes]) -> str:
    """Damage one file of the cache directory; says what it did.

    Concurrent writers (:func:`_concurrent_writers`) may ``os.replace`` a
    fresh file into place at any moment, so every damage that can be is one
    atomic rename too: the damaged bytes or the FIFO are made under a
    temporary name and renamed over the entry.  A directory cannot be
    renamed over a file, so that damage removes the file and creates the
    directory, and when a writer's file lands between the two it tries
    again (a few times; then the writer has won and the damage is "lost")."""
    files = sorted(p for p in directory.iterdir() if p.name.startswith("nnc-") and p.is_file())
    if not files:
        return "nothing to damage"
    path = rng.choice(files)
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return f"{path.name}: gone before it was read"
    how = rng.randrange(8)
    if how == 0:
        _replace(path, data[: rng.randrange(len(data) + 1)])
    elif how == 1:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            if buf:
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        _replace(path, bytes(buf))
    elif how == 2:
        at = rng.randrange(max(1, len(data)))
        _replace(path, data[:at] + os.urandom(rng.randint(1, 64)) + data[at + 64 :])
    elif how == 3:  # the other file of the entry (model <-> data)
        other = [p for p in files if p != path]
        if other:
            try:
                _replace(path, rng.choice(other).read_bytes())
            except (FileNotFoundError, IsADirectoryError):
                return f"{path.name}: its twin was gone"
    elif how == 4 and foreign:
        _replace(path, rng.choice(foreign))
    elif how == 5:
        path.unlink(missing_ok=True)
    elif how == 6:
        fifo = path.with_name(f".{path.name}.fifo")
        os.mkfifo(fifo)
        os.replace(fifo, path)
    elif not _directory_in_place(path):
        return f"{path.name}: damage {how} lost to a writer"
    return f"{path.name}: damage {how}"


def _replace(path: Path, blob: bytes) -> None:
    """``path`` now holds ``blob``, in one rename (a concurrent reader sees
    the old file or the new one, as it would see a writer's)."""
    tmp = path.with_name(f".{path.name}.damage")
    tmp.write_bytes(blob)
    os.replace(tmp, path)


def _directory_in_place(path: Path, tries: int = 5) -> bool:
    """Put a directory where the file ``path`` is; False if a concurrent
    writer put its file back every time."""
    for _ in range(tries):
        path.unlink(missing_ok=True)
        try:
            path.mkdir()
            return True
        except FileExistsError:
            if path.is_dir():
                return True
    return False


def _clear_fifos(directory: Path) -> None:
    for p in directory.iterdir():
        if not p.is_file() and not p.is_dir():
            p.unlink()


def _corrupted_cache(seed: int) -> None:
    rng = random.Random(seed)
    g = build(seed, quant=rng.random() < 0.5)
    with tempfile.TemporaryDirectory(prefix="nnc-fuzz-cache-") as tmp:
        directory = Path(tmp)
        check(g, seed, cache_dir=tmp)  # writes the entry
        foreign = [p.read_bytes() for p in directory.iterdir()]
        rounds = rng.randint(1, 3)
        for r in range(rounds):
            what = ", ".join(_damage(rng, directory, foreign) for _ in range(rng.randint(1, 3)))
            driver._CACHE.clear()  # no in-process hit: the entry must be read (or rejected)
            try:
                check(g, seed, cache_dir=tmp)
            except Finding as f:
                raise Finding(f.kind, f"after {what} (round {r}): {f.message}") from None
            _clear_fifos(directory)  # a FIFO stays an obstacle only for one round


def _concurrent_writers(seed: int, processes: int = 3) -> None:
    """``processes`` children compile one model into one cache directory at
    once while this process damages the files; every child must succeed."""
    rng = random.Random(seed)
    g = build(seed, quant=rng.random() < 0.5)
    with tempfile.TemporaryDirectory(prefix="nnc-fuzz-cache-") as tmp:
        directory = Path(tmp)
        driver._CACHE.clear()
        pids = []
        for k in range(processes):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                os.close(r)
                status = 0
                try:
                    for _ in range(2):
                        driver._CACHE.clear()
                        check(g, seed, cache_dir=tmp)
                except Finding as f:
                    os.write(w, f"{f.kind}\0{f.message}".encode()[:4000])
                    status = 1
                except BaseException as e:  # noqa: BLE001
                    os.write(w, f"unexpected\0child {k}: {type(e).__name__}: {e}".encode()[:4000])
                    status = 1
                finally:
                    os._exit(status)
            os.close(w)
            pids.append((pid, r))
        for _ in range(rng.randint(0, 6)):
            time.sleep(rng.uniform(0, 0.4))
            _damage(rng, directory, [])
        findings = []
        for pid, r in pids:
            with os.fdopen(r, "rb") as f:
                text = f.read().decode(errors="replace")
            _, status = os.waitpid(pid, 0)
            if os.WIFSIGNALED(status):
                findings.append(("crash", f"a concurrent writer was killed by signal {os.WTERMSIG(status)}"))
            elif text:
                findings.append(tuple(text.split("\0", 1)))
        _clear_fifos(directory)
        if findings:
            kind, message = findings[0]
            raise Finding(kind, f"concurrent writers: {message}")
        driver._CACHE.clear()
        check(g, seed, cache_dir=tmp)  # and what they left behind is usable


def _cache_trial(seed: int) -> None:
    """Corruption between compilations, or (one trial in four) concurrent writers."""
    if random.Random(seed ^ 0x5EED).random() < 0.25:
        _concurrent_writers(seed)
    else:
        _corrupted_cache(seed)


cache_trial = guarded(_cache_trial)
