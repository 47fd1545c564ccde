"""The fuzz trials and how to run one without risking the caller.

Each trial takes a seed and returns None when nnc behaved (an NNError or a
correct result) or ``(kind, message)`` (:data:`fuzz.common.Outcome`; the kind
"rejected" is no finding, see :func:`fuzz.common.is_finding`).  The kinds:

* ``api``, ``api-sequence`` (:mod:`fuzz.api`): bad arguments, one call or a
  random sequence of calls over every object of the runtime API;
* ``graph`` (:mod:`fuzz.graphs`): random float32 and quant8 graphs against
  a numpy reference;
* ``file`` (:mod:`fuzz.files`): mutated ``.nnc`` files and ``.tflite`` bytes;
* ``cache`` (:mod:`fuzz.cache`): a damaged compilation cache, concurrent writers;
* ``runtime-input`` (:mod:`fuzz.runtime_inputs`): out-of-range indices and shapes;
* ``edges`` (:mod:`fuzz.edges`): conformance models moved to edge sizes,
  compiled for the host and generic x86-64 at 1 and 2 threads, compared.

A trial that kills or hangs the process is a crash: :func:`run_isolated`
runs trials in a forked child and reports the seed that was running.
"""

from __future__ import annotations

import ast
import os
import select
import signal
import time
import traceback
from collections.abc import Callable, Sequence

from .api import api_sequence_trial, api_trial
from .cache import cache_trial
from .common import Outcome, add_model
from .edges import edge_trial
from .files import file_trial
from .graphs import graph_trial
from .runtime_inputs import runtime_input_trial

__all__ = ["TRIALS", "Outcome", "add_model", "run_isolated"]

TRIALS: dict[str, Callable[[int], Outcome]] = {
    "api": api_trial,
    "api-sequence": api_sequence_trial,
    "graph": graph_trial,
    "file": file_trial,
    "cache": cache_trial,
    "runtime-input": runtime_input_trial,
    "edges": edge_trial,
}

#: seconds one trial may take before it counts as a hang (compilations share 2 busy cores)
HANG_S = 300.0


def _child(trial: Callable[[int], Outcome], seeds: Sequence[int], w: int) -> None:  # pragma: no cover
    """Run the trials, writing ``seed\\n`` before each and ``outcome\\0`` after."""
    code = 1
    try:
        for seed in seeds:
            os.write(w, f"{seed}\n".encode())
            try:
                outcome = trial(seed)
            except BaseException as e:  # noqa: BLE001 - a trial never raises; report it if it does
                outcome = ("unexpected", f"the trial raised {type(e).__name__}: {e}: {traceback.format_exc()[-800:]}")
            os.write(w, repr(outcome).encode()[:8000] + b"\0")
        code = 0
    finally:
        os._exit(code)


def run_isolated(trial: Callable[[int], Outcome], seeds: int | Sequence[int],
                 hang_s: float = HANG_S) -> list[tuple[int, Outcome]]:  # fmt: skip
    """Run ``trial`` for each seed in one forked child; (seed, outcome) per
    seed that ran.  A child killed by a signal is a "crash" of the seed that
    was running, one silent for ``hang_s`` seconds a "hang" (it is killed);
    the seeds after it do not run."""
    seeds = [seeds] if isinstance(seeds, int) else list(seeds)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        _child(trial, seeds, w)
    os.close(w)
    results: list[tuple[int, Outcome]] = []
    buf, current, hung = b"", None, False
    deadline = time.monotonic() + hang_s
    with os.fdopen(r, "rb", buffering=0) as f:
        while True:
            ready, _, _ = select.select([f], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                hung = True
                os.kill(pid, signal.SIGKILL)
                break
            chunk = f.read(65536)
            if not chunk:
                break
            buf += chunk
            while True:
                if current is None and b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    current = int(line)
                    deadline = time.monotonic() + hang_s
                elif current is not None and b"\0" in buf:
                    text, buf = buf.split(b"\0", 1)
                    results.append((current, ast.literal_eval(text.decode(errors="replace"))))
                    current = None
                else:
                    break
    _, status = os.waitpid(pid, 0)
    if current is not None:
        if hung:
            results.append((current, ("hang", f"seed {current}: no progress in {hang_s:g} s (killed)")))
        elif os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            results.append((current, ("crash", f"seed {current}: killed by {name}")))
        else:
            results.append((current, ("crash", f"seed {current}: the child exited with {os.WEXITSTATUS(status)}")))
    return results
