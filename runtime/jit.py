"""LLVM IR -> optimised native code, through llvmlite.

:func:`optimize` runs LLVM's O2 pipeline (:data:`OPT_LEVEL`) for the target
machine (host CPU name and features unless told otherwise), :func:`emit_object` produces an ELF
relocatable object, and :class:`NativeModule` loads compiled code into this
process with MCJIT and hands out the ``nnc_run`` entry as a ctypes function.

A :class:`Target` may name another architecture (``nnc compile --target
aarch64-linux-android29``): optimising and emitting work for any triple LLVM
was built for (its back ends are registered on first use of a foreign
triple); only loading into this process needs the host's.
"""

from __future__ import annotations

import ctypes
import functools
import struct
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm

_init_lock = threading.Lock()
_initialized = False
_all_targets = False

#: Serialises every use of LLVM (parsing, optimising, emitting, MCJIT loading):
#: llvmlite works in LLVM's global context, which is not thread-safe.
LLVM_LOCK = threading.RLock()

#: int32_t nnc_run(void *const *inputs, void *const *outputs, const void *weights, void *arena)
#: of a module without the loop-timeout argument (hand-written IR); compiled
#: models take a fifth, ``uint64_t loop_timeout_ns`` (nnc.runtime.executable).
ENTRY_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def initialize() -> None:
    global _initialized
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized = True


def initialize_all() -> None:
    """Register every back end LLVM was built with (AArch64, ARM, ...), not
    only the host's: needed before a foreign triple's target machine."""
    global _all_targets
    initialize()
    with _init_lock:
        if not _all_targets:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            _all_targets = True


def host_triple() -> str:
    initialize()
    return llvm.get_process_triple()


def normalize_triple(triple: str) -> str:
    """``arch-vendor-os-env`` with the vendor filled in, as LLVM normalises
    the common spellings (``aarch64-linux-gnu`` is
    ``aarch64-unknown-linux-gnu``, ``arm64`` is ``aarch64``), to compare
    triples."""
    parts = triple.split("-")
    parts[0] = {"amd64": "x86_64", "arm64": "aarch64"}.get(parts[0], parts[0])
    if len(parts) >= 2 and parts[1] == "linux":
        parts.insert(1, "unknown")
    return "-".join(parts)


@dataclass(frozen=True)
class Target:
    """What LLVM generates code for: triple, CPU name (``""``: the
    architecture's generic CPU) and feature string in LLVM's spelling."""

    triple: str
    cpu: str
    features: str

    @staticmethod
    def host() -> Target:
        """This process's CPU (asked of LLVM once: every cache lookup needs
        it, and reading the feature string costs a third of a millisecond)."""
        return _host_target()

    @staticmethod
    def for_cpu(cpu: str) -> Target:
        initialize()
        return Target(llvm.get_process_triple(), cpu, "")

    @property
    def is_foreign(self) -> bool:
        """Whether the code cannot run in this process (another architecture
        or operating system than the host's)."""
        return normalize_triple(self.triple) != normalize_triple(host_triple())

    def machine(self) -> llvm.TargetMachine:
        if self.is_foreign:
            initialize_all()
        else:
            initialize()
        target = llvm.Target.from_triple(self.triple)
        return target.create_target_machine(
            cpu=self.cpu, features=self.features, opt=3, reloc="pic", codemodel="default"
        )


@functools.cache
def _host_target() -> Target:
    initialize()
    return Target(llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())


_machines = threading.local()


def shared_machine(target: Target) -> llvm.TargetMachine:
    """This thread's target machine for ``target``, created once: a new
    machine sets up its subtarget on first use (about a millisecond per
    optimisation and again per emission, as much as optimising a small
    model).  A machine keeps no state from one module to the next, so
    sharing it changes no generated code; it is per thread because LLVM's
    machines are not meant for concurrent use.  Not for MCJIT, which takes
    ownership of the machine it is given (:class:`NativeModule`)."""
    machines = getattr(_machines, "by_target", None)
    if machines is None:
        machines = _machines.by_target = {}
    tm = machines.get(target)
    if tm is None:
        tm = machines[target] = target.machine()
    return tm


#: LLVM's optimisation level.  O2 (with the loop and SLP vectorisers, which
#: llvmlite enables from O2) runs MobileNet v1/v2 as fast as O3 (the hot
#: kernels reach LLVM already vectorised and register-blocked) and halves the
#: time spent in LLVM's middle end and, with less unrolled code, in code
#: generation.
OPT_LEVEL = 2


def optimize(
    ir_text: str, target: Target, opt_level: int = OPT_LEVEL, exported: Collection[str] = ("nnc_run",)
) -> llvm.ModuleRef:
    """Parse and optimise LLVM IR with the new pass manager at ``opt_level``
    (a module of cold functions at level 0, below); only the functions named
    in ``exported`` keep external linkage."""
    initialize()
    tm = shared_machine(target)
    mod = llvm.parse_assembly(ir_text)
    mod.triple = target.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    # Only the entry point (or ``exported``) stays external: everything else may be inlined away.
    defined = [fn for fn in mod.functions if not fn.is_declaration]
    for fn in defined:
        if fn.name not in exported:
            fn.linkage = "internal"
    # A module whose every function is cold (nnc-mark-cold: a model whose
    # whole run is microseconds, as most conformance cases) skips LLVM's
    # middle end: its IR goes to code generation (which keeps the target
    # machine's level) as nnc wrote it.  Over 300 sampled conformance cases
    # that takes LLVM's time on such modules from 11.2 s to 4.3 s; each such
    # model runs at most about 10 us slower (see nnc.passes.mark_cold).  Its
    # internal functions are inlined where they may be (_inline_at_o0).
    if defined and all(_for_size(fn) for fn in defined):
        opt_level = 0
        _inline_at_o0(defined, exported)
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_vectorization = opt_level >= 2
    pto.slp_vectorization = opt_level >= 2
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(mod, pb)
    return mod


