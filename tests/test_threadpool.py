"""The native thread pool (nnc.runtime.threadpool) on its own, and the
thread-count API of nnc.Execution.

The pool is driven by hand-written LLVM IR that calls ``nnc_parallel_for``
exactly as generated code does: a body writes ``out[i] = i*i + 7``, counts
each index with an atomic add (every element exactly once) and logs the
chunk it was given, so the chunks can be compared with their definition.
The IR module is loaded like a model (the pool's symbols resolve through
``llvmlite.binding.add_symbol``), both from an optimised module and from an
object file (the cache's path).  The native artifact's side is in
tests/test_c_abi.py.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import threading
import time
import warnings

import llvmlite.binding as llvm
import numpy as np
import pytest

import nnc
from nnc import FuseCode
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.enums import ResultCode
from nnc.errors import BadDataError, BadStateError
from nnc.runtime import threadpool
from nnc.runtime.jit import LLVM_LOCK, NativeModule, Target, emit_object, optimize
from targets import runnable_cpus

#: ctx = {i64 *out, i64 *counts, i64 *log (3 per chunk: begin, end, thread), i64 *log_len, i64 width}
KERNEL_IR = r"""
declare void @nnc_parallel_for(ptr, ptr, i64)
declare i64 @pthread_self()

define internal void @log_chunk(ptr %ctx, i64 %b, i64 %e) {
  %lenp = getelementptr ptr, ptr %ctx, i64 3
  %len = load ptr, ptr %lenp
  %slot = atomicrmw add ptr %len, i64 1 monotonic
  %logp = getelementptr ptr, ptr %ctx, i64 2
  %log = load ptr, ptr %logp
  %k = mul i64 %slot, 3
  %p0 = getelementptr i64, ptr %log, i64 %k
  store i64 %b, ptr %p0
  %p1 = getelementptr i64, ptr %p0, i64 1
  store i64 %e, ptr %p1
  %self = call i64 @pthread_self()
  %p2 = getelementptr i64, ptr %p0, i64 2
  store i64 %self, ptr %p2
  ret void
}

; writes out[base + i] and counts it, for i in [b, e)
define internal void @fill(ptr %ctx, i64 %base, i64 %b, i64 %e) {
entry:
  %out = load ptr, ptr %ctx
  %cp = getelementptr ptr, ptr %ctx, i64 1
  %counts = load ptr, ptr %cp
  %c = icmp slt i64 %b, %e
  br i1 %c, label %loop, label %done
loop:
  %i = phi i64 [%b, %entry], [%i1, %loop]
  %j = add i64 %base, %i
  %sq = mul i64 %j, %j
  %v = add i64 %sq, 7
  %p = getelementptr i64, ptr %out, i64 %j
  store i64 %v, ptr %p
  %q = getelementptr i64, ptr %counts, i64 %j
  atomicrmw add ptr %q, i64 1 monotonic
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %e
  br i1 %d, label %loop, label %done
done:
  ret void
}

define void @body(i64 %b, i64 %e, ptr %ctx) {
  call void @fill(ptr %ctx, i64 0, i64 %b, i64 %e)
  call void @log_chunk(ptr %ctx, i64 %b, i64 %e)
  ret void
}

define void @run(ptr %ctx, i64 %n) {
  call void @nnc_parallel_for(ptr @body, ptr %ctx, i64 %n)
  ret void
}

; nested: rows [b, e) of `width` elements, each row a parallel_for of its own
define void @row(i64 %b, i64 %e, ptr %rctx) {
  %ctx = load ptr, ptr %rctx
  %basep = getelementptr ptr, ptr %rctx, i64 1
  %base = load i64, ptr %basep
  call void @fill(ptr %ctx, i64 %base, i64 %b, i64 %e)
  ret void
}

define void @rows(i64 %b, i64 %e, ptr %ctx) {
entry:
  %wp = getelementptr ptr, ptr %ctx, i64 4
  %width = load i64, ptr %wp
  %rctx = alloca [2 x i64]
  store ptr %ctx, ptr %rctx
  %basep = getelementptr ptr, ptr %rctx, i64 1
  %c = icmp slt i64 %b, %e
  br i1 %c, label %loop, label %done
loop:
  %r = phi i64 [%b, %entry], [%r1, %loop]
  %base = mul i64 %r, %width
  store i64 %base, ptr %basep
  call void @nnc_parallel_for(ptr @row, ptr %rctx, i64 %width)
  %r1 = add i64 %r, 1
  %d = icmp slt i64 %r1, %e
  br i1 %d, label %loop, label %done
done:
  ret void
}

