"""No input kills or hangs the process (issue 17).

* The LLVM stage runs in nnc's worker process (nnc.runtime.worker): a worker
  made to abort, hang or raise (``tests/worker_faults.py``) gives an
  OP_FAILED "internal compiler error" naming the stage and the model, or a
  missed deadline, and the next compilation works.
* SOFTMAX over [1, 30] / [1, 31] (the reproducer that aborted LLVM's loop
  vectorizer) compiles and computes what numpy does.
* Each non-NNError the issue lists is now an NNError; Model.load of a bare int
  (a pipe's descriptor) returns at once and never closes it.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import nnc
from fuzz.files import tflite_add
from fuzz.generators import add_model
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.runtime import worker
from worker_faults import inject_fault


def softmax_model(n: int, rows: int = 1) -> nnc.Model:
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [rows, n])
    beta = m.add_operand(T.FLOAT32)
    m.set_operand_value(beta, 1.0)
    y = m.add_operand(T.TENSOR_FLOAT32, [rows, n])
    m.add_operation(Op.SOFTMAX, [x, beta], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m


def softmax_ref(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# -- the compiler's worker ----------------------------------------------------------------------


@pytest.mark.parametrize("n", [30, 31])
def test_softmax_reproducer_compiles_and_runs(n: int) -> None:
    x = np.random.default_rng(n).normal(size=(1, n)).astype(np.float32)
    (y,) = nnc.compile(softmax_model(n)).run(x)
    np.testing.assert_allclose(y, softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(driver.IN_PROCESS, reason="NNC_COMPILER_IN_PROCESS runs LLVM in the test process")
def test_worker_abort_is_internal_compiler_error_and_next_compilation_works() -> None:
    model = softmax_model(7, rows=3)  # a shape no other test compiles: never an in-process cache hit
    with inject_fault("abort"), pytest.raises(nnc.OpFailedError) as info:
        nnc.Compilation(model).finish()
    msg = str(info.value)
    assert driver.INTERNAL_ERROR in msg and "LLVM stage" in msg and "SIGABRT" in msg
    assert driver.fingerprint(model) in msg and info.value.function == "ANeuralNetworksCompilation_finish"
    x = np.random.default_rng(0).normal(size=(3, 7)).astype(np.float32)
    (y,) = nnc.compile(model).run(x)
    np.testing.assert_allclose(y, softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(driver.IN_PROCESS, reason="NNC_COMPILER_IN_PROCESS runs LLVM in the test process")
def test_worker_is_reused() -> None:
    nnc.compile(softmax_model(5, rows=2))
    before = set(worker.POOL.workers())
    nnc.compile(softmax_model(6, rows=2))
    assert before and set(worker.POOL.workers()) & before


@pytest.mark.skipif(driver.IN_PROCESS, reason="NNC_COMPILER_IN_PROCESS runs LLVM in the test process")
def test_worker_exception_is_internal_compiler_error() -> None:
    with inject_fault("raise"), pytest.raises(nnc.OpFailedError, match="internal compiler error.*fault injected"):
        nnc.Compilation(softmax_model(9, rows=3)).finish()


@pytest.mark.skipif(driver.IN_PROCESS, reason="NNC_COMPILER_IN_PROCESS runs LLVM in the test process")
def test_workers_run_the_callers_sources_not_the_files_on_disk(monkeypatch) -> None:
    """A worker runs the jit.py and worker.py text the caller imported
    (worker._SOURCES), so replacing nnc's files under a running process (an
    upgrade) cannot give its new workers other code than its own: here the
    caller's copy of jit.py raises, the file on disk does not."""
    jit_source, worker_source = worker._SOURCES
    marked = jit_source + "\ndef optimize(*args, **kwargs):\n    raise RuntimeError('the caller s copy of jit.py')\n"
    worker.POOL.shutdown()
    monkeypatch.setattr(worker, "_SOURCES", (marked, worker_source))
    with pytest.raises(nnc.OpFailedError, match="the caller s copy of jit.py"):
        nnc.Compilation(softmax_model(14, rows=3)).finish()
    worker.POOL.shutdown()
    monkeypatch.undo()
    nnc.Compilation(softmax_model(14, rows=3)).finish()


