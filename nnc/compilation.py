"""``nnc.Compilation``: compiling a finished model (ANeuralNetworksCompilation_*).

nnc compiles ahead of time for the shapes it knows.  A model whose inputs are
all fully specified is compiled by :meth:`Compilation.finish`; inputs whose
dimensions are only given at execution (or scalar inputs, whose values decide
the code) make ``finish`` check support and defer code generation to the first
execution with each distinct input signature, which is then compiled once and
reused (:meth:`Compilation.executable`).

State machine: UNFINISHED after
creation (the setters work only here), then FINISHED-OK or FINISHED-FAILED
after :meth:`Compilation.finish`; executions, bursts, memory roles and the
preferred alignment/padding queries need FINISHED-OK.

Devices: ``Compilation(model)`` (ANeuralNetworksCompilation_create) compiles
for nnc's CPU device and leaves :attr:`Compilation.devices` None;
:meth:`Compilation.for_devices` (createForDevices) records the chosen devices
and never falls back: an operation none of them supports fails ``finish`` with
BAD_DATA, where ``Compilation(model)`` reports it as
:class:`UnsupportedOperationError` (OP_FAILED).  Only a ``for_devices``
compilation with exactly one device accepts :meth:`Compilation.set_timeout`.

Priority and deadline: compiler runs go through one gate that admits as many
as the machine has CPUs; when more wait, higher-priority compilations are
admitted first (then first come, first served).  With a timeout, ``finish``
gets a deadline that covers waiting at the gate, the cache lookup and the
compilation: it is checked before compiling and when ``finish`` ends, and a
passed deadline is MISSED_DEADLINE_PERSISTENT (as Android's CPU device and
sample driver report it).  The xDSL passes are not interrupted; the LLVM
stage runs in a worker process (:mod:`nnc.runtime.worker`) that is killed
when the deadline passes.

With :meth:`Compilation.set_caching`, each variant is first looked up in the
cache directory and, on a miss, saved there after compiling
(:mod:`nnc.runtime.cache`: key, file formats, integrity checks).  A hit
neither checks support again (see :meth:`Compilation._check_support`) nor
imports the compiler: :func:`nnc.device.compiler` loads ``nnc.driver``
(xDSL, the passes) on the first miss, so a process whose models all come
from the cache never pays for it.

Profiling (nnc extension): :meth:`Compilation.set_profiling` compiles code
that records the monotonic clock around each operation
(:mod:`nnc.passes.profile`); :meth:`nnc.Execution.get_operation_profile`
reads the times of a computation.  Profiled and plain code never share a
cache entry (the option is part of the key).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from nnc.device import check_device_entries, compiler, device_list, get_devices
from nnc.dialects.specialisation import specialised_inputs
from nnc.enums import BYTE_SIZE_OF_CACHE_TOKEN, UINT64_MAX, Preference, Priority, ResultCode
from nnc.errors import (
    INTERNAL_ERROR as INTERNAL_ERROR,
)
from nnc.errors import (
    BadDataError,
    BadStateError,
    NNError,
    OpFailedError,
    UnexpectedNullError,
    error_for,
    ndk,
)
from nnc.model import Model, enum_arg
from nnc.operand_types import OperandInfo, is_int
from nnc.profile import OperationDetails, operation_details
from nnc.runtime import cache, threadpool
from nnc.runtime.executable import Executable
from nnc.runtime.jit import Target

_FINISH = "ANeuralNetworksCompilation_finish"
_SET_PROFILING = "ANeuralNetworksCompilation_setProfiling"  # an nnc extension, named in the NDK's style
_OPERATION_PROFILE = "ANeuralNetworksExecution_getOperationProfile"  # an nnc extension
_cache_log = logging.getLogger("nnc.cache")


def _default_devices():
    return get_devices()[:1]


# -- deadlines and the priority gate ------------------------------------------------------------


@dataclass(frozen=True)
class Deadline:
    """A point on the monotonic clock (nanoseconds) by which work must end."""

    at_ns: int

    @staticmethod
    def after(duration_ns: int) -> Deadline | None:
        """The deadline ``duration_ns`` from now; None for 0 (no timeout).
        Python integers do not overflow, so UINT64_MAX is simply far away."""
        return Deadline(time.monotonic_ns() + duration_ns) if duration_ns else None

    def passed(self) -> bool:
        return time.monotonic_ns() >= self.at_ns

    def remaining_s(self) -> float:
        return max(0.0, (self.at_ns - time.monotonic_ns()) / 1e9)

    def missed(self, fn: str, when: str) -> NNError:
        return error_for(ResultCode.MISSED_DEADLINE_PERSISTENT, fn, f"the deadline passed {when}")

    def check(self, fn: str, when: str) -> None:
        if self.passed():
            raise self.missed(fn, when)


class PriorityGate:
    """Admits at most ``capacity`` compiler runs at once; waiting runs are
    admitted highest priority first, then in arrival order."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._cond = threading.Condition()
        self._running = 0
        self._waiting: list[tuple[int, int]] = []  # heap of (-priority, arrival)
        self._arrivals = itertools.count()

    @contextmanager
    def admit(self, priority: int, deadline: Deadline | None, fn: str) -> Iterator[None]:
        with self._cond:
            ticket = (-int(priority), next(self._arrivals))
            heapq.heappush(self._waiting, ticket)
            try:
                while not (self._running < self.capacity and self._waiting[0] == ticket):
                    if deadline is not None and deadline.passed():
                        raise deadline.missed(fn, "while waiting for the compiler")
                    self._cond.wait(None if deadline is None else deadline.remaining_s())
            except BaseException:
                self._waiting.remove(ticket)
                heapq.heapify(self._waiting)
                self._cond.notify_all()
                raise
            heapq.heappop(self._waiting)
            self._running += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)


