"""Native artifacts: a compiled model as an object file or shared library that
C code calls without Python (``nnc compile``).

An artifact is the model's optimised native code (``nnc_run``, exactly as the
Python runtime generates it) linked at the LLVM level with a small *ABI
module* generated here with ``llvmlite.ir``:

``nnc_run``, ``nnc_run_with_loop_timeout``
    the model: the runtime's optimised entry (which takes the WHILE loop
    timeout) is exported as ``nnc_run_with_loop_timeout``; ``nnc_run`` calls
    it with the default loop timeout (2 s, ``NNC_MODEL_LOOP_TIMEOUT_NS``);
``nnc_model_run``, ``nnc_model_run_with_dims``
    ``nnc_run`` plus a 64-byte aligned heap arena, and the embedded weights
    when the caller passes none; the second also writes the outputs' actual
    dimensions (``nnc_model_output_actual_dims`` of its arena);
``nnc_model_output_dynamic_axis``, ``nnc_model_output_actual_dims``
    outputs whose size depends on the data: which dimension, and the actual
    dimensions after a run, read from the counts the code left in its arena
    (:mod:`nnc.passes.counts`);
``nnc_model_num_inputs``, ``nnc_model_input_type``/``rank``/``dims``/``size``/``scale``/``zero_point``
    (and the ``output`` counterparts), ``nnc_model_arena_size``,
    ``nnc_model_weights_size``, ``nnc_model_embedded_weights``, ``nnc_model_abi_version``,
``nnc_model_target_triple``
    constant tables behind bounds-checked accessors;
``nnc_model_check_weights``
    CRC-32 (zlib's) of a caller-loaded weights buffer against the one the
    code was compiled with;
``nnc_model_set_num_threads``, ``nnc_model_get_num_threads``
    the thread count of the artifact's own thread pool
    (:mod:`nnc.runtime.threadpool`, linked in with internal linkage).

The model's functions are optimised first (``runtime.jit.optimize``, which
internalises everything but ``nnc_run``), that ``nnc_run`` is renamed
``nnc_run_with_loop_timeout`` and the ABI module is linked in afterwards, so
its machine code is the same as the runtime's for the same target.
:func:`header_text` documents the result for C callers (the text is the
template ``artifact_header.h.in``, package data next to this module), and
:func:`link_shared` turns the object into a shared library with the system C
compiler, or for another target (``nnc compile --target
aarch64-linux-gnu``) a cross compiler or ``ld.lld`` (:func:`find_linker`).
The ABI module and the thread pool are generated for the artifact's target
triple and data layout, so an artifact for AArch64 Linux or Android is built
on any machine.

Only the native side is here: choosing the target CPU is
:mod:`nnc.runtime.cpu_probe`, compiling a model up to LLVM IR and the whole
``nnc compile`` job is the driver's (:mod:`nnc.driver`), and the progress
indicator is the command line's (:mod:`nnc.cli`), which passes it in.
The ABI constants are :mod:`nnc.runtime.abi`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Protocol

import llvmlite.binding as llvm
from llvmlite import ir

from nnc.enums import DEFAULT_LOOP_TIMEOUT_NS, MAXIMUM_LOOP_TIMEOUT_NS, OperandType
from nnc.operand_types import OperandInfo, dtype_of
from nnc.runtime import threadpool
from nnc.runtime.abi import ABI_VERSION, ALIGNMENT, ARTIFACT_ENTRY_NAME, COUNTS_SYMBOL, STATUS
from nnc.runtime.executable import CompiledIR, NativeCode
from nnc.runtime.jit import Target, emit_object, optimize

#: The C header of an artifact, a ``string.Template`` (package data of nnc.runtime).
_HEADER_TEMPLATE = Template(resources.files(__package__).joinpath("artifact_header.h.in").read_text(encoding="utf-8"))


class Progress(Protocol):
    """What the build reports its stages to (the CLI's progress indicator)."""

    def stage(self, name: str) -> None: ...


class ArtifactError(Exception):
    """An artifact could not be built or written (``nnc compile`` exit status 1)."""


class ArtifactUsageError(ArtifactError):
    """The request cannot be met: an input's shape or value is only known at
    execution, the target CPU is unknown, or two output files would be the
    same.  The command line reports this as bad usage (exit status 2)."""


# -- the ABI module ---------------------------------------------------------------------------------


def _pointer_bits(data_layout: str) -> int:
    m = re.search(r"(?:^|-)p(?:0)?:(\d+)", data_layout)
    return int(m.group(1)) if m else 64


def abi_module(code: CompiledIR, target: Target, embed_weights: bool) -> ir.Module:
    """The artifact's C ABI around an external ``nnc_run`` (see the module docstring)."""
    tm = target.machine()
    data_layout = str(tm.target_data)
    mod = ir.Module(name="nnc_abi")
    mod.triple = target.triple
    mod.data_layout = data_layout
    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    size_t = ir.IntType(_pointer_bits(data_layout))
    ptr = ir.PointerType()
    f32 = ir.FloatType()

    def const_global(name: str, ty: ir.Type, value, align: int | None = None) -> ir.GlobalVariable:
        g = ir.GlobalVariable(mod, ty, name)
        g.global_constant = True
        g.linkage = "private"
        g.unnamed_addr = True
        g.initializer = ir.Constant(ty, value)
        if align:
            g.align = align
        return g

    def constant_fn(name: str, ty: ir.Type, value) -> None:
        fn = ir.Function(mod, ir.FunctionType(ty, []), name)
        ir.IRBuilder(fn.append_basic_block("entry")).ret(value if isinstance(value, ir.Value) else ir.Constant(ty, value))

    def table_fn(name: str, ty: ir.Type, values: list, default) -> None:
        """ty name(int index): values[index], or default when out of range."""
        fn = ir.Function(mod, ir.FunctionType(ty, [i32]), name)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        dflt = default if isinstance(default, ir.Value) else ir.Constant(ty, default)
        if not values:
            b.ret(dflt)
            return
        table = const_global(f"{name}.table", ir.ArrayType(ty, len(values)), values)
        inside = b.icmp_unsigned("<", fn.args[0], ir.Constant(i32, len(values)))
        index = b.zext(b.select(inside, fn.args[0], ir.Constant(i32, 0)), i64)
        value = b.load(b.gep(table, [ir.Constant(i64, 0), index], inbounds=True), typ=ty)
        b.ret(b.select(inside, value, dflt))

    constant_fn("nnc_model_abi_version", i32, ABI_VERSION)
    # const char *nnc_model_target_triple(void): what the code was generated for
    text = bytearray(target.triple.encode() + b"\0")
    constant_fn("nnc_model_target_triple", ptr, const_global("nnc_model.triple", ir.ArrayType(i8, len(text)), text))
    for kind, infos in (("input", code.inputs), ("output", code.outputs)):
        constant_fn(f"nnc_model_num_{kind}s", i32, len(infos))
        table_fn(f"nnc_model_{kind}_type", i32, [int(i.type) for i in infos], -1)
        table_fn(f"nnc_model_{kind}_rank", i32, [len(i.dims or ()) for i in infos], -1)
        dims = [
            const_global(f"nnc_model_{kind}_{k}.dims", ir.ArrayType(i32, len(i.dims or ())), list(i.dims or ()))
            for k, i in enumerate(infos)
        ]
        table_fn(f"nnc_model_{kind}_dims", ptr, dims, ir.Constant(ptr, None))
        table_fn(f"nnc_model_{kind}_size", size_t, [i.byte_size for i in infos], 0)
        table_fn(f"nnc_model_{kind}_scale", f32, [float(i.scale) for i in infos], 0.0)
        table_fn(f"nnc_model_{kind}_zero_point", i32, [int(i.zero_point) for i in infos], 0)
    # int nnc_model_output_dynamic_axis(int index): the data-dependent dimension, -1 if none
    table_fn("nnc_model_output_dynamic_axis", i32, [-1 if o.dynamic is None else o.dynamic.axis for o in code.outputs], -1)

    arena = -(-code.arena_size // ALIGNMENT) * ALIGNMENT
    weights_size = len(code.weights)
    constant_fn("nnc_model_arena_size", size_t, arena)
    constant_fn("nnc_model_weights_size", size_t, weights_size)
    embedded = None
    if embed_weights:
        ty = ir.ArrayType(i8, max(weights_size, 1))
        embedded = const_global("nnc_model.weights", ty, bytearray(code.weights or b"\0"), align=ALIGNMENT)
    constant_fn("nnc_model_embedded_weights", ptr, embedded if embedded is not None else ir.Constant(ptr, None))

    # int nnc_model_check_weights(const void *weights, size_t size): size and CRC-32 (zlib's)
    fn = ir.Function(mod, ir.FunctionType(i32, [ptr, size_t]), "nnc_model_check_weights")
    w, n = fn.args
    ok, fail = ir.Constant(i32, STATUS["NNC_MODEL_OK"]), ir.Constant(i32, STATUS["NNC_MODEL_ERROR_BAD_WEIGHTS"])
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    size_ok = b.icmp_unsigned("==", n, ir.Constant(size_t, weights_size))
    if weights_size == 0:
        b.ret(b.select(size_ok, ok, fail))
    else:
        check, loop, done, bad = (fn.append_basic_block(x) for x in ("check", "loop", "done", "bad"))
        b.cbranch(size_ok, check, bad)
        b = ir.IRBuilder(check)
        b.cbranch(b.icmp_unsigned("==", w, ir.Constant(ptr, None)), bad, loop)
        crc_table = const_global("nnc_model.crc32", ir.ArrayType(i32, 256), _crc32_table())
        b = ir.IRBuilder(loop)
        i = b.phi(size_t)
        crc = b.phi(i32)
        byte = b.zext(b.load(b.gep(w, [i], inbounds=True, source_etype=i8), typ=i8), i32)
        slot = b.zext(b.and_(b.xor(crc, byte), ir.Constant(i32, 0xFF)), i64)
        entry_val = b.load(b.gep(crc_table, [ir.Constant(i64, 0), slot], inbounds=True), typ=i32)
        crc_next = b.xor(entry_val, b.lshr(crc, ir.Constant(i32, 8)))
        i_next = b.add(i, ir.Constant(size_t, 1))
        i.add_incoming(ir.Constant(size_t, 0), check)
        i.add_incoming(i_next, loop)
        crc.add_incoming(ir.Constant(i32, 0xFFFFFFFF), check)
        crc.add_incoming(crc_next, loop)
        b.cbranch(b.icmp_unsigned("==", i_next, ir.Constant(size_t, weights_size)), done, loop)
        b = ir.IRBuilder(done)
        final = b.xor(crc_next, ir.Constant(i32, 0xFFFFFFFF))
        b.ret(b.select(b.icmp_unsigned("==", final, ir.Constant(i32, zlib.crc32(code.weights))), ok, fail))
        ir.IRBuilder(bad).ret(fail)

    # int32_t nnc_run(inputs, outputs, weights, arena): the default loop timeout
    timed = ir.Function(mod, ir.FunctionType(i32, [ptr] * 4 + [i64]), ARTIFACT_ENTRY_NAME)
    nnc_run = ir.Function(mod, ir.FunctionType(i32, [ptr] * 4), "nnc_run")
    b = ir.IRBuilder(nnc_run.append_basic_block("entry"))
    b.ret(b.call(timed, [*nnc_run.args, ir.Constant(i64, DEFAULT_LOOP_TIMEOUT_NS)]))

    actual_dims = _actual_dims_fn(mod, code)

    # int nnc_model_run_with_dims(const void *const *inputs, void *const *outputs, const void *weights,
    #                             uint32_t *dims): nnc_model_run, then the outputs' actual dimensions
    posix_memalign = ir.Function(mod, ir.FunctionType(i32, [ptr, size_t, size_t]), "posix_memalign")
    free = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr]), "free")
    fn = ir.Function(mod, ir.FunctionType(i32, [ptr, ptr, ptr, ptr]), "nnc_model_run_with_dims")
    ins, outs, w, dims_out = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    is_null = b.icmp_unsigned("==", w, ir.Constant(ptr, None))
    if embedded is not None:
        w = b.select(is_null, embedded, w)
    elif weights_size:
        have, missing = fn.append_basic_block("have_weights"), fn.append_basic_block("no_weights")
        b.cbranch(is_null, missing, have)
        ir.IRBuilder(missing).ret(ir.Constant(i32, STATUS["NNC_MODEL_ERROR_NO_WEIGHTS"]))
        b = ir.IRBuilder(have)
    if arena:
        slot = b.alloca(ptr)
        rc = b.call(posix_memalign, [slot, ir.Constant(size_t, ALIGNMENT), ir.Constant(size_t, arena)])
        got, oom = fn.append_basic_block("arena"), fn.append_basic_block("out_of_memory")
        b.cbranch(b.icmp_signed("==", rc, ir.Constant(i32, 0)), got, oom)
        ir.IRBuilder(oom).ret(ir.Constant(i32, STATUS["NNC_MODEL_ERROR_OUT_OF_MEMORY"]))
        b = ir.IRBuilder(got)
        mem = b.load(slot, typ=ptr)
        status = b.call(nnc_run, [ins, outs, w, mem])
        b.call(actual_dims, [mem, dims_out])
        b.call(free, [mem])
    else:
        status = b.call(nnc_run, [ins, outs, w, ir.Constant(ptr, None)])
        b.call(actual_dims, [ir.Constant(ptr, None), dims_out])
    b.ret(status)

    # int nnc_model_run(const void *const *inputs, void *const *outputs, const void *weights)
    run = ir.Function(mod, ir.FunctionType(i32, [ptr, ptr, ptr]), "nnc_model_run")
    b = ir.IRBuilder(run.append_basic_block("entry"))
    b.ret(b.call(fn, [*run.args, ir.Constant(ptr, None)]))

    # void nnc_model_set_num_threads(int n), int nnc_model_get_num_threads(void): the linked-in pool's
    set_threads = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i32]), threadpool.SET_NUM_THREADS)
    get_threads = ir.Function(mod, ir.FunctionType(i32, []), threadpool.GET_NUM_THREADS)
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i32]), "nnc_model_set_num_threads")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.call(set_threads, fn.args)
    b.ret_void()
    fn = ir.Function(mod, ir.FunctionType(i32, []), "nnc_model_get_num_threads")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.call(get_threads, []))
    return mod