define void @run_nested(ptr %ctx, i64 %rows) {
  call void @nnc_parallel_for(ptr @rows, ptr %ctx, i64 %rows)
  ret void
}
"""

_RUN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)


class Kernel:
    """The test IR loaded in this process (``from_object``: through an object
    file), compiled for ``target`` (default: the host)."""

    def __init__(self, from_object: bool, target: Target | None = None):
        target = target or Target.host()
        threadpool.install()
        with LLVM_LOCK:
            mod = optimize(KERNEL_IR, target, exported=("run", "run_nested", "body", "row", "rows"))
            if from_object:
                self.native = NativeModule.from_object(emit_object(mod, target), target, entry=False)
            else:
                self.native = NativeModule(mod, target, entry=False)
        self.run_fn = _RUN(self.native.address("run"))
        self.nested_fn = _RUN(self.native.address("run_nested"))

    def call(self, n: int, nested_width: int = 0) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
        """(out, counts, chunk log) of one parallel_for over n (or n rows)."""
        size = max(n * max(nested_width, 1), 1)
        out, counts = np.zeros(size, np.int64), np.zeros(size, np.int64)
        log, log_len = np.zeros(3 * max(n, 1), np.int64), np.zeros(1, np.int64)
        ctx = (ctypes.c_int64 * 5)(out.ctypes.data, counts.ctypes.data, log.ctypes.data, log_len.ctypes.data,
                                   nested_width)  # fmt: skip
        if nested_width:
            self.nested_fn(ctypes.addressof(ctx), n)
        else:
            self.run_fn(ctypes.addressof(ctx), n)
        entries = [tuple(int(x) for x in log[3 * k : 3 * k + 3]) for k in range(int(log_len[0]))]
        return out, counts, entries


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    return Kernel(from_object=False)


@pytest.fixture
def threads():
    """Restore the process's thread count after a test that changes it."""
    before = threadpool.get_num_threads()
    yield threadpool.set_num_threads
    threadpool.set_num_threads(before)


def expected_chunks(n: int, t: int) -> list[tuple[int, int]]:
    chunks = min(t, n)
    q, r = divmod(n, chunks)
    return [(k * q + min(k, r), (k + 1) * q + min(k + 1, r)) for k in range(chunks)]


def check(out: np.ndarray, counts: np.ndarray, n: int) -> None:
    i = np.arange(n, dtype=np.int64)
    np.testing.assert_array_equal(out[:n], i * i + 7)
    np.testing.assert_array_equal(counts[:n], np.ones(n, np.int64))  # every element exactly once


@pytest.mark.parametrize("t", [1, 2, 8])
@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_every_element_once_in_fixed_chunks(kernel, threads, n, t):
    threads(t)
    assert threadpool.get_num_threads() == t
    out, counts, log = kernel.call(n)
    check(out, counts, n)
    if n == 0:
        assert log == [] and not counts.any()
        return
    assert sorted((b, e) for b, e, _ in log) == expected_chunks(n, t)
    if t == 1 or n == 1:
        assert len(log) == 1 and log[0][2] == threading.get_ident()  # called directly, in the caller


#: run in a fresh interpreter: the pool compiled for CPU argv[1] is the first
#: one the process loads, and the test kernel is compiled for it too
_POOL_FOR_CPU = r"""
import sys
sys.path.insert(0, sys.argv[2])
from nnc.runtime import threadpool
from targets import runnable_target
target = runnable_target(sys.argv[1])
threadpool.install(threadpool.in_process_object(target))
import test_threadpool as tp
kernel = tp.Kernel(from_object=True, target=target)
for t in (1, 2, 8):
    threadpool.set_num_threads(t)
    for n in (1, 7, 1000):
        out, counts, log = kernel.call(n)
        tp.check(out, counts, n)
        assert sorted((b, e) for b, e, _ in log) == tp.expected_chunks(n, t), (t, n, log)
assert threadpool.install().object_code == threadpool.in_process_object(target)
print("ok")
"""


@pytest.mark.parametrize("cpu", runnable_cpus())
def test_pool_compiled_for_each_runnable_target(cpu: str) -> None:
    """The pool and a kernel compiled for each x86-64 path the host can run
    (:func:`targets.runnable_cpus`) split the work into the defined chunks
    and touch every element once, at 1, 2 and 8 threads."""
    tests = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-c", _POOL_FOR_CPU, cpu, tests], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ok"]