#: The gate every compiler run of every Compilation goes through.
COMPILER_GATE = PriorityGate(os.cpu_count() or 1)


def _variant_key(infos: Sequence[OperandInfo]) -> tuple:
    """What tells the variants of one compilation apart: input shapes,
    omitted inputs and the values of specialised inputs."""
    return tuple(
        (i.dims, i.omitted, None if i.value is None else (i.value.dtype.str, i.value.tobytes())) for i in infos
    )


def require_usable(compilation: object, fn: str) -> Compilation:
    """The checks every object built on a compilation makes first (Execution,
    Burst): not None, an nnc Compilation, finished successfully and
    not closed."""
    if compilation is None:
        raise UnexpectedNullError(fn, "the compilation is null")
    if not isinstance(compilation, Compilation):
        raise BadDataError(fn, f"expected an nnc.Compilation, got {type(compilation).__name__}")
    if not compilation.finished or compilation.failed or compilation.closed:
        raise BadStateError(fn, "the compilation is not finished, its finish failed, or it was closed")
    return compilation


class Compilation:
    """ANeuralNetworksCompilation for nnc's devices."""

    def __init__(self, model: Model):
        """ANeuralNetworksCompilation_create: compile ``model`` for nnc's CPU
        device (``devices`` stays None)."""
        self._setup("ANeuralNetworksCompilation_create", model, None)

    @classmethod
    def for_devices(cls, model: Model, devices) -> Compilation:
        """ANeuralNetworksCompilation_createForDevices, with Android's checks
        in Android's order: a None model or device list or a None
        entry is UNEXPECTED_NULL; an empty list, a device listed twice or an
        object that is not one of :func:`nnc.get_devices` is BAD_DATA; an
        unfinished or invalid model is BAD_STATE."""
        fn = "ANeuralNetworksCompilation_createForDevices"
        if model is None:
            raise UnexpectedNullError(fn, "model is null")
        devs = check_device_entries(fn, device_list(fn, devices))
        self = cls.__new__(cls)
        self._setup(fn, model, devs)
        return self

    def _setup(self, fn: str, model: Model, devices) -> None:
        if model is None:
            raise UnexpectedNullError(fn, "model is null")
        if not isinstance(model, Model):
            raise BadDataError(fn, f"expected an nnc.Model, got {type(model).__name__}")
        if model.closed or not model.finished or model.invalid:
            raise BadStateError(fn, "the model is not finished (or its finish failed, or it was closed)")
        self.model = model
        #: None for Compilation(model); the chosen devices for for_devices()
        self.devices: tuple | None = devices
        self.preference = Preference.FAST_SINGLE_ANSWER
        self.priority = Priority.MEDIUM
        self.timeout_ns = 0
        self.cache_dir: str | None = None
        self.cache_token: bytes | None = None
        #: (event, key, detail) per cache lookup or save: "hit", "miss",
        #: "rejected" (files failed verification), "saved", "save-failed", ...
        self.cache_events: list[tuple[str, str, str]] = []
        self.finished = False
        self.failed = False
        self._closed = False
        self._variants: dict[tuple, object] = {}
        #: variant key -> its operations as shape inference sees them (for profiles)
        self._operation_details: dict[tuple, list[OperationDetails]] = {}
        self.profiling = False
        #: whether _check_support passed
        self._supported = False
        self._lock = threading.Lock()
        self.specialised = specialised_inputs(model)

    @property
    def closed(self) -> bool:
        """Whether close() (ANeuralNetworksCompilation_free) was called."""
        return self._closed

    @property
    def target_devices(self) -> tuple:
        """The devices this compilation compiles for."""
        return self.devices if self.devices is not None else _default_devices()

    def _preparing(self, fn: str) -> None:
        if self.finished or self.failed:
            raise BadStateError(fn, "the compilation is already finished")

    @ndk("ANeuralNetworksCompilation_setPreference")
    def set_preference(self, preference: Preference | int) -> None:
        """ANeuralNetworksCompilation_setPreference: 0, 1 or 2."""
        fn = "ANeuralNetworksCompilation_setPreference"
        self._preparing(fn)
        self.preference = enum_arg(fn, Preference, preference, "preference")

    @ndk("ANeuralNetworksCompilation_setPriority")
    def set_priority(self, priority: Priority | int) -> None:
        """ANeuralNetworksCompilation_setPriority: 90, 100 or 110."""
        fn = "ANeuralNetworksCompilation_setPriority"
        self._preparing(fn)
        self.priority = enum_arg(fn, Priority, priority, "priority")

    @ndk("ANeuralNetworksCompilation_setTimeout")
    def set_timeout(self, duration_ns: int) -> None:
        """ANeuralNetworksCompilation_setTimeout: only on a for_devices
        compilation with exactly one device (else BAD_DATA); 0 means no
        timeout; any uint64 is accepted."""
        fn = "ANeuralNetworksCompilation_setTimeout"
        self._preparing(fn)
        if self.devices is None or len(self.devices) != 1:
            raise BadDataError(fn, "only a compilation created by for_devices with exactly one device takes a timeout")
        if not is_int(duration_ns) or not 0 <= int(duration_ns) <= UINT64_MAX:
            raise BadDataError(fn, f"invalid timeout {duration_ns!r} (nanoseconds, a uint64)")
        self.timeout_ns = int(duration_ns)

    @ndk("ANeuralNetworksCompilation_setCaching")
    def set_caching(self, cache_dir: str | os.PathLike, token: bytes) -> None:
        """ANeuralNetworksCompilation_setCaching: records the directory and
        the token only; nothing is read or written before finish.

        The token must be a bytes-like object of exactly
        ``BYTE_SIZE_OF_CACHE_TOKEN`` (32) bytes; anything else is BAD_DATA,
        ``None`` UNEXPECTED_NULL."""
        fn = "ANeuralNetworksCompilation_setCaching"
        if cache_dir is None or token is None:
            raise UnexpectedNullError(fn, "cache directory and token must not be null")
        self._preparing(fn)
        try:
            directory = os.fsdecode(os.fspath(cache_dir))
        except TypeError:
            raise BadDataError(fn, f"the cache directory must be a path, got {type(cache_dir).__name__}") from None
        try:
            view = memoryview(token)
        except TypeError:
            raise BadDataError(fn, f"the token must be bytes-like, got {type(token).__name__}") from None
        if view.nbytes != BYTE_SIZE_OF_CACHE_TOKEN:
            raise BadDataError(fn, f"token must be {BYTE_SIZE_OF_CACHE_TOKEN} bytes, got {view.nbytes}")
        self.cache_dir, self.cache_token = directory, view.tobytes()

    @ndk(_SET_PROFILING)
    def set_profiling(self, enable: bool) -> None:
        """nnc extension (named in the NDK's style): compile code that
        records the time of each operation of the main graph, read with
        :meth:`nnc.Execution.get_operation_profile`.  Only before
        :meth:`finish` (BAD_STATE after); ``enable`` must be a bool (BAD_DATA).
        Without it the code has no timing code at all."""
        self._preparing(_SET_PROFILING)
        if not isinstance(enable, bool):
            raise BadDataError(_SET_PROFILING, f"enable must be a bool, got {type(enable).__name__}")
        self.profiling = enable

    @ndk("ANeuralNetworksCompilation_finish")
    def finish(self) -> None:
        """ANeuralNetworksCompilation_finish: check every operation is
        supported; compile now if shapes allow.  Any failure leaves the
        compilation FINISHED-FAILED (a second finish is BAD_STATE)."""
        self._preparing(_FINISH)
        deadline = Deadline.after(self.timeout_ns)
        try:
            infos = [self.model.operands[i].info() for i in self.model.inputs]
            if not self.specialised and all(i.shape_known for i in infos):
                infos = [OperandInfo(i.type, i.dims, i.scale, i.zero_point, i.channel_quant) for i in infos]
                self.executable(infos, _FINISH, deadline=deadline)  # checks support unless the cache hits
            else:
                self._check_support()
            if deadline is not None:
                deadline.check(_FINISH, "before the compilation finished")
        except NNError:
            self.failed = True
            raise
        self.finished = True

    def _check_support(self) -> None:
        """Compilation(model): UnsupportedOperationError (OP_FAILED).  A
        for_devices compilation has no fallback device: BAD_DATA, as Android
        reports an operation none of the chosen devices supports.

        Checked once, by ``finish``: before compiling its variant (so not on
        a cache hit: an entry exists only for a model, devices and compiler
        that passed this check, and the key covers all three -- and asking
        the compiler's lowering table would cost more than the rest of a
        hit), or at once when ``finish`` compiles nothing."""
        if self._supported:
            return
        try:
            if self.model.support_report is not None:
                self.model.support_report(_FINISH)
            compiler().check_support(self.model, _FINISH, self.target_devices)
        except OpFailedError as e:  # the report's UnsupportedOperatorsError, check_support's UnsupportedOperationError
            if self.devices is None:
                raise
            names = ", ".join(d.name for d in self.devices)
            raise BadDataError(_FINISH, f"no chosen device ({names}) supports {e.message}") from e
        self._supported = True

    # -- preferred memory alignment and padding (feature level 5) -------------------------------
    def _preferred(self, fn: str, index: object, roles: list[int], what: str, attr: str) -> int:
        """BAD_STATE unless FINISHED-OK, BAD_DATA for an index out of
        range; the largest value any target device prefers (a power of 2)."""
        if self.closed or not self.finished:
            raise BadStateError(fn, "the compilation is not finished, or its finish failed")
        if not is_int(index) or not 0 <= int(index) < len(roles):
            raise BadDataError(fn, f"{what} index {index!r} out of range [0, {len(roles)})")
        return max(getattr(d, attr) for d in self.target_devices)

    @ndk("ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput")
    def get_preferred_memory_alignment_for_input(self, index: int) -> int:
        return self._preferred("ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput", index,
                               self.model.inputs, "input", "preferred_memory_alignment")  # fmt: skip

    @ndk("ANeuralNetworksCompilation_getPreferredMemoryAlignmentForOutput")
    def get_preferred_memory_alignment_for_output(self, index: int) -> int:
        return self._preferred("ANeuralNetworksCompilation_getPreferredMemoryAlignmentForOutput", index,
                               self.model.outputs, "output", "preferred_memory_alignment")  # fmt: skip

    @ndk("ANeuralNetworksCompilation_getPreferredMemoryPaddingForInput")
    def get_preferred_memory_padding_for_input(self, index: int) -> int:
        return self._preferred("ANeuralNetworksCompilation_getPreferredMemoryPaddingForInput", index,
                               self.model.inputs, "input", "preferred_memory_padding")  # fmt: skip

    @ndk("ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput")
    def get_preferred_memory_padding_for_output(self, index: int) -> int:
        return self._preferred("ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput", index,
                               self.model.outputs, "output", "preferred_memory_padding")  # fmt: skip

    # -- variants ---------------------------------------------------------------------------------
    def executable(self, infos: Sequence[OperandInfo], fn: str, deadline: Deadline | None = None):
        """The compiled variant for these input infos (compiled on first use,
        through the priority gate, within ``deadline`` if given)."""
        key = _variant_key(infos)
        with self._lock:
            exe = self._variants.get(key)
            if exe is None:
                exe = self._prepare(infos, fn, deadline)
                self._variants[key] = exe
        return exe

    def operation_details(self, infos: Sequence[OperandInfo]) -> list[OperationDetails]:
        """The main graph's operations (type, shapes shape inference gives
        them, MACs) for the variant of these input infos; computed once per
        variant (it runs the compiler's front end), for profiles."""
        key = _variant_key(infos)
        with self._lock:
            details = self._operation_details.get(key)
        if details is None:
            driver = compiler()
            with driver.compiler_errors(self.model, _OPERATION_PROFILE):
                details = operation_details(*driver.operation_calls(self.model, infos))
            with self._lock:
                self._operation_details[key] = details
        return details

    # -- compilation cache (setCaching; see nnc.runtime.cache) -------------------------------------
    def _prepare(self, infos: Sequence[OperandInfo], fn: str, deadline: Deadline | None = None):
        """Load the variant from the cache directory, or compile it (and save
        it there).  Cache problems are misses: they never fail the call.  The
        deadline covers the lookup as well as the compilation."""
        entry = self._cache_entry(infos)
        if entry is not None:
            exe = self._cache_load(*entry)
            if exe is not None:
                return exe
        self._check_support()
        if deadline is not None:
            deadline.check(fn, "before compiling")
        with COMPILER_GATE.admit(self.priority, deadline, fn):
            exe = self._compile(infos, fn, deadline)
        if entry is not None:
            self._cache_save(entry[0], entry[1], exe)
        return exe

    def _cache_event(self, event: str, key: str, detail: str = "") -> None:
        self.cache_events.append((event, key, detail))
        _cache_log.debug("%s %s %s", event, key, detail)

    def _cache_entry(self, infos: Sequence[OperandInfo]):
        """(key, target) of the cache entry for this variant, or None when
        caching is off or the variant is specialised to input values."""
        if self.cache_dir is None or self.cache_token is None:
            return None
        if any(i.value is not None for i in infos):
            return None  # one entry per input value would grow without bound
        if any(d.number_of_cache_files_needed == (0, 0) for d in self.target_devices):
            return None  # a device without caching is never asked to load or save
        try:
            target = Target.host()
            key = cache.cache_key(
                self.cache_token, self.model, infos,
                preference=self.preference, priority=self.priority, target=target,
                devices=[(d.name, d.version) for d in self.target_devices], profile=self.profiling,
                index_dir=self.cache_dir,
            )  # fmt: skip
        except Exception as e:  # noqa: BLE001 - caching is best effort
            self._cache_event("disabled", "", f"{type(e).__name__}: {e}")
            return None
        return key, target

    def _cache_load(self, key: str, target):
        assert self.cache_dir is not None  # _cache_key found a key
        try:
            code = cache.load(self.cache_dir, key, target)
        except cache.CacheCorrupt as e:
            self._cache_event("rejected", key, str(e))
            return None
        except cache.CacheMiss as e:
            self._cache_event("miss", key, str(e))
            return None
        except Exception as e:  # noqa: BLE001 - a bad entry is a miss, never an error
            self._cache_event("rejected", key, f"{type(e).__name__}: {e}")
            return None
        try:
            exe = Executable(code)
        except Exception as e:  # noqa: BLE001 - verified but unloadable: recompile
            self._cache_event("rejected", key, f"cannot load the object code: {type(e).__name__}: {e}")
            return None
        self._cache_event("hit", key)
        return exe

    def _cache_save(self, key: str, target, exe) -> None:
        code = getattr(exe, "code", None)
        if code is None or code.target != target:
            self._cache_event("save-skipped", key, "compiled for another target")
            return
        assert self.cache_dir is not None  # _cache_key found a key
        try:
            cache.save(self.cache_dir, key, code)
        except Exception as e:  # noqa: BLE001 - saving errors never fail the compilation
            self._cache_event("save-failed", key, f"{type(e).__name__}: {e}")
            return
        self._cache_event("saved", key)

    def _compile(self, infos: Sequence[OperandInfo], fn: str, deadline: Deadline | None = None):
        """Run the compiler; with a deadline, the LLVM stage gets the time
        left and a stage killed for running past it is a missed deadline."""
        try:
            options = {"profile": True} if self.profiling else {}
            driver = compiler()  # imported here, on the first miss: a hit never needs the compiler
            threadpool.install_in_background()  # compiled while the model is lowered
            with driver.compiler_errors(self.model, fn):
                if deadline is None:
                    return driver.compile_model(self.model, infos, **options)
                return driver.compile_model(self.model, infos, timeout_s=deadline.remaining_s(), **options)
        except NNError as e:
            if deadline is not None and deadline.passed():
                raise deadline.missed(fn, "while compiling") from e
            raise

    # -- lifetime ------------------------------------------------------------------------------------
    @ndk("ANeuralNetworksCompilation_free", free=True)
    def close(self) -> None:
        """ANeuralNetworksCompilation_free.  Executions and bursts keep their
        own reference, so closing never pulls code from under a running
        computation; later calls on this object are BAD_STATE.  Closing twice
        (or an unfinished compilation) is harmless."""
        self._closed = True

    def __enter__(self) -> Compilation:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