def _actual_dims_fn(mod: ir.Module, code: CompiledIR) -> ir.Function:
    """``void nnc_model_output_actual_dims(const void *arena, uint32_t *dims)``:
    every output's dimensions after a run that used ``arena``, one entry per
    dimension of output 0, then output 1, ... (the sum of the ranks); a
    data-dependent dimension (``nnc_model_output_dynamic_axis``) is
    ``factor * counts[count]`` read from the arena where the code's
    ``nnc_counts_layout`` says (clamped to the bound), the others are the
    static ones.  Nothing is written when ``dims`` is NULL."""
    i8, i32, i64, ptr = ir.IntType(8), ir.IntType(32), ir.IntType(64), ir.PointerType()
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr, ptr]), "nnc_model_output_actual_dims")
    arena, dims = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    body, done = fn.append_basic_block("body"), fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("==", dims, ir.Constant(ptr, None)), done, body)
    b = ir.IRBuilder(body)
    offset = None
    if any(o.dynamic is not None for o in code.outputs):
        layout = ir.GlobalVariable(mod, ir.ArrayType(i64, 2), COUNTS_SYMBOL)  # defined by the model's code
        offset = b.load(b.gep(layout, [ir.Constant(i64, 0), ir.Constant(i64, 0)], inbounds=True), typ=i64)
    pos = 0
    for o in code.outputs:
        for axis, d in enumerate(o.dims or ()):
            value = ir.Constant(i32, d)
            dyn = o.dynamic
            if dyn is not None and axis == dyn.axis and offset is not None:
                at = b.add(offset, ir.Constant(i64, 4 * dyn.count))
                n = b.load(b.gep(arena, [at], inbounds=True, source_etype=i8), typ=i32)
                n = b.mul(n, ir.Constant(i32, dyn.factor))
                n = b.select(b.icmp_signed("<", n, ir.Constant(i32, 0)), ir.Constant(i32, 0), n)
                value = b.select(b.icmp_signed(">", n, value), value, n)
            b.store(value, b.gep(dims, [ir.Constant(i64, pos)], inbounds=True, source_etype=i32))
            pos += 1
    b.branch(done)
    ir.IRBuilder(done).ret_void()
    return fn