@pytest.mark.skipif(driver.IN_PROCESS, reason="NNC_COMPILER_IN_PROCESS runs LLVM in the test process")
def test_hung_worker_is_killed_at_the_hang_timeout(monkeypatch) -> None:
    monkeypatch.setattr(driver, "HANG_TIMEOUT_S", 0.5)
    with inject_fault("hang"), pytest.raises(nnc.OpFailedError, match="internal compiler error.*no answer"):
        nnc.Compilation(softmax_model(10, rows=3)).finish()
    monkeypatch.undo()
    nnc.Compilation(softmax_model(10, rows=3)).finish()


@pytest.mark.skipif(driver.IN_PROCESS, reason="NNC_COMPILER_IN_PROCESS runs LLVM in the test process")
def test_hung_worker_past_the_deadline_is_a_missed_deadline() -> None:
    c = nnc.Compilation.for_devices(softmax_model(11, rows=3), [nnc.get_devices()[0]])
    c.set_timeout(1_000_000_000)
    with inject_fault("hang"), pytest.raises(nnc.MissedDeadlinePersistentError):
        c.finish()


# -- every case of the issue is an NNError ------------------------------------------------------------


@pytest.fixture(scope="module")
def execution() -> nnc.Execution:
    c = nnc.Compilation(add_model())
    c.finish()
    return nnc.Execution(c)


@pytest.mark.parametrize("value", [b"abc", "abc", {}, object()], ids=["bytes", "str", "dict", "object"])
def test_set_input_of_a_non_numeric_value_is_bad_data(execution, value) -> None:
    with pytest.raises(nnc.BadDataError, match="ANeuralNetworksExecution_setInput"):
        execution.set_input(0, value)


def test_memory_fd_past_a_c_int_is_bad_data() -> None:
    with pytest.raises(nnc.BadDataError, match="createFromFd"):
        nnc.Memory.from_fd(4096, 3, 2**31, 0)


def test_sync_fence_fd_past_a_c_int_is_bad_data() -> None:
    with pytest.raises(nnc.BadDataError, match="createFromSyncFenceFd"):
        nnc.Event.from_sync_fence_fd(2**31)


@pytest.mark.parametrize(
    "call",
    [nnc.Model.load, nnc.load_model, nnc.import_tflite, nnc.compile],
    ids=["Model.load", "load_model", "import_tflite", "compile"],
)
def test_none_is_unexpected_null(call) -> None:
    with pytest.raises(nnc.UnexpectedNullError):
        call(None)


@pytest.mark.parametrize(
    "call, arg",
    [(nnc.import_tflite, 5), (nnc.load_model, 5), (nnc.load_model, 2.5), (nnc.compile, "model"), (nnc.Model.load, [])],
    ids=["import_tflite-int", "load_model-int", "load_model-float", "compile-str", "Model.load-list"],
)
def test_wrong_argument_type_is_bad_data(call, arg) -> None:
    with pytest.raises(nnc.BadDataError):
        call(arg)


def test_zero_d_arrays_where_a_list_is_expected_are_bad_data() -> None:
    m = nnc.Model()
    o = m.add_operand(T.TENSOR_FLOAT32, [2])
    with pytest.raises(nnc.BadDataError, match="addOperation"):
        m.add_operation(Op.ADD, np.array(5), [o])
    with pytest.raises(nnc.BadDataError, match="identifyInputsAndOutputs"):
        m.identify_inputs_and_outputs(np.array(0), np.array(0))


def test_model_load_of_a_pipe_descriptor_returns_at_once_and_keeps_it_open() -> None:
    r, w = os.pipe()
    try:
        with pytest.raises(nnc.BadDataError, match="path or a binary file object"):
            nnc.Model.load(r)  # used to block reading to EOF
        os.fstat(r)  # still open: nnc never closes the caller's descriptor
    finally:
        os.close(r)
        os.close(w)