def _inline_at_o0(defined: list[llvm.ValueRef], exported: Collection[str]) -> None:
    """Mark the module's internal functions that may be inlined (not
    ``noinline``: shared kernels stay functions) ``alwaysinline``, the only
    inlining O0's pipeline does.  Code generation costs about 1.5 ms per
    function whatever its size, and a cold module is mostly ``main`` and the
    ``nnc_run`` that calls it once: over 324 cold conformance modules, 714
    functions became 390, and optimising and emitting them took 6-9% less.
    Inlining changes no arithmetic: the blocks of the inlined function keep
    their instructions, and ``nnc_run`` has no floating point to contract
    with them."""
    for fn in defined:
        if fn.name in exported or any(b"noinline" in attrs.split() for attrs in fn.attributes):
            continue
        fn.add_function_attribute("alwaysinline")


def _for_size(fn: llvm.ValueRef) -> bool:
    """Whether the function has LLVM's ``optsize`` attribute."""
    return any(b"optsize" in attrs.split() for attrs in fn.attributes)


def emit_object(mod: llvm.ModuleRef, target: Target) -> bytes:
    return shared_machine(target).emit_object(mod)


def emit_assembly(mod: llvm.ModuleRef, target: Target) -> str:
    return shared_machine(target).emit_assembly(mod)


#: how an ``ar`` archive starts, and its members' header (name, mtime, uid,
#: gid, mode, size, end mark)
_AR_MAGIC = b"!<arch>\n"
_AR_HEADER = struct.Struct("16s12s6s6s8s10s2s")


def bundle_objects(objects: Sequence[bytes]) -> bytes:
    """The object files of one compilation's parts (:mod:`nnc.runtime.partition`)
    as one ``bytes``: the object itself when there is one, else an ``ar``
    archive of them (the standard container: ``ar t`` lists it), which
    :class:`NativeModule` loads member by member and the cache stores like
    any object code."""
    if len(objects) == 1:
        return bytes(objects[0])
    out = [_AR_MAGIC]
    for k, obj in enumerate(objects):
        out.append(_AR_HEADER.pack(f"part{k}.o/".encode().ljust(16), b"0".ljust(12), b"0".ljust(6), b"0".ljust(6),
                                   b"644".ljust(8), str(len(obj)).encode().ljust(10), b"`\n"))  # fmt: skip
        out.append(bytes(obj))
        if len(obj) % 2:
            out.append(b"\n")
    return b"".join(out)


def unbundle_objects(data: bytes) -> list[bytes]:
    """The object files in what :func:`bundle_objects` made (ValueError for
    a truncated archive)."""
    if not data.startswith(_AR_MAGIC):
        return [data]
    view = memoryview(data)
    objects = []
    at = len(_AR_MAGIC)
    while at < len(data):
        if at + _AR_HEADER.size > len(data):
            raise ValueError("truncated object archive")
        *_, size, mark = _AR_HEADER.unpack_from(data, at)
        n = int(size)
        at += _AR_HEADER.size
        if mark != b"`\n" or at + n > len(data):
            raise ValueError("truncated object archive")
        objects.append(bytes(view[at : at + n]))
        at += n + n % 2
    return objects


class NativeModule:
    """Compiled code loaded into this process (kept alive with this object).
    ``entry`` is the ``nnc_run`` ctypes function (None for a module without
    one, e.g. the thread pool, when built with ``entry=False``)."""

    def __init__(self, mod: llvm.ModuleRef, target: Target, entry: bool = True):
        initialize()
        self._engine = llvm.create_mcjit_compiler(mod, target.machine())
        self._engine.finalize_object()
        self._module = mod
        self.entry: Callable[..., int] | None = None
        if entry:
            self._bind()

    @classmethod
    def from_object(cls, object_code: bytes, target: Target, entry: bool = True) -> NativeModule:
        """Load a relocatable object (as emitted by :func:`emit_object`) or
        several bundled by :func:`bundle_objects`, which then resolve each
        other's symbols; external symbols (libm) resolve against this process."""
        initialize()
        self = cls.__new__(cls)
        self._module = llvm.parse_assembly("")
        self._engine = llvm.create_mcjit_compiler(self._module, target.machine())
        for obj in unbundle_objects(object_code):
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self._engine.finalize_object()
        self.entry = None
        if entry:
            self._bind()
        return self

    def address(self, name: str) -> int:
        """The address of the function ``name`` (0 if the code has none)."""
        return self._engine.get_function_address(name)

    def global_address(self, name: str) -> int:
        """The address of the (external) global variable ``name``."""
        return self._engine.get_global_value_address(name)

    def _bind(self) -> None:
        addr = self.address("nnc_run")
        if not addr:
            raise RuntimeError("compiled module has no nnc_run")
        self.entry = ENTRY_SIGNATURE(addr)