def _crc32_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    return table


@dataclass
class Artifact:
    """A model compiled into one relocatable object with the artifact ABI."""

    module: llvm.ModuleRef  # optimised model code with the ABI module linked in
    code: NativeCode  # object_code: the object file; loadable by the runtime too
    embedded_weights: bool

    @property
    def llvm_ir(self) -> str:
        return str(self.module)


def build(code: CompiledIR, target: Target, embed_weights: bool = False, progress: Progress | None = None) -> Artifact:
    """Optimise the model, link the ABI module in, emit one object file."""
    if progress:
        progress.stage("optimising")
    mod = optimize(code.llvm_ir, target)
    mod.get_function("nnc_run").name = ARTIFACT_ENTRY_NAME  # nnc_run is the ABI module's
    abi = llvm.parse_assembly(str(abi_module(code, target, embed_weights)))
    abi.verify()
    mod.link_in(abi)
    mod.link_in(threadpool.compile_module(target))
    for name in threadpool.API:  # the artifact's own pool: never clashes with another's
        mod.get_function(name).linkage = "internal"
    mod.verify()
    if progress:
        progress.stage("generating code")
    obj = emit_object(mod, target)
    native = NativeCode(obj, code.weights, code.arena_size, code.inputs, code.outputs, target)
    return Artifact(mod, native, embed_weights)