def test_model_load_of_a_fifo_path_returns_at_once(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for call in (nnc.Model.load, nnc.load_model, nnc.import_tflite):
        with pytest.raises(nnc.BadDataError, match="not a regular file"):
            call(str(fifo))  # opening it would wait for a writer


def test_model_load_of_a_binary_file_object(tmp_path) -> None:
    path = tmp_path / "m.nnc"
    model = add_model()
    model.save(str(path))
    with open(path, "rb") as f:
        loaded = nnc.Model.load(f)
        assert not f.closed
    assert len(loaded.operations) == 1
    with open(path) as f, pytest.raises(nnc.BadDataError, match="binary mode"):
        nnc.Model.load(f)


def test_corrupted_tflite_bytes_are_bad_data() -> None:
    """Byte flips, truncations and zeroed runs of a valid file: each import
    either succeeds or raises an NNError (it used to raise struct.error,
    IndexError, TypeError, AttributeError)."""
    data = tflite_add()
    nnc.import_tflite(data)
    rng = random.Random(17)
    for trial in range(300):
        buf = bytearray(data)
        kind = trial % 3
        if kind == 0:
            for _ in range(rng.randint(1, 4)):
                buf[rng.randrange(8, len(buf))] = rng.randrange(256)
        elif kind == 1:
            buf = buf[: rng.randrange(8, len(buf))]
        else:
            at = rng.randrange(8, len(buf))
            buf[at : at + rng.randint(1, 16)] = bytes(min(16, len(buf) - at))
        try:
            nnc.import_tflite(bytes(buf))
        except nnc.NNError:
            pass
        except Exception as e:  # noqa: BLE001 - reported with the trial
            pytest.fail(f"trial {trial} (kind {kind}): {type(e).__name__}: {e}")


# -- found by the fuzzer (tests/fuzz/) ------------------------------------------------------------


def test_relax_flag_of_an_array_is_bad_data() -> None:
    m = nnc.Model()
    with pytest.raises(nnc.BadDataError, match="relaxComputationFloat32toFloat16"):
        m.relax_computation_float32_to_float16(np.zeros((2, 2)))
    m.relax_computation_float32_to_float16(1)  # C's bool: an int is fine
    assert m.relaxed


@pytest.mark.parametrize("obstacle", ["fifo", "directory"])
def test_cache_entry_that_is_not_a_file_is_a_miss(tmp_path, obstacle) -> None:
    """A FIFO where a cache file should be used to block the compilation
    forever (opening it waits for a writer); now it is rejected at once."""
    model = softmax_model(12, rows=2)
    c = nnc.Compilation(model)
    c.set_caching(str(tmp_path), bytes(32))
    c.finish()
    (entry,) = tmp_path.glob("nnc-*.model")
    entry.unlink()
    os.mkfifo(entry) if obstacle == "fifo" else entry.mkdir()
    driver._CACHE.clear()
    c = nnc.Compilation(model)
    c.set_caching(str(tmp_path), bytes(32))
    c.finish()
    assert [e[0] for e in c.cache_events][0] == "rejected"
    x = np.random.default_rng(1).normal(size=(2, 12)).astype(np.float32)
    ex = nnc.Execution(c)
    y = np.zeros((2, 12), np.float32)
    ex.set_input(0, x)
    ex.set_output(0, y)
    ex.compute()
    np.testing.assert_allclose(y, softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("error, n", [(RecursionError, 13), (ZeroDivisionError, 14)], ids=["recursion", "bug"])
def test_xdsl_stage_exception_is_internal_compiler_error(monkeypatch, error, n) -> None:
    """The xDSL stage runs in this process: a bug in a pass raises, and the
    caller gets OP_FAILED naming the model; the next compilation works."""

    def broken(*args, **kwargs):
        raise error("a pass went wrong")

    model = softmax_model(n, rows=2)  # a shape of its own: never an in-process cache hit
    monkeypatch.setattr(driver, "lower_shaped", broken)
    with pytest.raises(nnc.OpFailedError, match="internal compiler error") as info:
        nnc.Compilation(model).finish()
    assert driver.fingerprint(model) in str(info.value)
    monkeypatch.undo()
    nnc.Compilation(model).finish()


def test_device_index_of_an_array_is_bad_data() -> None:
    with pytest.raises(nnc.BadDataError, match="getDevice"):
        nnc.get_device(np.zeros((2, 2)))
    assert nnc.get_device(np.int64(0)) is nnc.get_device(0)


@pytest.mark.parametrize("path", [b"\x00", b"missing.tflite", "a\x00b.tflite"], ids=["nul", "bytes", "str-nul"])
def test_load_model_of_a_bad_bytes_path_is_bad_data(path) -> None:
    with pytest.raises(nnc.BadDataError):
        nnc.load_model(path)