def test_workers_run_chunks_on_other_threads(kernel, threads):
    """With 8 threads, repeated: some chunks run on workers.  The caller
    takes chunks too, and may take all of them before a worker wakes (a
    fast core, the other one busy with other tests): so the calls repeat,
    on 100,000 elements, until a worker shows or 20 s have passed."""
    threads(8)
    seen: set[int] = set()
    deadline = time.monotonic() + 20.0
    while len(seen) < 2 and time.monotonic() < deadline:
        out, counts, log = kernel.call(100_000)
        check(out, counts, 100_000)
        seen |= {tid for _, _, tid in log}
    assert len(seen) > 1


def _other_threads_cpu_ticks() -> int:
    """User + system clock ticks of this process's threads but the calling one."""
    me, total = threading.get_native_id(), 0
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_idle_workers_sleep(kernel, threads):
    """Workers spin only briefly after a job: idle, they use no CPU."""
    threads(8)
    for _ in range(20):
        kernel.call(1000)
    time.sleep(0.2)  # past the bounded spin
    before = _other_threads_cpu_ticks()
    time.sleep(1.0)
    used = (_other_threads_cpu_ticks() - before) / os.sysconf("SC_CLK_TCK")
    assert used < 0.1, f"idle threads used {used:.2f} s of CPU in 1 s"