# -- files ----------------------------------------------------------------------------------------------


def write_file(path: str, data: bytes | str) -> None:
    """Write atomically (a failed build never leaves half a file behind)."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".nnc-", dir=directory)
    except OSError as e:
        raise ArtifactError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as e:
        _unlink(tmp)
        raise ArtifactError(f"cannot write {path}: {e.strerror}") from None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def c_compiler() -> list[str]:
    """The system C compiler: ``$CC`` if set, else cc, gcc or clang on PATH."""
    env = os.environ.get("CC", "").strip()
    if env:
        cmd = shlex.split(env)
        if shutil.which(cmd[0]) is None:
            raise ArtifactError(f"the C compiler $CC={env!r} was not found; fix CC, or use --emit obj and link yourself")
        return cmd
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return [name]
    raise ArtifactError(
        "no C compiler found (looked for $CC, cc, gcc, clang) to link the shared library; "
        "install one, or use --emit obj and link the object yourself"
    )


@dataclass(frozen=True)
class Linker:
    """How to turn an object into a shared library: a C compiler driver
    (adds libc, ``-pthread`` and libm) or, for a foreign target with no
    cross compiler, ``ld.lld`` alone (the library then names no libraries
    it needs: the program that loads it links libc, libm and pthreads,
    as every C program on Linux and Android does)."""

    command: tuple[str, ...]
    lld: bool = False
    #: what the error message says about where the command came from
    origin: str = ""

    def arguments(self, obj: str, out: str, soname: str) -> list[str]:
        if self.lld:
            return [*self.command, "-shared", "-soname", soname, "-o", out, obj]
        args = [*self.command, "-shared", "-pthread", "-o", out, obj, "-lm"]
        if sys.platform.startswith("linux"):
            args.insert(-2, f"-Wl,-soname,{soname}")
        return args


def cross_linker_names(triple: str) -> list[str]:
    """Cross compilers for ``triple`` by the names toolchains give them:
    ``TRIPLE-gcc``/``TRIPLE-clang`` as spelt (the NDK's
    ``aarch64-linux-android29-clang``) and without the vendor (Debian's
    ``aarch64-linux-gnu-gcc`` for ``aarch64-unknown-linux-gnu``)."""
    parts = triple.split("-")
    spellings = [triple]
    if len(parts) == 4:
        spellings.append("-".join([parts[0], *parts[2:]]))
    return [f"{t}-{cc}" for t in dict.fromkeys(spellings) for cc in ("gcc", "clang")]


def find_linker(target: Target) -> Linker:
    """The linker of a shared library for ``target``: the system C compiler
    (:func:`c_compiler`) for the host; for another target ``$CC`` when set
    (the user's choice: it must be a cross compiler for the target), else
    a cross compiler named after the triple (:func:`cross_linker_names`)
    on PATH, else ``ld.lld``; else ArtifactError naming what is missing."""
    if not target.is_foreign:
        return Linker(tuple(c_compiler()), origin="the C compiler")
    env = os.environ.get("CC", "").strip()
    if env:
        cmd = shlex.split(env)
        if shutil.which(cmd[0]) is None:
            raise ArtifactError(
                f"the C compiler $CC={env!r} was not found; point CC at a cross compiler for {target.triple}, "
                "or use --emit obj and link yourself"
            )
        return Linker(tuple(cmd), origin=f"$CC (must be a cross compiler for {target.triple})")
    names = cross_linker_names(target.triple)
    for name in names:
        if shutil.which(name):
            return Linker((name,), origin=f"the cross compiler for {target.triple}")
    if shutil.which("ld.lld"):
        return Linker(("ld.lld",), lld=True, origin=f"ld.lld for {target.triple}")
    raise ArtifactError(
        f"no cross linker for {target.triple} found (looked for $CC, {', '.join(names)}, ld.lld on PATH) "
        "to link the shared library; install one (Debian: apt-get install gcc-aarch64-linux-gnu; "
        "Android: the NDK's toolchains/llvm/prebuilt/*/bin on PATH), or use --emit obj and link yourself"
    )


def link_shared(object_code: bytes, out: str, cc: Sequence[str] | Linker | None = None) -> None:
    """Link the object into the shared library ``out`` with ``cc`` (a
    :class:`Linker`, or a C compiler command; default the system's, with
    libm and libpthread)."""
    linker = cc if isinstance(cc, Linker) else Linker(tuple(cc or c_compiler()), origin="the C compiler")
    directory = os.path.dirname(os.path.abspath(out))
    with tempfile.TemporaryDirectory(prefix="nnc-link-") as tmp:
        obj = os.path.join(tmp, "model.o")
        with open(obj, "wb") as f:
            f.write(object_code)
        try:
            fd, staged = tempfile.mkstemp(prefix=".nnc-", suffix=".so", dir=directory)
        except OSError as e:
            raise ArtifactError(f"cannot write {out}: {e.strerror}") from None
        os.close(fd)
        args = linker.arguments(obj, staged, os.path.basename(out))
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
        except OSError as e:
            _unlink(staged)
            raise ArtifactError(f"cannot run {linker.origin} {linker.command[0]!r}: {e.strerror}") from None
        if proc.returncode != 0:
            _unlink(staged)
            detail = (proc.stderr or proc.stdout).strip()
            raise ArtifactError(f"linking {out} with {linker.origin} failed ({shlex.join(args)}):\n{detail}")
        if proc.stderr.strip():
            print(proc.stderr.strip(), file=sys.stderr)
        try:
            os.chmod(staged, 0o755)
            os.replace(staged, out)
        except OSError as e:
            _unlink(staged)
            raise ArtifactError(f"cannot write {out}: {e.strerror}") from None


def header_path(out: str) -> str:
    """OUT with its suffix replaced by .h (libm.so -> libm.h, m.o -> m.h, m -> m.h)."""
    root, ext = os.path.splitext(out)
    return (root if ext else out) + ".h"


def weights_path(out: str) -> str:
    return out + ".weights"


_C_TYPES = {"float32": "float", "float16": "uint16_t (IEEE half)", "int32": "int32_t", "uint32": "uint32_t",
            "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "uint16": "uint16_t",
            "bool": "uint8_t (0 or 1)"}  # fmt: skip


def _describe(kind: str, k: int, info: OperandInfo) -> str:
    dims = ", ".join(("at most " if info.dynamic and a == info.dynamic.axis else "") + str(d)
                     for a, d in enumerate(info.dims or ()))  # fmt: skip
    ctype = _C_TYPES.get(dtype_of(info.type).name, dtype_of(info.type).name)
    text = f"{kind}_{k}: {info.type.name} [{dims}], {ctype}, {info.byte_size} bytes"
    if info.dynamic is not None:
        text += f" (the bound; dimension {info.dynamic.axis} depends on the data)"
    if info.type.is_quantized:
        text += f", scale {info.scale!r}, zero point {info.zero_point}"
    return text


def header_text(
    code: NativeCode,
    *,
    header_name: str,
    library: str,
    model_name: str,
    embedded: bool,
    weights_file: str | None,
) -> str:
    """The C header of an artifact (see docs/artifacts.md)."""
    guard = "NNC_" + re.sub(r"[^A-Za-z0-9]", "_", header_name).upper() + "_"
    weights_size = len(code.weights)
    arena = -(-code.arena_size // ALIGNMENT) * ALIGNMENT
    ios = [_describe("input", k, i) for k, i in enumerate(code.inputs)]
    ios += [_describe("output", k, i) for k, i in enumerate(code.outputs)]
    if embedded:
        weights_doc = (
            f" * Weights: {weights_size} bytes embedded in {library}; pass weights = NULL (or\n"
            " * nnc_model_embedded_weights()).\n"
        )
    elif weights_size:
        weights_doc = (
            f" * Weights: {weights_size} bytes in the data file {weights_file}, which the caller\n"
            " * reads into memory (whole file, 16-byte aligned or better: malloc is fine) and\n"
            " * passes as `weights`; nnc_model_check_weights(buf, size) tells whether the file\n"
            " * is the one this code was compiled with (size and CRC-32).\n"
        )
    else:
        weights_doc = f" * Weights: none (every constant is in the code); {weights_file} is empty, pass NULL.\n"
    target = code.target
    defines = {
        "NNC_MODEL_ABI_VERSION": f"{ABI_VERSION}",
        "NNC_MODEL_TARGET_TRIPLE": json.dumps(target.triple),
        "NNC_MODEL_TARGET_CPU": json.dumps(target.cpu or "generic"),
        "NNC_MODEL_NUM_INPUTS": f"{len(code.inputs)}",
        "NNC_MODEL_NUM_OUTPUTS": f"{len(code.outputs)}",
        "NNC_MODEL_OUTPUT_DIMS_COUNT": f"{max(sum(len(o.dims or ()) for o in code.outputs), 1)}",
        "NNC_MODEL_ARENA_SIZE": f"((size_t){arena}u)",
        "NNC_MODEL_ARENA_ALIGNMENT": f"{ALIGNMENT}",
        "NNC_MODEL_WEIGHTS_SIZE": f"((size_t){weights_size}u)",
        "NNC_MODEL_WEIGHTS_CRC32": f"0x{zlib.crc32(code.weights):08x}u",
        "NNC_MODEL_WEIGHTS_EMBEDDED": "1" if embedded else "0",
        "NNC_MODEL_LOOP_TIMEOUT_NS": f"((uint64_t){DEFAULT_LOOP_TIMEOUT_NS}u)",
        "NNC_MODEL_MAX_LOOP_TIMEOUT_NS": f"((uint64_t){MAXIMUM_LOOP_TIMEOUT_NS}u)",
        "NNC_MODEL_MAX_THREADS": f"{threadpool.MAX_THREADS}",
    }
    if weights_file is not None:
        defines["NNC_MODEL_WEIGHTS_FILE"] = json.dumps(os.path.basename(weights_file))
    for kind, infos in (("INPUT", code.inputs), ("OUTPUT", code.outputs)):
        for k, info in enumerate(infos):
            defines[f"NNC_MODEL_{kind}_{k}_TYPE"] = f"{int(info.type)}"
            defines[f"NNC_MODEL_{kind}_{k}_RANK"] = f"{len(info.dims or ())}"
            defines[f"NNC_MODEL_{kind}_{k}_SIZE"] = f"((size_t){info.byte_size}u)"
            if kind == "OUTPUT" and info.dynamic is not None:  # (a data-dependent dimension)
                defines[f"NNC_MODEL_{kind}_{k}_DYNAMIC_AXIS"] = f"{info.dynamic.axis}"
    defines.update({k: f"({v})" for k, v in STATUS.items()})
    width = max(len(k) for k in defines) + 1
    lines = "\n".join(f"#define {k.ljust(width)}{v}" for k, v in defines.items())
    types = "\n".join(f"#define NNC_TYPE_{t.name} {int(t)}" for t in OperandType if t != OperandType.MODEL)
    return _HEADER_TEMPLATE.substitute(
        header_name=header_name,
        model_name=model_name,
        library=library,
        triple=target.triple,
        cpu=target.cpu or "generic",
        operands="\n".join(" *   " + x for x in ios),
        weights_doc=weights_doc,
        alignment=ALIGNMENT,
        guard=guard,
        defines=lines,
        types=types,
    )
