"""The native thread pool that compiled models run their parallel loops on.

Generated code splits a layer's work with one call,

``void nnc_parallel_for(void (*body)(int64_t begin, int64_t end, void *ctx), void *ctx, int64_t n)``

which runs ``body`` over ``[0, n)`` in contiguous chunks, one per thread, and
returns when every chunk is done (the barrier between dependent layers).  The
chunks are a pure function of ``n`` and the thread count ``T``: chunk ``t`` is
``[t*q + min(t, r), (t+1)*q + min(t+1, r))`` with ``q, r = divmod(n, T)``, so
what each chunk computes -- and therefore every output element -- does not
depend on timing; which thread runs a chunk does (the caller takes chunks
too, and takes over those no worker has claimed yet: on a machine with more
runnable threads than cores a worker may wait milliseconds for a CPU, and
the caller then does its share instead of waiting).  ``T == 1`` or ``n == 1``
calls ``body(0, n, ctx)`` directly; so does a call made while the pool is
busy (another thread's model, or a call nested inside a body), which is how
the pool can never deadlock: it has one job slot, taken with a
compare-and-swap, and whoever does not get it runs serially.
``nnc_set_num_threads(n)`` / ``nnc_get_num_threads()`` choose the count for
the whole process (``n < 1``: back to the default, see below; at most
:data:`MAX_THREADS`).

Why LLVM IR and not Python or C: native artifacts (``nnc compile``) must run
without Python and are built without a C source step, so the pool is one more
generated module, linked into the artifact next to the model (with internal
linkage, so each artifact has its own pool and two artifacts never clash).
In this process it is compiled once, on first use, and its three functions
are registered with ``llvmlite.binding.add_symbol`` so every model object
loaded later (compiled fresh or read from a cache file) resolves
``nnc_parallel_for`` to it: one pool and one set of worker threads for any
number of models.

How it works.  Workers are created lazily by the first call that needs them
(signals blocked, so they go to the application's threads) and live for the
rest of the process.  The caller publishes a job with atomic stores -- the
body, its context, ``n``, ``T``, ``pending = T`` and the claim word
``generation << 32 | T << 16 | 0`` -- and then a new generation (release).  An
idle worker spins for a bounded time (:data:`IDLE_SPIN_NS` of
``clock_gettime``, with the CPU's pause/yield hint) on the generation --
consecutive layers follow each other within microseconds -- and otherwise
sleeps on a condition variable.  Caller and workers claim chunks with a compare-and-swap on the
claim word (which fails for a thread that read an older job), run them, and
decrement ``pending``; the caller spins (:data:`JOIN_SPIN_NS`) for
``pending == 0`` and then sleeps.  The mutex is taken only around sleeping
and waking: a sleeper announces itself (``sleepers``, ``joining``) and
re-checks its condition, the other side changes the condition and then reads
the announcement, all sequentially consistent, so one of them always sees
the other and no wake-up is lost.  Orderings: the job and the data the body
reads are published by the generation (release store, acquire load); what
the bodies wrote is published to the caller by the decrements of
``pending``, which form one release sequence that the caller's acquire load
of ``pending == 0`` synchronises with.  That is correct on weakly ordered
CPUs (AArch64) as well as x86.  Worker ``k`` (1, 2, ...) only takes part in
jobs of more than ``k`` chunks, so lowering the count leaves the surplus
workers asleep.  A process forked while the pool had workers has none in the
child: a fork hook (``pthread_atfork`` in an artifact, ``os.register_at_fork``
in this process) marks the pool for a fresh start (new mutex and condition
variables, no workers) at its next use.  (Without it the child still
computes, serially: the caller runs every chunk no worker claims.)

Portability: 64-bit Linux with glibc and Android (bionic), on x86-64 and
AArch64 (the module is built for the artifact's target triple, not the
host's: the spin-wait hint is x86 ``pause`` or AArch64 ``yield``, and the
one libc constant that differs, ``_SC_NPROCESSORS_ONLN``, is bionic's on
Android); ``pthread_mutex_t`` and ``pthread_cond_t`` are treated as opaque,
64-byte aligned storage of :data:`SYNC_BYTES` bytes (glibc: 40 or 48 and 48
bytes; bionic on LP64: 40 and 48) set up with ``pthread_*_init``.  Only
libc/libpthread is called.

The default thread count: ``NNC_NUM_THREADS`` when it is a positive decimal
integer, else the CPUs this process may run on (``sched_getaffinity``), else
the online CPUs, capped at :data:`MAX_THREADS`.  The native pool computes it
on first use; :func:`default_num_threads` is the same rule in Python (the
one ``nnc.Execution`` starts from), which also warns about a malformed value.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from nnc.runtime.jit import LLVM_LOCK, NativeModule, Target, emit_object, optimize

#: The most threads a pool runs (requests above are lowered to it).
MAX_THREADS = 64
#: The environment variable that sets the default thread count.
ENV_VAR = "NNC_NUM_THREADS"
#: The pool's C ABI (plain C symbols).
PARALLEL_FOR = "nnc_parallel_for"
SET_NUM_THREADS = "nnc_set_num_threads"
GET_NUM_THREADS = "nnc_get_num_threads"
API = (PARALLEL_FOR, SET_NUM_THREADS, GET_NUM_THREADS)
#: The child-side fork hook of the in-process pool (an artifact's is internal).
AFTER_FORK = "nnc_pool_after_fork"
#: The in-process stand-in for pthread_atfork (see _PoolBuilder.atfork_shim).
ATFORK_SHIM = "nnc_pool_atfork"
#: Storage for one pthread_mutex_t or pthread_cond_t (64-byte aligned).
SYNC_BYTES = 64
#: How long an idle worker polls for the next job, and a caller for the
#: chunks workers still run, before sleeping on a condition variable.  A
#: sleeper costs a wake-up: tens of microseconds under a hypervisor (the
#: woken CPU may itself be halted), and a worker that sleeps through the
#: start of a layer costs more than that: the caller runs the layer's
#: chunks alone meanwhile, and its wake-up syscalls on top (a layer can
#: take longer on 2 threads than on 1).  The gap that matters is between the last parallel layer of one
#: inference and the first of the next: the serial tail of small layers
#: plus the caller's own work, a few hundred microseconds.  So an idle
#: worker spins for a millisecond (as pthreadpool's workers spin before
#: they block), costing at most that much of an idle core per inference;
#: the caller's wait is as long, as it waits for a chunk that is running
#: (no longer than its own share, unless the worker lost its CPU).
IDLE_SPIN_NS = 1_000_000
JOIN_SPIN_NS = 1_000_000
#: Polls between two readings of the clock while spinning.
CLOCK_EVERY = 64
#: The in-process count global (read by :func:`use` to skip needless calls).
_COUNT_GLOBAL = "nnc_pool.num_threads"

_i8, _i32, _i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_ptr = ir.PointerType()
_void = ir.VoidType()
#: The body's type: void body(int64_t begin, int64_t end, void *ctx).
BODY_TYPE = ir.FunctionType(_void, [_i64, _i64, _ptr])
#: A pointer to a body, typed so that llvmlite can emit the indirect call
#: (it prints as a pointer LLVM reads as ``ptr``).
_BODY_PTR = BODY_TYPE.as_pointer()

# Linux constants (identical on x86-64 and AArch64, glibc and bionic) ...
_SIG_SETMASK = 2
# ... but for sysconf's, which each libc numbers its own way.
_SC_NPROCESSORS_ONLN = {"glibc": 84, "bionic": 0x61}
_CPU_SET_WORDS = 16  # cpu_set_t: 1024 bits
_CLOCK_MONOTONIC = 1
#: struct timespec on 64-bit Linux: seconds, nanoseconds.
_TIMESPEC = ir.LiteralStructType([_i64, _i64])


# -- the IR ---------------------------------------------------------------------------------------------------


def _c(ty: ir.Type, value) -> ir.Constant:
    return ir.Constant(ty, value)


class _PoolBuilder:
    """Builds the pool's functions into one module; each method one function
    (or one inline fragment), sharing the globals and libc declarations."""

    def __init__(self, mod: ir.Module, triple: str, in_process: bool):
        self.mod = mod
        self.linux = "linux" in triple
        self.libc = "bionic" if "android" in triple else "glibc"
        self.pause: tuple[ir.Function, list[ir.Value]] | None = None  # the CPU's spin-wait hint (an intrinsic: MCJIT has no inline-asm parser)
        if triple.startswith(("x86_64", "i686", "i386")):
            self.pause = (self._declare("llvm.x86.sse2.pause", _void, []), [])
        elif triple.startswith(("aarch64", "arm64")):
            self.pause = (self._declare("llvm.aarch64.hint", _void, [_i32]), [_c(_i32, 1)])  # YIELD
        self.in_process = in_process
        linkage = "" if in_process else "internal"
        sync = ir.ArrayType(_i8, SYNC_BYTES)
        self.mutex = self._global("mutex", sync, linkage)
        self.work_cv = self._global("work_cv", sync, linkage)
        self.done_cv = self._global("done_cv", sync, linkage)
        self.num_threads = self._global("num_threads", _i32, linkage)
        self.busy = self._global("busy", _i32, linkage)
        self.gen = self._global("gen", _i32, linkage)
        self.pending = self._global("pending", _i32, linkage)  # chunks of the job not yet done
        self.claim = self._global("claim", _i64, linkage)  # generation << 32 | next unclaimed chunk
        self.sleepers = self._global("sleepers", _i32, linkage)  # workers in (or entering) cond_wait
        self.joining = self._global("joining", _i32, linkage)  # 1: the caller sleeps until pending == 0
        # the job, in one cache line: body, ctx, n, chunks (atomics: read while the next may be written)
        self.job = self._global("job", ir.LiteralStructType([_BODY_PTR, _i8.as_pointer(), _i64, _i64]), linkage)
        self.workers = self._global("workers", _i32, linkage)
        self.ready = self._global("ready", _i32, linkage)  # 0: set up at next use (first, or after fork)
        self.registered = self._global("atfork_registered", _i32, linkage)
        self.tids = self._global("tids", ir.ArrayType(_i64, MAX_THREADS), linkage)
        decl = self._declare
        self.mutex_init = decl("pthread_mutex_init", _i32, [_ptr, _ptr])
        self.lock = decl("pthread_mutex_lock", _i32, [_ptr])
        self.unlock = decl("pthread_mutex_unlock", _i32, [_ptr])
        self.cond_init = decl("pthread_cond_init", _i32, [_ptr, _ptr])
        self.cond_wait = decl("pthread_cond_wait", _i32, [_ptr, _ptr])
        self.cond_signal = decl("pthread_cond_signal", _i32, [_ptr])
        self.cond_broadcast = decl("pthread_cond_broadcast", _i32, [_ptr])
        self.create = decl("pthread_create", _i32, [_ptr, _ptr, _ptr, _ptr])
        if not in_process:
            self.atfork = decl("pthread_atfork", _i32, [_ptr, _ptr, _ptr])
        self.getenv = decl("getenv", _ptr, [_ptr])
        self.sysconf = decl("sysconf", _i64, [_i32])
        self.clock_gettime = decl("clock_gettime", _i32, [_i32, _ptr])
        if self.linux:
            self.getaffinity = decl("sched_getaffinity", _i32, [_i32, _i64, _ptr])
            self.sigfillset = decl("sigfillset", _i32, [_ptr])
            self.sigmask = decl("pthread_sigmask", _i32, [_i32, _ptr, _ptr])

    def _global(self, name: str, ty: ir.Type, linkage: str) -> ir.GlobalVariable:
        g = ir.GlobalVariable(self.mod, ty, f"nnc_pool.{name}")
        g.initializer = ir.Constant(ty, None)
        g.linkage = linkage
        g.align = 64  # one cache line each: the atomics are written by different threads
        return g

    def _declare(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        return ir.Function(self.mod, ir.FunctionType(ret, args), name)

    def _function(self, name: str, ret: ir.Type, args: list[ir.Type], internal: bool = True) -> ir.Function:
        fn = ir.Function(self.mod, ir.FunctionType(ret, args), name)
        if internal:
            fn.linkage = "internal"
        fn.attributes.add("nounwind")
        return fn

    # -- fragments -------------------------------------------------------------------------------------------
    def _pause(self, b: ir.IRBuilder) -> None:
        if self.pause is not None:
            b.call(*self.pause)

    def _now(self, fn: ir.Function, b: ir.IRBuilder) -> ir.Value:
        """CLOCK_MONOTONIC in nanoseconds (i64); its timespec lives in the
        function's entry block, so a call inside a loop does not grow the stack."""
        entry = ir.IRBuilder()
        entry.position_at_start(fn.entry_basic_block)
        ts = entry.alloca(_TIMESPEC)
        b.call(self.clock_gettime, [_c(_i32, _CLOCK_MONOTONIC), ts])
        sec = b.load(b.gep(ts, [_c(_i32, 0), _c(_i32, 0)], source_etype=_TIMESPEC), typ=_i64)
        nsec = b.load(b.gep(ts, [_c(_i32, 0), _c(_i32, 1)], source_etype=_TIMESPEC), typ=_i64)
        return b.add(b.mul(sec, _c(_i64, 1_000_000_000)), nsec)

    def _spin(self, fn: ir.Function, b: ir.IRBuilder, ready: Callable[[ir.IRBuilder], ir.Value], name: str,
              budget_ns: int):  # fmt: skip
        """Poll ``ready`` (with the CPU's pause hint) for up to ``budget_ns``
        of wall time, reading the clock every :data:`CLOCK_EVERY` polls;
        returns the builders of the block reached when it became true and of
        the one after giving up.  Time, not a count of polls: a pause lasts
        a few cycles on some CPUs and over a hundred on others."""
        start = self._now(fn, b)
        entry = b.block
        loop, again = fn.append_basic_block(f"{name}.spin"), fn.append_basic_block(f"{name}.pause")
        clock = fn.append_basic_block(f"{name}.clock")
        done, slow = fn.append_basic_block(f"{name}.ready"), fn.append_basic_block(f"{name}.sleep")
        b.branch(loop)
        b = ir.IRBuilder(loop)
        k = b.phi(_i32)
        k.add_incoming(_c(_i32, 0), entry)
        b.cbranch(ready(b), done, again)
        b = ir.IRBuilder(again)
        self._pause(b)
        k_next = b.add(k, _c(_i32, 1))
        k.add_incoming(k_next, again)
        b.cbranch(b.icmp_unsigned("!=", b.and_(k_next, _c(_i32, CLOCK_EVERY - 1)), _c(_i32, 0)), loop, clock)
        b = ir.IRBuilder(clock)
        k.add_incoming(k_next, clock)
        b.cbranch(b.icmp_signed("<", b.sub(self._now(fn, b), start), _c(_i64, budget_ns)), loop, slow)
        return ir.IRBuilder(done), ir.IRBuilder(slow)

    def _sleep_until(self, fn: ir.Function, b: ir.IRBuilder, cv: ir.Value, ready, name: str,
                     announce: Callable[[ir.IRBuilder, bool], None]) -> ir.IRBuilder:  # fmt: skip
        """Sleep on ``cv`` until ``ready`` (a sequentially consistent load),
        having announced it (``announce(b, True)``, a sequentially consistent
        store or RMW; ``announce(b, False)`` after) under the mutex.  The
        other side makes ``ready`` true with a sequentially consistent
        store, then reads the announcement and, if set, signals under the
        mutex: in the single order of those four operations either it sees
        the announcement or the sleeper sees ``ready`` before waiting, so no
        wake-up is lost and the hot path never takes the mutex."""
        check, wait, done = (fn.append_basic_block(f"{name}.{x}") for x in ("check", "wait", "done"))
        b.call(self.lock, [self.mutex])
        announce(b, True)
        b.branch(check)
        b = ir.IRBuilder(check)
        b.cbranch(ready(b), done, wait)
        b = ir.IRBuilder(wait)
        b.call(self.cond_wait, [cv, self.mutex])
        b.branch(check)
        b = ir.IRBuilder(done)
        announce(b, False)
        b.call(self.unlock, [self.mutex])
        return b

    def _wake(self, fn: ir.Function, b: ir.IRBuilder, announced: ir.Value, cv: ir.Value, broadcast: bool, name: str):
        """The other side of :meth:`_sleep_until`: signal ``cv`` under the
        mutex if ``announced`` (a sequentially consistent load) is set."""
        wake, after = fn.append_basic_block(f"{name}.wake"), fn.append_basic_block(f"{name}.woken")
        b.cbranch(b.icmp_unsigned("!=", announced, _c(_i32, 0)), wake, after)
        w = ir.IRBuilder(wake)
        w.call(self.lock, [self.mutex])
        w.call(self.cond_broadcast if broadcast else self.cond_signal, [cv])
        w.call(self.unlock, [self.mutex])
        w.branch(after)
        return ir.IRBuilder(after)

    def _job_field(self, b: ir.IRBuilder, k: int) -> ir.Value:
        return b.gep(self.job, [_c(_i32, 0), _c(_i32, k)])

    @staticmethod
    def _chunk(b: ir.IRBuilder, t: ir.Value, chunks: ir.Value, n: ir.Value) -> tuple[ir.Value, ir.Value]:
        """Chunk t of [0, n) in `chunks` parts: [t*q + min(t, r), ...), overflow-free."""
        t64, c64 = b.zext(t, _i64), b.zext(chunks, _i64)
        q, r = b.udiv(n, c64), b.urem(n, c64)

        def start(i: ir.Value) -> ir.Value:
            return b.add(b.mul(i, q), b.select(b.icmp_unsigned("<", i, r), i, r))

        return start(t64), start(b.add(t64, _c(_i64, 1)))

    @staticmethod
    def _min(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
        return b.select(b.icmp_signed("<", x, y), x, y)

    # -- functions ---------------------------------------------------------------------------------------------
    def default_threads(self) -> ir.Function:
        """NNC_NUM_THREADS if a positive decimal, else the affinity mask's CPUs,
        else the online CPUs, else 1; at most MAX_THREADS."""
        fn = self._function("nnc_pool.default_threads", _i32, [])
        blocks = {x: fn.append_basic_block(x) for x in ("entry", "parse", "digit", "end", "cpus", "online", "one")}
        name = bytearray(ENV_VAR.encode() + b"\0")
        text = ir.GlobalVariable(self.mod, ir.ArrayType(_i8, len(name)), "nnc_pool.env_name")
        text.initializer, text.global_constant, text.linkage = ir.Constant(text.type.pointee, name), True, "private"
        cap = _c(_i64, MAX_THREADS)
        b = ir.IRBuilder(blocks["entry"])
        s = b.call(self.getenv, [text])
        b.cbranch(b.icmp_unsigned("==", s, _c(_ptr, None)), blocks["cpus"], blocks["parse"])
        b = ir.IRBuilder(blocks["parse"])
        i, v = b.phi(_i64), b.phi(_i64)
        i.add_incoming(_c(_i64, 0), blocks["entry"])
        v.add_incoming(_c(_i64, 0), blocks["entry"])
        ch = b.load(b.gep(s, [i], source_etype=_i8), typ=_i8)
        b.cbranch(b.icmp_unsigned("==", ch, _c(_i8, 0)), blocks["end"], blocks["digit"])
        b = ir.IRBuilder(blocks["digit"])
        d = b.zext(b.sub(ch, _c(_i8, ord("0"))), _i64)
        v_next = self._min(b, b.add(b.mul(v, _c(_i64, 10)), d), _c(_i64, 1 << 20))
        i.add_incoming(b.add(i, _c(_i64, 1)), blocks["digit"])
        v.add_incoming(v_next, blocks["digit"])
        b.cbranch(b.icmp_unsigned("<", d, _c(_i64, 10)), blocks["parse"], blocks["cpus"])
        b = ir.IRBuilder(blocks["end"])
        with b.if_then(b.icmp_signed(">", v, _c(_i64, 0))):
            b.ret(b.trunc(self._min(b, v, cap), _i32))
        b.branch(blocks["cpus"])
        b = ir.IRBuilder(blocks["cpus"])
        if self.linux:
            mask_ty = ir.ArrayType(_i64, _CPU_SET_WORDS)
            mask = b.alloca(mask_ty)
            b.store(ir.Constant(mask_ty, None), mask)
            rc = b.call(self.getaffinity, [_c(_i32, 0), _c(_i64, _CPU_SET_WORDS * 8), mask])
            ctpop = self.mod.declare_intrinsic("llvm.ctpop", [_i64])
            count = _c(_i64, 0)
            for w in range(_CPU_SET_WORDS):
                word = b.load(b.gep(mask, [_c(_i32, 0), _c(_i32, w)], source_etype=mask_ty), typ=_i64)
                count = b.add(count, b.call(ctpop, [word]))
            with b.if_then(b.and_(b.icmp_signed("==", rc, _c(_i32, 0)), b.icmp_signed(">", count, _c(_i64, 0)))):
                b.ret(b.trunc(self._min(b, count, cap), _i32))
        b.branch(blocks["online"])
        b = ir.IRBuilder(blocks["online"])
        online = b.call(self.sysconf, [_c(_i32, _SC_NPROCESSORS_ONLN[self.libc])]) if self.linux else _c(_i64, 1)
        with b.if_then(b.icmp_signed(">", online, _c(_i64, 0))):
            b.ret(b.trunc(self._min(b, online, cap), _i32))
        b.branch(blocks["one"])
        ir.IRBuilder(blocks["one"]).ret(_c(_i32, 1))
        return fn

    def get_num_threads(self, default_threads: ir.Function) -> ir.Function:
        """The count; 0 in the global means "the default, not computed yet"."""
        fn = self._function(GET_NUM_THREADS, _i32, [], internal=False)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        v = b.load_atomic(self.num_threads, "monotonic", 4)
        with b.if_then(b.icmp_signed("!=", v, _c(_i32, 0))):
            b.ret(v)
        d = b.call(default_threads, [])
        pair = b.cmpxchg(self.num_threads, _c(_i32, 0), d, "monotonic", "monotonic")
        b.ret(b.select(b.extract_value(pair, 1), d, b.extract_value(pair, 0)))
        return fn

    def set_num_threads(self) -> ir.Function:
        """n < 1: back to the default; else min(n, MAX_THREADS)."""
        fn = self._function(SET_NUM_THREADS, _void, [_i32], internal=False)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        n = fn.args[0]
        v = b.select(b.icmp_signed("<", n, _c(_i32, 1)), _c(_i32, 0), self._min(b, n, _c(_i32, MAX_THREADS)))
        b.store_atomic(v, self.num_threads, "monotonic", 4)
        b.ret_void()
        return fn

    def _run_chunks(self, fn: ir.Function, b: ir.IRBuilder, gen: ir.Value, job: tuple, name: str, signal: bool):
        """Claim and run chunks of job ``gen`` until none is left; returns the
        builder after.  A claim is a compare-and-swap of the claim word
        (generation << 32 | chunks << 16 | next chunk).  The word alone
        decides, so a thread that read an older (or half of a newer) job can
        never take a chunk: a successful claim of job g happens before job
        g + 1 is written (g must complete first), so the job read before
        it is g's.  ``signal``: wake a sleeping caller when this thread
        completes the job's last chunk (workers)."""
        body, ctx, n, _ = job
        entry = b.block
        loop, claim, run, again, out = (
            fn.append_basic_block(f"{name}.{x}") for x in ("claim", "try", "run", "next", "out"))  # fmt: skip
        first = b.load_atomic(self.claim, "monotonic", 8)
        b.branch(loop)
        b = ir.IRBuilder(loop)
        word = b.phi(_i64)
        word.add_incoming(first, entry)
        chunk = b.trunc(b.and_(word, _c(_i64, 0xFFFF)), _i32)
        chunks = b.trunc(b.and_(b.lshr(word, _c(_i64, 16)), _c(_i64, 0xFFFF)), _i32)
        mine = b.icmp_unsigned("==", b.trunc(b.lshr(word, _c(_i64, 32)), _i32), gen)
        b.cbranch(b.and_(mine, b.icmp_unsigned("<", chunk, chunks)), claim, out)
        b = ir.IRBuilder(claim)
        pair = b.cmpxchg(self.claim, word, b.add(word, _c(_i64, 1)), "monotonic", "monotonic")
        word.add_incoming(b.extract_value(pair, 0), claim)
        b.cbranch(b.extract_value(pair, 1), run, loop)
        b = ir.IRBuilder(run)
        begin, end = self._chunk(b, chunk, chunks, n)
        b.call(body, [begin, end, ctx])
        # seq_cst: publishes what the body wrote (release) and orders before reading `joining`
        before = b.atomic_rmw("sub", self.pending, _c(_i32, 1), "seq_cst")
        if signal:
            last, woken = fn.append_basic_block(f"{name}.last"), None
            b.cbranch(b.icmp_signed("==", before, _c(_i32, 1)), last, again)
            b = ir.IRBuilder(last)
            woken = self._wake(fn, b, b.load_atomic(self.joining, "seq_cst", 4), self.done_cv, False, name)
            woken.branch(again)
        else:
            b.branch(again)
        b = ir.IRBuilder(again)
        word.add_incoming(b.load_atomic(self.claim, "monotonic", 8), again)
        b.branch(loop)
        return ir.IRBuilder(out)

    def worker(self) -> ir.Function:
        """void *worker(void *arg), arg = (job generation when created << 32) | index
        (1, 2, ...).  Worker k takes part in jobs of more than k chunks only:
        after the count was lowered, the surplus workers go back to sleep
        instead of competing for the few chunks."""
        fn = self._function("nnc_pool.worker", _ptr, [_ptr])
        entry, top, read = (fn.append_basic_block(x) for x in ("entry", "top", "read"))
        b = ir.IRBuilder(entry)
        arg = b.ptrtoint(fn.args[0], _i64)
        born, index = b.trunc(b.lshr(arg, _c(_i64, 32)), _i32), b.trunc(arg, _i32)
        b.branch(top)
        b = ir.IRBuilder(top)
        seen = b.phi(_i32)
        seen.add_incoming(born, entry)

        def polled(b: ir.IRBuilder) -> ir.Value:
            return b.icmp_unsigned("!=", b.load_atomic(self.gen, "monotonic", 4), seen)

        def posted(b: ir.IRBuilder) -> ir.Value:
            return b.icmp_unsigned("!=", b.load_atomic(self.gen, "seq_cst", 4), seen)

        def sleeping(b: ir.IRBuilder, enter: bool) -> None:
            b.atomic_rmw("add" if enter else "sub", self.sleepers, _c(_i32, 1), "seq_cst")

        spun, slow = self._spin(fn, b, polled, "idle", IDLE_SPIN_NS)
        spun.branch(read)
        woke = self._sleep_until(fn, slow, self.work_cv, posted, "idle", sleeping)
        woke.branch(read)
        b = ir.IRBuilder(read)
        gen = b.load_atomic(self.gen, "acquire", 4)  # the job and the data it reads, published by the caller
        job = tuple(b.load_atomic(self._job_field(b, k), "monotonic", 8, typ=t) for k, t in enumerate(self.job.value_type.elements))
        seen.add_incoming(gen, b.block)
        work = fn.append_basic_block("work")
        b.cbranch(b.icmp_unsigned("<", index, b.trunc(job[3], _i32)), work, top)  # a hint; claims decide
        b = self._run_chunks(fn, ir.IRBuilder(work), gen, job, "work", signal=True)
        seen.add_incoming(gen, b.block)
        b.branch(top)
        return fn

    def after_fork(self) -> ir.Function:
        """The child side of fork(): the workers and any job in flight stayed
        in the parent, so the pool starts over at its next use."""
        fn = self._function(AFTER_FORK, _void, [], internal=not self.in_process)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.store_atomic(_c(_i32, 0), self.ready, "monotonic", 4)
        b.store_atomic(_c(_i32, 0), self.busy, "monotonic", 4)
        b.store_atomic(_c(_i32, 0), self.sleepers, "monotonic", 4)
        b.store_atomic(_c(_i32, 0), self.joining, "monotonic", 4)
        b.ret_void()
        return fn

    def atfork_shim(self) -> ir.Function:
        """``int pthread_atfork(prepare, parent, child)`` for the artifact
        objects this process loads with MCJIT (glibc 2.34+ has it only in
        libc_nonshared.a, which MCJIT cannot resolve): it registers nothing,
        on purpose -- a handler registered from an MCJIT object would dangle
        once the object is freed.  Such an object's own pool then skips the
        reset after fork: a child runs its loops serially (the caller runs
        every chunk no worker claims), unless the fork caught the pool's
        mutex held by another thread."""
        fn = self._function(ATFORK_SHIM, _i32, [_ptr] * 3, internal=False)
        ir.IRBuilder(fn.append_basic_block("entry")).ret(_c(_i32, 0))
        return fn

    def start(self, worker: ir.Function, after_fork: ir.Function) -> ir.Function:
        """i32 start(i32 wanted), called holding the job slot: set up the
        pool in a new process (first use, or after fork), create the missing
        workers; returns how many chunks can run (<= wanted)."""
        fn = self._function("nnc_pool.start", _i32, [_i32])
        wanted = fn.args[0]
        entry, fresh, grow, create, made, done = (
            fn.append_basic_block(x) for x in ("entry", "fresh", "grow", "create", "made", "done"))  # fmt: skip
        b = ir.IRBuilder(entry)
        b.cbranch(b.icmp_signed("==", b.load_atomic(self.ready, "monotonic", 4), _c(_i32, 0)), fresh, grow)
        b = ir.IRBuilder(fresh)
        b.call(self.mutex_init, [self.mutex, _c(_ptr, None)])
        b.call(self.cond_init, [self.work_cv, _c(_ptr, None)])
        b.call(self.cond_init, [self.done_cv, _c(_ptr, None)])
        b.store_atomic(_c(_i32, 0), self.workers, "monotonic", 4)
        if not self.in_process:  # this process's Python registers the hook with os.register_at_fork
            with b.if_then(b.icmp_signed("==", b.load(self.registered, typ=_i32), _c(_i32, 0))):
                b.call(self.atfork, [_c(_ptr, None), _c(_ptr, None), after_fork])
                b.store(_c(_i32, 1), self.registered)
        b.store_atomic(_c(_i32, 1), self.ready, "monotonic", 4)
        b.branch(grow)
        b = ir.IRBuilder(grow)
        have = b.load_atomic(self.workers, "monotonic", 4)
        b.cbranch(b.icmp_signed("<", b.add(have, _c(_i32, 1)), wanted), create, done)
        b = ir.IRBuilder(create)
        sigset = ir.ArrayType(_i8, 128)
        all_signals, saved = b.alloca(sigset), b.alloca(sigset)
        all_signals.align = saved.align = 8
        if self.linux:  # workers inherit a full mask: signals go to the application's threads
            b.call(self.sigfillset, [all_signals])
            b.call(self.sigmask, [_c(_i32, _SIG_SETMASK), all_signals, saved])
        gen = b.shl(b.zext(b.load_atomic(self.gen, "monotonic", 4), _i64), _c(_i64, 32))
        first = b.add(have, _c(_i32, 1))
        loop, spawned = fn.append_basic_block("spawn"), fn.append_basic_block("spawned")
        b.branch(loop)
        b = ir.IRBuilder(loop)
        i = b.phi(_i32)
        i.add_incoming(first, create)
        arg = b.inttoptr(b.or_(gen, b.zext(i, _i64)), _ptr)
        tid = b.gep(self.tids, [_c(_i32, 0), i], source_etype=self.tids.value_type)
        rc = b.call(self.create, [tid, _c(_ptr, None), worker, arg])
        b.cbranch(b.icmp_signed("==", rc, _c(_i32, 0)), spawned, made)
        b = ir.IRBuilder(spawned)
        b.store_atomic(i, self.workers, "monotonic", 4)
        i_next = b.add(i, _c(_i32, 1))
        i.add_incoming(i_next, spawned)
        b.cbranch(b.icmp_signed("<", i_next, wanted), loop, made)
        b = ir.IRBuilder(made)
        if self.linux:
            b.call(self.sigmask, [_c(_i32, _SIG_SETMASK), saved, _c(_ptr, None)])
        b.branch(done)
        b = ir.IRBuilder(done)
        have = b.load_atomic(self.workers, "monotonic", 4)
        b.ret(self._min(b, wanted, b.add(have, _c(_i32, 1))))
        return fn

    def parallel_for(self, start: ir.Function, get_num_threads: ir.Function) -> ir.Function:
        """void nnc_parallel_for(body, ctx, n): see the module docstring."""
        fn = self._function(PARALLEL_FOR, _void, [_BODY_PTR, _ptr, _i64], internal=False)
        body, ctx, n = fn.args
        names = ("entry", "count", "serial", "claim", "claimed", "alone", "post", "release", "empty")
        blocks = {x: fn.append_basic_block(x) for x in names}
        b = ir.IRBuilder(blocks["entry"])
        b.cbranch(b.icmp_signed("<=", n, _c(_i64, 0)), blocks["empty"], blocks["count"])
        b = ir.IRBuilder(blocks["count"])
        threads = b.sext(b.call(get_num_threads, []), _i64)
        wanted = self._min(b, threads, n)
        b.cbranch(b.icmp_signed("<=", wanted, _c(_i64, 1)), blocks["serial"], blocks["claim"])
        b = ir.IRBuilder(blocks["serial"])
        b.call(body, [_c(_i64, 0), n, ctx])
        b.ret_void()
        b = ir.IRBuilder(blocks["claim"])  # the one job slot; busy (or nested): run serially
        pair = b.cmpxchg(self.busy, _c(_i32, 0), _c(_i32, 1), "acquire", "monotonic")
        b.cbranch(b.extract_value(pair, 1), blocks["claimed"], blocks["serial"])
        b = ir.IRBuilder(blocks["claimed"])
        chunks = b.call(start, [b.trunc(wanted, _i32)])
        b.cbranch(b.icmp_signed("<=", chunks, _c(_i32, 1)), blocks["alone"], blocks["post"])
        b = ir.IRBuilder(blocks["alone"])  # no worker could be created
        b.call(body, [_c(_i64, 0), n, ctx])
        b.store_atomic(_c(_i32, 0), self.busy, "release", 4)
        b.ret_void()
        b = ir.IRBuilder(blocks["post"])  # publish the job: no lock unless a worker sleeps
        for k, value in enumerate((body, ctx, n, b.zext(chunks, _i64))):
            b.store_atomic(value, self._job_field(b, k), "monotonic", 8)
        b.store_atomic(chunks, self.pending, "monotonic", 4)
        gen = b.add(b.load_atomic(self.gen, "monotonic", 4), _c(_i32, 1))
        word = b.or_(b.shl(b.zext(gen, _i64), _c(_i64, 32)), b.shl(b.zext(chunks, _i64), _c(_i64, 16)))
        b.store_atomic(word, self.claim, "monotonic", 8)
        b.store_atomic(gen, self.gen, "seq_cst", 4)  # release: the job and the body's inputs
        b = self._wake(fn, b, b.load_atomic(self.sleepers, "seq_cst", 4), self.work_cv, True, "post")
        b = self._run_chunks(fn, b, gen, (body, ctx, n, chunks), "share", signal=False)

        def all_done(b: ir.IRBuilder) -> ir.Value:
            return b.icmp_signed("==", b.load_atomic(self.pending, "acquire", 4), _c(_i32, 0))

        def done_sc(b: ir.IRBuilder) -> ir.Value:
            return b.icmp_signed("==", b.load_atomic(self.pending, "seq_cst", 4), _c(_i32, 0))

        def joining(b: ir.IRBuilder, enter: bool) -> None:
            b.store_atomic(_c(_i32, int(enter)), self.joining, "seq_cst", 4)

        spun, slow = self._spin(fn, b, all_done, "join", JOIN_SPIN_NS)
        spun.branch(blocks["release"])
        woke = self._sleep_until(fn, slow, self.done_cv, done_sc, "join", joining)
        woke.branch(blocks["release"])
        b = ir.IRBuilder(blocks["release"])
        b.store_atomic(_c(_i32, 0), self.busy, "release", 4)
        b.ret_void()
        ir.IRBuilder(blocks["empty"]).ret_void()
        return fn


def pool_module(target: Target, in_process: bool = False) -> ir.Module:
    """The pool as an LLVM IR module for ``target`` (see the module docstring).
    ``in_process``: the copy this process loads, whose globals stay external
    (:func:`use` reads the thread-count global) and whose fork hook
    (:data:`AFTER_FORK`) Python registers; an artifact's copy keeps its state
    internal and registers the hook with ``pthread_atfork`` itself (which
    libc unregisters when a library is unloaded).  The in-process copy also
    defines :data:`ATFORK_SHIM`."""
    mod = ir.Module(name="nnc_threadpool")
    mod.triple = target.triple
    mod.data_layout = str(target.machine().target_data)
    pool = _PoolBuilder(mod, target.triple, in_process)
    if in_process:
        pool.atfork_shim()
    get_num_threads = pool.get_num_threads(pool.default_threads())
    pool.set_num_threads()
    pool.parallel_for(pool.start(pool.worker(), pool.after_fork()), get_num_threads)
    return mod


def compile_module(target: Target, in_process: bool = False) -> llvm.ModuleRef:
    """The pool, optimised for ``target``; only :data:`API` (and, in process,
    :data:`AFTER_FORK` and :data:`ATFORK_SHIM`) stays external."""
    exported = (*API, AFTER_FORK, ATFORK_SHIM) if in_process else API
    with LLVM_LOCK:
        return optimize(str(pool_module(target, in_process)), target, exported=exported)


def in_process_object(target: Target) -> bytes:
    """The object code of the copy :func:`install` loads (``in_process``)."""
    with LLVM_LOCK:
        return emit_object(compile_module(target, in_process=True), target)


# -- this process's pool -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Loaded:
    """The pool compiled into this process (alive until it exits)."""

    native: NativeModule
    count: ctypes.c_int32  # a view of the pool's thread-count global
    set: Callable[[int], None]
    get: Callable[[], int]
    parallel_for: int  # the address of nnc_parallel_for
    after_fork: Callable[[], None]
    #: the object code loaded (:func:`in_process_object` for the host), which
    #: a compilation cache entry stores so that a process starting from the
    #: cache loads the pool instead of compiling it
    object_code: bytes


_loaded: _Loaded | None = None


def install(object_code: bytes | None = None) -> _Loaded:
    """Load the pool for the host once per process and register its
    functions as process symbols, so native code loaded afterwards resolves
    ``nnc_parallel_for`` / ``nnc_set_num_threads`` / ``nnc_get_num_threads``
    to it.  Cheap after the first call.

    ``object_code``: the pool's object as :func:`in_process_object` emits
    it for the host, by this very nnc (from a verified compilation cache
    entry, whose key covers nnc's sources and the target), loaded instead of
    compiling the pool from its IR (about 0.1 s); ignored once a pool is
    loaded."""
    global _loaded
    if _loaded is not None:
        return _loaded
    with LLVM_LOCK:
        if _loaded is None:
            target = Target.host()
            if object_code is None:
                object_code = in_process_object(target)
            native = NativeModule.from_object(object_code, target, entry=False)
            at = {name: native.address(name) for name in (*API, AFTER_FORK, ATFORK_SHIM)}
            count = native.global_address(_COUNT_GLOBAL)
            if not (count and all(at.values())):
                raise RuntimeError("the thread pool's object code lacks one of its symbols")
            loaded = _Loaded(
                native,
                ctypes.c_int32.from_address(count),
                ctypes.CFUNCTYPE(None, ctypes.c_int32)(at[SET_NUM_THREADS]),
                ctypes.CFUNCTYPE(ctypes.c_int32)(at[GET_NUM_THREADS]),
                at[PARALLEL_FOR],
                ctypes.CFUNCTYPE(None)(at[AFTER_FORK]),
                bytes(object_code),
            )
            for name in API:
                llvm.add_symbol(name, at[name])
            llvm.add_symbol("pthread_atfork", at[ATFORK_SHIM])  # what artifact objects call
            _loaded = loaded
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=_loaded.after_fork)
    return _loaded