def test_aarch64_code_uses_acquire_release():
    """The pool compiles for AArch64 (weakly ordered): its atomics become
    acquire/release instructions and the spin uses YIELD."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = Target("aarch64-unknown-linux-gnu", "cortex-a72", "")
    try:
        target.machine()
    except RuntimeError:
        pytest.skip("this llvmlite has no AArch64 target")
    with LLVM_LOCK:
        asm = target.machine().emit_assembly(threadpool.compile_module(target))
    for instruction in ("ldar", "stlr", "ldaxr", "stlxr", "yield"):
        assert f"\t{instruction}" in asm, instruction


def test_loaded_from_an_object_file(threads):
    """An object file (the compilation cache's form) resolves the pool too."""
    threads(2)
    k = Kernel(from_object=True)
    out, counts, log = k.call(1000)
    check(out, counts, 1000)
    assert sorted((b, e) for b, e, _ in log) == expected_chunks(1000, 2)


def test_one_pool_per_process():
    """Every loaded object resolves nnc_parallel_for to the one compiled pool."""
    pool = threadpool.install()
    assert threadpool.install() is pool
    assert llvm.address_of_symbol(threadpool.PARALLEL_FOR) == pool.parallel_for


_BACKGROUND_INSTALL = """
from nnc.runtime import threadpool
threadpool.install_in_background()
first = threadpool._installing
threadpool.install_in_background()  # one thread at a time
assert threadpool._installing is first
pool = threadpool.install()  # waits for the thread's pool: the same one
first.join()
assert threadpool._loaded is pool
threadpool.install_in_background()  # loaded: nothing to start
assert threadpool._installing is first
print("ok")
"""


def test_install_in_background_loads_the_one_pool():
    """A compilation's early install and the loading's install share one pool."""
    done = subprocess.run([sys.executable, "-c", _BACKGROUND_INSTALL], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_nested_parallel_for_runs_serially(kernel, threads):
    threads(4)
    rows, width = 13, 50
    out, counts, _ = kernel.call(rows, nested_width=width)
    check(out, counts, rows * width)


def test_concurrent_calls_from_two_threads(kernel, threads):
    """Two Python threads (ctypes releases the GIL) share the one pool: the
    one that finds it busy runs serially; nothing is lost or deadlocks."""
    threads(2)
    errors: list[BaseException] = []

    def work(nested: bool) -> None:
        try:
            for _ in range(150):
                if nested:
                    out, counts, _ = kernel.call(7, nested_width=30)
                    check(out, counts, 7 * 30)
                else:
                    out, counts, _ = kernel.call(1000)
                    check(out, counts, 1000)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    workers = [threading.Thread(target=work, args=(nested,), daemon=True) for nested in (False, False, True)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not any(w.is_alive() for w in workers), "a parallel_for did not return (deadlock)"
    assert not errors, errors[0]


def test_fork_child_uses_the_pool(kernel, threads):
    """A child forked while the pool has workers starts a pool of its own."""
    threads(2)
    kernel.call(1000)  # workers exist
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            for _ in range(20):
                out, counts, _ = kernel.call(1000)
                check(out, counts, 1000)
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's parallel_for did not return")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0


def test_set_and_get(threads, monkeypatch):
    threads(3)
    assert threadpool.get_num_threads() == 3
    threads(1000)
    assert threadpool.get_num_threads() == threadpool.MAX_THREADS
    cpus = min(len(os.sched_getaffinity(0)), threadpool.MAX_THREADS)
    for value, want in (("5", 5), ("200", threadpool.MAX_THREADS), ("x2", cpus), ("0", cpus), (None, cpus)):
        if value is None:
            monkeypatch.delenv(threadpool.ENV_VAR, raising=False)
        else:
            monkeypatch.setenv(threadpool.ENV_VAR, value)
        threads(0)  # n < 1: back to the default, computed again from the environment
        assert threadpool.get_num_threads() == want, value


@pytest.fixture
def environment(monkeypatch):
    """Set NNC_NUM_THREADS (None: unset) for the Python default, which is
    read once per process; read again after the test."""

    def put(value: str | None) -> None:
        if value is None:
            monkeypatch.delenv(threadpool.ENV_VAR, raising=False)
        else:
            monkeypatch.setenv(threadpool.ENV_VAR, value)
        threadpool.default_num_threads.cache_clear()

    yield put
    monkeypatch.undo()
    threadpool.default_num_threads.cache_clear()


def test_python_default(environment):
    cpus = min(len(os.sched_getaffinity(0)), threadpool.MAX_THREADS)
    for value, want in ((None, cpus), ("", cpus), ("3", 3), ("1000", threadpool.MAX_THREADS)):
        environment(value)
        assert threadpool.default_num_threads() == want
    environment("7")
    assert threadpool.default_num_threads() == 7
    os.environ[threadpool.ENV_VAR] = "5"
    assert threadpool.default_num_threads() == 7  # read once
    for bad in ("zero", "0", "-2", "2.5", " 2"):
        environment(bad)
        with pytest.warns(RuntimeWarning, match=threadpool.ENV_VAR):
            assert threadpool.default_num_threads() == cpus


# -- the artifacts' copy, linked by the C compiler ----------------------------------------------------------

CC = shutil.which(os.environ.get("CC", "").split()[0] if os.environ.get("CC", "").strip() else "cc")

C_POOL = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

void nnc_parallel_for(void (*body)(int64_t, int64_t, void *), void *ctx, int64_t n);
void nnc_set_num_threads(int32_t n);
int32_t nnc_get_num_threads(void);

enum { N = 1000 };
typedef struct { int64_t out[N]; int count[N]; } buffers;

static void body(int64_t b, int64_t e, void *ctx) {
    buffers *x = ctx;
    for (int64_t i = b; i < e; i++) {
        x->out[i] = i * i + 7;
        __atomic_fetch_add(&x->count[i], 1, __ATOMIC_RELAXED);
    }
}

static int check(int64_t n) {
    static buffers x;
    for (int i = 0; i < N; i++) { x.out[i] = -1; x.count[i] = 0; }
    nnc_parallel_for(body, &x, n);
    for (int64_t i = 0; i < N; i++)
        if ((i < n) != (x.count[i] == 1) || (i < n && x.out[i] != i * i + 7) || x.count[i] > 1) return 1;
    return 0;
}

static void *hammer(void *arg) {
    static buffers y[2];
    buffers *x = &y[(intptr_t)arg];
    for (int k = 0; k < 300; k++) {
        for (int i = 0; i < N; i++) x->count[i] = 0;
        nnc_parallel_for(body, x, N);
        for (int i = 0; i < N; i++) if (x->count[i] != 1 || x->out[i] != (int64_t)i * i + 7) return (void *)1;
    }
    return NULL;
}

int main(void) {
    printf("default %d\n", nnc_get_num_threads());
    int threads[] = {1, 2, 8};
    int64_t sizes[] = {0, 1, 7, N};
    for (int t = 0; t < 3; t++)
        for (int s = 0; s < 4; s++) {
            nnc_set_num_threads(threads[t]);
            if (nnc_get_num_threads() != threads[t] || check(sizes[s])) { printf("fail %d %d\n", t, s); return 1; }
        }
    nnc_set_num_threads(2);
    pthread_t a, b;
    void *ra, *rb;
    pthread_create(&a, NULL, hammer, (void *)0);
    pthread_create(&b, NULL, hammer, (void *)1);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    if (ra || rb) { printf("concurrent calls failed\n"); return 1; }
    pid_t pid = fork();  /* the child starts a pool of its own (pthread_atfork) */
    if (pid == 0) _exit(check(N) || check(7));
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) { printf("child\n"); return 1; }
    printf("ok\n");
    return 0;
}
"""


@pytest.mark.skipif(CC is None, reason="no C compiler (cc or $CC) on PATH")
def test_artifact_pool_linked_by_the_c_compiler(tmp_path):
    """The copy artifacts link in (pthread_atfork, internal state) as plain
    native code: chunks, concurrent callers, fork; the default from the
    environment."""
    target = Target.host()
    mod = threadpool.compile_module(target)
    obj = tmp_path / "pool.o"
    with LLVM_LOCK:
        obj.write_bytes(emit_object(mod, target))
    (tmp_path / "main.c").write_text(C_POOL)
    exe = str(tmp_path / "pool")
    cmd = [CC, "-std=gnu11", "-O1", "-Wall", "-Werror", "-o", exe, str(tmp_path / "main.c"), str(obj), "-pthread"]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    cpus = min(len(os.sched_getaffinity(0)), threadpool.MAX_THREADS)
    env = {k: v for k, v in os.environ.items() if k != threadpool.ENV_VAR}
    for value, want in ((None, cpus), ("6", 6), ("6x", cpus)):
        run_env = env if value is None else dict(env, **{threadpool.ENV_VAR: value})
        proc = subprocess.run([exe], capture_output=True, text=True, timeout=120, env=run_env)
        assert proc.returncode == 0 and proc.stdout.split() == ["default", str(want), "ok"], proc.stdout + proc.stderr


# -- nnc.Execution.set_num_threads ------------------------------------------------------------------------------


def _add_model() -> nnc.Model:
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [4])
    b = m.add_operand(T.TENSOR_FLOAT32, [4])
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, FuseCode.NONE)
    out = m.add_operand(T.TENSOR_FLOAT32, [4])
    m.add_operation(Op.ADD, [a, b, act], [out])
    m.identify_inputs_and_outputs([a, b], [out])
    m.finish()
    return m


@pytest.fixture(scope="module")
def compilation() -> nnc.Compilation:
    c = nnc.Compilation(_add_model())
    c.finish()
    return c


def _execution(c: nnc.Compilation, out: np.ndarray) -> nnc.Execution:
    ex = nnc.Execution(c)
    ex.set_input(0, np.arange(4, dtype=np.float32))
    ex.set_input(1, np.full(4, 0.5, np.float32))
    ex.set_output(0, out)
    return ex


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", None, np.float32(2)])
def test_execution_set_num_threads_bad_data(compilation, bad):
    ex = _execution(compilation, np.zeros(4, np.float32))
    with pytest.raises(BadDataError) as info:
        ex.set_num_threads(bad)
    assert info.value.code == ResultCode.BAD_DATA
    assert info.value.function == "ANeuralNetworksExecution_setNumThreads"
    assert ex.num_threads == threadpool.default_num_threads()  # unchanged


def test_execution_set_num_threads_only_while_preparing(compilation, threads):
    out = np.zeros(4, np.float32)
    ex = _execution(compilation, out)
    ex.set_num_threads(np.int64(3))
    assert ex.num_threads == 3
    ex.compute()
    assert threadpool.get_num_threads() == 3  # the computation set the pool's count
    np.testing.assert_array_equal(out, np.arange(4, dtype=np.float32) + 0.5)
    with pytest.raises(BadStateError) as info:
        ex.set_num_threads(2)
    assert info.value.function == "ANeuralNetworksExecution_setNumThreads"
    ex.close()
    ex = _execution(compilation, out)
    ex.set_num_threads(10_000)
    assert ex.num_threads == threadpool.MAX_THREADS


def test_execution_default_and_every_mode(compilation, threads, environment):
    """The default comes from NNC_NUM_THREADS; compute, start_compute and
    burst_compute all run with the execution's count."""
    environment("2")
    out = np.zeros(4, np.float32)
    ex = _execution(compilation, out)
    assert ex.num_threads == 2
    ex.set_reusable(True)
    threads(5)
    ex.compute()
    assert threadpool.get_num_threads() == 2
    threads(5)
    ex.start_compute().wait()
    assert threadpool.get_num_threads() == 2
    threads(5)
    burst = nnc.Burst(compilation)
    ex.burst_compute(burst)
    assert threadpool.get_num_threads() == 2
    np.testing.assert_array_equal(out, np.arange(4, dtype=np.float32) + 0.5)
    environment("many")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex2 = nnc.Execution(compilation)
    assert ex2.num_threads == min(len(os.sched_getaffinity(0)), threadpool.MAX_THREADS)
    assert any(threadpool.ENV_VAR in str(w.message) for w in caught)
