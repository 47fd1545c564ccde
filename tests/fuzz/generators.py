"""Fuzz trials (issue 17): each takes a seed and returns None when nnc behaved
(an NNError or a correct result) or a description of what went wrong.

* :func:`api_trial`: a public API call with one bad argument;
* :func:`file_trial`: a mutated ``.nnc`` model file or ``.tflite`` bytes;
* :func:`graph_trial`: a random chain of float32 element-wise operations,
  compiled and run against numpy.

A trial that kills the process is a crash: :func:`run_isolated` runs one in
a forked child and reports the signal.
"""

from __future__ import annotations

import ast
import io
import json
import os
import random
import signal
from collections.abc import Callable

import numpy as np

from tflite_builder import FLOAT32, TFLiteBuilder  # the tests' flatbuffer writer (tests/ is on sys.path)

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import modelfile

#: (kind, message) or None
Outcome = tuple[str, str] | None

BAD_VALUES: list[object] = [None, -1, 2**31, 2**64, 1.5, "x", b"\x00", {}, [], [None], np.array(5), object(), True]


def add_model() -> nnc.Model:
    """A two-input float32 ADD: the valid model the bad-argument trials start from."""
    m = nnc.Model()
    a, b = (m.add_operand(T.TENSOR_FLOAT32, [2]) for _ in range(2))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.ADD, [a, b, act], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    m.finish()
    return m


def _calls(bad: object) -> list[Callable[[], object]]:
    """API calls with ``bad`` in one argument."""
    m = nnc.Model()
    c = nnc.Compilation(add_model())
    c.finish()
    ex = nnc.Execution(c)
    return [
        lambda: m.add_operand(bad),
        lambda: m.add_operand(T.TENSOR_FLOAT32, bad),
        lambda: m.set_operand_value(bad, 1.0),
        lambda: m.add_operation(bad, [0], [0]),
        lambda: m.add_operation(Op.ADD, bad, [0]),
        lambda: m.identify_inputs_and_outputs(bad, bad),
        lambda: nnc.Compilation(bad),
        lambda: nnc.compile(bad),
        lambda: nnc.Model.load(bad),
        lambda: nnc.load_model(bad),
        lambda: nnc.import_tflite(bad),
        lambda: ex.set_input(bad, np.zeros(2, np.float32)),
        lambda: ex.set_input(0, bad),
        lambda: ex.set_output(0, bad),
        lambda: ex.set_timeout(bad),
        lambda: ex.set_loop_timeout(bad),
        lambda: nnc.Memory.from_fd(4096, 3, bad, 0),
        lambda: nnc.Memory.from_fd(bad, 3, 0, 0),
        lambda: nnc.Event.from_sync_fence_fd(bad),
        lambda: nnc.Burst(bad),
        lambda: nnc.Execution(bad),
    ]


def api_trial(seed: int) -> Outcome:
    rng = random.Random(seed)
    bad = rng.choice(BAD_VALUES)
    calls = _calls(bad)
    k = rng.randrange(len(calls))
    try:
        calls[k]()
    except nnc.NNError:
        pass
    except Exception as e:  # noqa: BLE001 - that is what the fuzzer looks for
        return "unexpected", f"api call {k} with {bad!r}: {type(e).__name__}: {e}"
    return None


def _mutate(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    kind = rng.randrange(3)
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
    elif kind == 1:
        buf = buf[: rng.randrange(len(buf))]
    else:
        at = rng.randrange(len(buf))
        buf[at : at + 16] = bytes(rng.randrange(256) for _ in range(16))
    return bytes(buf)


_SEED_FILES: dict[str, bytes] = {}


def _seed_files() -> dict[str, bytes]:
    if not _SEED_FILES:
        b = TFLiteBuilder()
        x = b.tensor("x", [1, 8], FLOAT32)
        c = b.tensor("c", [1, 8], FLOAT32, np.arange(8, dtype=np.float32))
        y = b.tensor("y", [1, 8], FLOAT32)
        b.op("ADD", [x, c], [y], ("AddOptions", {"FusedActivationFunction": 0}))
        _SEED_FILES["tflite"] = b.build([x], [y])
        _SEED_FILES["nnc"] = json.dumps(modelfile.to_dict(add_model())).encode()
    return _SEED_FILES


def file_trial(seed: int) -> Outcome:
    rng = random.Random(seed)
    kind, data = rng.choice(sorted(_seed_files().items()))
    data = _mutate(data, rng)
    try:
        if kind == "tflite":
            nnc.import_tflite(data)
        else:
            nnc.Model.load(io.BytesIO(data))
    except nnc.NNError:
        pass
    except Exception as e:  # noqa: BLE001
        return "unexpected", f"mutated {kind} file: {type(e).__name__}: {e}"
    return None


_UNARY: dict[Op, Callable[[np.ndarray], np.ndarray]] = {
    Op.RELU: lambda v: np.maximum(v, 0),
    Op.TANH: np.tanh,
    Op.LOGISTIC: lambda v: 1 / (1 + np.exp(-v)),
    Op.ABS: np.abs,
}
_BINARY: dict[Op, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    Op.ADD: np.add,
    Op.SUB: np.subtract,
    Op.MUL: np.multiply,
}


def graph_trial(seed: int) -> Outcome:
    """A random chain over a random shape, checked against numpy."""
    rng = random.Random(seed)
    shape = [rng.randint(1, 5) for _ in range(rng.randint(1, 4))]
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, shape)
    y = m.add_operand(T.TENSOR_FLOAT32, shape)
    cur, ref_fns = x, []
    for _ in range(rng.randint(1, 5)):
        out = m.add_operand(T.TENSOR_FLOAT32, shape)
        if rng.random() < 0.5:
            op = rng.choice(sorted(_UNARY))
            m.add_operation(op, [cur], [out])
            ref_fns.append((_UNARY[op], None))
        else:
            op = rng.choice(sorted(_BINARY))
            act = m.add_operand(T.INT32)
            m.set_operand_value(act, 0)
            m.add_operation(op, [cur, y, act], [out])
            ref_fns.append((_BINARY[op], True))
        cur = out
    m.identify_inputs_and_outputs([x, y], [cur])
    xs = np.random.default_rng(seed).normal(size=shape).astype(np.float32)
    ys = np.random.default_rng(seed + 1).normal(size=shape).astype(np.float32)
    ref = xs
    for fn, binary in ref_fns:
        ref = fn(ref, ys) if binary else fn(ref)
    try:
        (got,) = nnc.compile(m).run(xs, ys)
    except nnc.NNError as e:
        return "unexpected", f"graph {seed}: a valid graph failed: {e}"
    except Exception as e:  # noqa: BLE001
        return "unexpected", f"graph {seed}: {type(e).__name__}: {e}"
    if not np.allclose(got, ref.astype(np.float32), rtol=1e-4, atol=1e-5):
        return "wrong", f"graph {seed}: max error {np.max(np.abs(got - ref))}"
    return None


TRIALS: dict[str, Callable[[int], Outcome]] = {"api": api_trial, "file": file_trial, "graph": graph_trial}


def run_isolated(trial: Callable[[int], Outcome], seed: int) -> Outcome:
    """Run ``trial(seed)`` in a forked child: a signal is a crash."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        code = 1
        try:
            outcome = trial(seed)
            os.write(w, repr(outcome).encode()[:4000])
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        text = f.read().decode()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "crash", f"seed {seed}: killed by {signal.Signals(os.WTERMSIG(status)).name}"
    if os.WEXITSTATUS(status) != 0:
        return "unexpected", f"seed {seed}: the trial raised (see stderr)"
    return ast.literal_eval(text)
