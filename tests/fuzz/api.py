"""Fuzz kind (a): public API calls with bad arguments.

* :func:`api_trial`: one call with one bad argument;
* :func:`api_sequence_trial`: a random sequence of Model / Compilation /
  Execution / Memory / MemoryDesc / Event / Burst calls, in random order
  (so in every state: before finish, after close, ...), each argument
  valid or, often, a random wrong type or value.  Every call must return or
  raise an NNError; a computation that succeeds with known inputs must give
  the right sum.  Computations run native code over the bound buffers, so
  the sequence trial runs in a child process (a crash is a finding).
"""

from __future__ import annotations

import mmap
import os
import random
from collections.abc import Callable

import numpy as np

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

from .common import Finding, Skip, add_model, guarded, nnerror_or_ok

BAD_VALUES: list[object] = [
    None, -1, 2**31, 2**64, -(2**63), 1.5, float("nan"), "x", b"\x00", {}, [], [None], [-1],
    np.array(5), np.zeros((2, 2), np.float64), object(), True, 3, 0,
]  # fmt: skip


def _calls(bad: object) -> list[Callable[[], object]]:
    """API calls with ``bad`` in one argument."""
    m = nnc.Model()
    c = nnc.Compilation(add_model())
    c.finish()
    ex = nnc.Execution(c)
    return [
        lambda: m.add_operand(bad),
        lambda: m.add_operand(T.TENSOR_FLOAT32, bad),
        lambda: m.add_operand(T.TENSOR_QUANT8_ASYMM, [2], bad, 0),
        lambda: m.add_operand(T.TENSOR_QUANT8_ASYMM, [2], 0.5, bad),
        lambda: m.set_operand_value(bad, 1.0),
        lambda: m.add_operation(bad, [0], [0]),
        lambda: m.add_operation(Op.ADD, bad, [0]),
        lambda: m.identify_inputs_and_outputs(bad, bad),
        lambda: m.relax_computation_float32_to_float16(bad),
        lambda: m.set_operand_symm_per_channel_quant_params(0, bad, 0),
        lambda: nnc.Compilation(bad),
        lambda: nnc.Compilation.for_devices(add_model(), bad),
        lambda: nnc.compile(bad),
        lambda: nnc.Model.load(bad),
        lambda: nnc.load_model(bad),
        lambda: nnc.import_tflite(bad),
        lambda: c.get_preferred_memory_alignment_for_input(bad),
        lambda: nnc.Compilation(add_model()).set_caching(bad, bytes(32)),
        lambda: nnc.Compilation(add_model()).set_caching("/tmp", bad),
        lambda: nnc.Compilation(add_model()).set_priority(bad),
        lambda: nnc.Compilation(add_model()).set_preference(bad),
        lambda: nnc.Compilation(add_model()).set_timeout(bad),
        lambda: ex.set_input(bad, np.zeros(2, np.float32)),
        lambda: ex.set_input(0, bad),
        lambda: ex.set_input(0, np.zeros(2, np.float32), bad),
        lambda: ex.set_output(0, bad),
        lambda: ex.set_timeout(bad),
        lambda: ex.set_loop_timeout(bad),
        lambda: ex.set_num_threads(bad),
        lambda: ex.set_measure_timing(bad),
        lambda: ex.get_duration(bad),
        lambda: ex.get_output_operand_rank(bad),
        lambda: nnc.Memory.from_fd(4096, 3, bad, 0),
        lambda: nnc.Memory.from_fd(bad, 3, 0, 0),
        lambda: nnc.Memory.from_fd(4096, bad, 0, 0),
        lambda: nnc.Memory.from_fd(4096, 3, 0, bad),
        lambda: nnc.Memory.from_desc(bad),
        lambda: nnc.MemoryDesc().set_dimensions(bad),
        lambda: nnc.MemoryDesc().add_input_role(c, 0, bad),
        lambda: nnc.MemoryDesc().add_input_role(bad, 0, 1.0),
        lambda: nnc.Event.from_sync_fence_fd(bad),
        lambda: nnc.Burst(bad),
        lambda: nnc.Execution(bad),
        lambda: nnc.get_device(bad),
    ]


def _one_bad_call(seed: int) -> None:
    """One public API call with a bad argument: an NNError or a return."""
    rng = random.Random(seed)
    bad = rng.choice(BAD_VALUES)
    calls = _calls(bad)
    k = rng.randrange(len(calls))
    nnerror_or_ok(f"api call {k} with {bad!r}", calls[k])


api_trial = guarded(_one_bad_call)