def install_in_background() -> None:
    """Start :func:`install` in a daemon thread, unless the pool is loaded
    or already being loaded.

    Compiling the pool costs about 0.1 s of LLVM, which the first native code
    a process loads waits for.  A compilation that will load its code calls
    this before lowering: LLVM releases the GIL, so the pool compiles on
    another CPU while this process runs the Python passes and its workers
    wait for LLVM IR, instead of after them.  A failure here is dropped:
    the next :func:`install` (under the same lock, which then finds no pool)
    raises it where the code is loaded."""
    global _installing
    with _installing_lock:
        if _loaded is not None or (_installing is not None and _installing.is_alive()):
            return
        _installing = threading.Thread(target=_install_quietly, name="nnc-threadpool-install", daemon=True)
        _installing.start()


_installing: threading.Thread | None = None
_installing_lock = threading.Lock()


def _install_quietly() -> None:
    try:
        install()
    except Exception:  # noqa: BLE001 - install() raises it again where the code is loaded
        pass


def set_num_threads(n: int) -> None:
    """The process's thread count (``n < 1``: the default; at most MAX_THREADS)."""
    install().set(int(n))


def get_num_threads() -> int:
    return int(install().get())


def use(n: int) -> None:
    """Make the pool run ``n`` threads (1 <= n <= MAX_THREADS, validated by
    the caller) before a computation: one read of the native count, and the
    call only when it differs, so a computation pays ~0.1 us for it.  The
    count is per process: concurrent computations that ask for different
    counts get one or the other (outputs do not depend on it)."""
    pool = _loaded or install()
    if pool.count.value != n:
        pool.set(n)


_DECIMAL = re.compile(r"[0-9]+")


@functools.cache
def default_num_threads() -> int:
    """``NNC_NUM_THREADS`` if set to a positive decimal integer, else the
    CPUs this process may run on; at most :data:`MAX_THREADS`.  A set but
    malformed value (not digits, or 0) is ignored with a RuntimeWarning, as
    the native pool ignores it -- an environment variable should not make
    every computation fail.  Read once per process, as OpenMP reads
    ``OMP_NUM_THREADS`` (every Execution asks, and looking up an unset
    variable in ``os.environ`` costs microseconds); ``cache_clear()`` reads
    it again."""
    text = os.environ.get(ENV_VAR)
    if text:
        if _DECIMAL.fullmatch(text) and int(text) >= 1:
            return min(int(text), MAX_THREADS)
        warnings.warn(
            f"{ENV_VAR}={text!r} is not a positive decimal integer; ignored (using the CPU count)",
            RuntimeWarning,
            stacklevel=2,
        )
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_THREADS))