class _Session:
    """The objects of one call sequence and what is known about them."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.x = np.arange(2, dtype=np.float32) + rng.randint(0, 9)
        self.y = np.full(2, rng.uniform(-4, 4), np.float32)
        self.model = add_model()
        self.building = nnc.Model()
        self.compilation: nnc.Compilation | None = None
        self.executions: list[nnc.Execution] = []
        self.outputs: dict[int, np.ndarray] = {}  # id(execution) -> its bound output array
        self.clean: set[int] = set()  # executions bound only with x, y (their result is checkable)
        self.memories: list[nnc.Memory] = []
        self.desc: nnc.MemoryDesc | None = None
        self.events: list[nnc.Event] = []
        self.burst: nnc.Burst | None = None
        self.fd = os.memfd_create("nnc-fuzz")
        os.ftruncate(self.fd, 2 * mmap.PAGESIZE)

    def value(self, good: object) -> object:
        """``good`` most of the time, else a random bad value."""
        return good if self.rng.random() < 0.85 else self.rng.choice(BAD_VALUES)

    def pick(self, items: list) -> object:
        """A receiver of the next call (Skip if there is none yet)."""
        if not items:
            raise Skip
        return self.rng.choice(items)

    def arg(self, items: list) -> object:
        """An object argument: one of ``items`` or, sometimes, a bad value."""
        return self.rng.choice(items) if items and self.rng.random() < 0.9 else self.rng.choice(BAD_VALUES)

    def close(self) -> None:
        for e in self.events:
            try:
                e.wait()
            except nnc.NNError:
                pass
        os.close(self.fd)


def _actions(s: _Session) -> list[Callable[[], object]]:
    rng, v = s.rng, s.value

    def new_compilation() -> object:
        c = nnc.Compilation(v(s.model))
        s.compilation = c
        return c

    def finish() -> object:
        return s.compilation.finish()  # type: ignore[union-attr]

    def new_execution() -> object:
        ex = nnc.Execution(v(s.compilation))
        s.executions.append(ex)
        s.clean.add(id(ex))
        return ex

    def set_input() -> object:
        ex = s.pick(s.executions)
        k = rng.randrange(2)
        arr = v((s.x, s.y)[k])
        k = v(k)
        r = ex.set_input(k, arr)  # type: ignore[union-attr]
        if arr is not s.x and arr is not s.y:
            s.clean.discard(id(ex))
        return r

    def set_output() -> object:
        ex = s.pick(s.executions)
        out = np.full(2, np.nan, np.float32)
        r = ex.set_output(v(0), v(out))  # type: ignore[union-attr]
        s.outputs[id(ex)] = out
        return r

    def set_input_from_memory() -> object:
        ex, mem = s.pick(s.executions), s.arg(s.memories)
        s.clean.discard(id(ex))
        return ex.set_input_from_memory(v(rng.randrange(2)), mem, v(rng.choice([0, 8, 4090])), v(8))  # type: ignore[union-attr]

    def set_output_from_memory() -> object:
        ex, mem = s.pick(s.executions), s.arg(s.memories)
        s.clean.discard(id(ex))
        return ex.set_output_from_memory(v(0), mem, v(rng.choice([0, 16, 8190])), v(8))  # type: ignore[union-attr]

    def compute() -> object:
        ex = s.pick(s.executions)
        ok, _ = nnerror_or_ok("compute", ex.compute)  # type: ignore[union-attr]
        out = s.outputs.get(id(ex))
        if ok and id(ex) in s.clean and out is not None and not np.array_equal(out, s.x + s.y):
            raise Finding("wrong", f"compute gave {out}, want {s.x + s.y}")
        return None

    def start_compute() -> object:
        ex = s.pick(s.executions)
        ev = ex.start_compute()  # type: ignore[union-attr]
        s.events.append(ev)
        return ev

    def with_dependencies() -> object:
        ex = s.pick(s.executions)
        deps = v([e for e in s.events[-2:]])
        ev = ex.start_compute_with_dependencies(deps, v(rng.choice([0, 10**9])))  # type: ignore[union-attr]
        s.events.append(ev)
        return ev

    def burst_compute() -> object:
        if s.burst is None or rng.random() < 0.2:
            s.burst = nnc.Burst(v(s.compilation))
        return s.pick(s.executions).burst_compute(v(s.burst))  # type: ignore[union-attr]

    def memory_fd() -> object:
        size = v(rng.choice([8, 4096, 2 * mmap.PAGESIZE, 3 * mmap.PAGESIZE]))
        mem = nnc.Memory.from_fd(size, v(mmap.PROT_READ | mmap.PROT_WRITE), v(s.fd), v(rng.choice([0, mmap.PAGESIZE])))
        s.memories.append(mem)
        return mem

    def memory_desc() -> object:
        d = s.desc = nnc.MemoryDesc()
        if rng.random() < 0.8:
            d.add_input_role(v(s.compilation), v(rng.randrange(2)), v(1.0))
        if rng.random() < 0.5:
            d.add_output_role(v(s.compilation), v(0), v(0.5))
        if rng.random() < 0.3:
            d.set_dimensions(v([2]))
        d.finish()
        return d

    def memory_from_desc() -> object:
        mem = nnc.Memory.from_desc(v(s.desc))
        s.memories.append(mem)
        return mem

    def memory_copy() -> object:
        return nnc.Memory.copy(s.arg(s.memories), s.arg(s.memories))

    def event_calls() -> object:
        ev = s.pick(s.events)
        return rng.choice([ev.wait, ev.get_sync_fence_fd, ev.close])()  # type: ignore[union-attr]

    def fence() -> object:
        return nnc.Event.from_sync_fence_fd(v(rng.choice([s.fd, 0, 10**6])))

    def model_calls() -> object:
        m = s.building
        return rng.choice([
            lambda: m.add_operand(v(T.TENSOR_FLOAT32), v([2])),
            lambda: m.add_operand(v(T.INT32)),
            lambda: m.set_operand_value(v(rng.randrange(4)), v(np.zeros(2, np.float32))),
            lambda: m.set_operand_value(v(rng.randrange(4)), v(0)),
            lambda: m.add_operation(v(Op.ADD), v([0, 1, 2]), v([3])),
            lambda: m.identify_inputs_and_outputs(v([0, 1]), v([3])),
            lambda: m.set_operand_value_from_memory(v(0), s.arg(s.memories), v(0), v(8)),
            m.finish,
            m.close,
        ])()  # fmt: skip

    def settings() -> object:
        ex = s.pick(s.executions)
        return rng.choice([
            lambda: ex.set_reusable(v(True)),
            lambda: ex.set_measure_timing(v(True)),
            lambda: ex.set_timeout(v(10**9)),
            lambda: ex.set_loop_timeout(v(10**9)),
            lambda: ex.set_num_threads(v(2)),
            lambda: ex.enable_input_and_output_padding(v(True)),
            lambda: ex.get_output_operand_dimensions(v(0)),
            lambda: ex.get_output_operand_rank(v(0)),
            lambda: ex.get_duration(v(nnc.DurationCode.ON_HARDWARE)),
            lambda: s.compilation.set_priority(v(nnc.Priority.HIGH)),  # type: ignore[union-attr]
            lambda: s.compilation.set_timeout(v(10**9)),  # type: ignore[union-attr]
            lambda: s.compilation.get_preferred_memory_padding_for_output(v(0)),  # type: ignore[union-attr]
        ])()  # fmt: skip

    def close_something() -> object:
        objs = [*s.executions, *s.memories, *s.events, s.compilation, s.burst, s.desc, s.model]
        return s.pick([o for o in objs if o is not None]).close()  # type: ignore[union-attr]

    return [
        new_compilation, finish, finish, new_execution, new_execution, set_input, set_input, set_input,
        set_output, set_output, set_input_from_memory, set_output_from_memory, compute, compute, start_compute,
        with_dependencies, burst_compute, memory_fd, memory_desc, memory_from_desc, memory_copy, event_calls,
        fence, model_calls, model_calls, settings, settings, close_something,
    ]  # fmt: skip


def _call_sequence(seed: int) -> None:
    """A random sequence of 5..60 API calls (see the module docstring)."""
    rng = random.Random(seed)
    s = _Session(rng)
    try:
        s.compilation = nnc.Compilation(s.model)
        actions = _actions(s)
        if rng.random() < 0.6:  # start from a usable compilation and execution half the time
            s.compilation.finish()
            ex = nnc.Execution(s.compilation)
            s.executions.append(ex)
            s.clean.add(id(ex))
            if rng.random() < 0.5:  # ready to compute
                ex.set_input(0, s.x)
                ex.set_input(1, s.y)
                s.outputs[id(ex)] = np.full(2, np.nan, np.float32)
                ex.set_output(0, s.outputs[id(ex)])
        for step in range(rng.randint(5, 80)):
            action = rng.choice(actions)
            try:
                nnerror_or_ok(f"step {step} ({action.__name__})", action)
            except Skip:
                pass
    finally:
        s.close()


api_sequence_trial = guarded(_call_sequence)
