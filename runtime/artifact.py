"""Native artifacts: a compiled model as an object file or shared library that
C code calls without Python (``nnc compile``).

An artifact is the model's optimised native code (``nnc_run``, exactly as the
Python runtime generates it) linked at the LLVM level with a small *ABI
module* generated here with ``llvmlite.ir``:

``nnc_run``, ``nnc_run_with_loop_timeout``
    the model: the runtime's optimised entry (which takes the WHILE loop
    timeout) is exported as ``nnc_run_with_loop_timeout``; ``nnc_run`` calls
    it with the default loop timeout (2 s, ``NNC_MODEL_LOOP_TIMEOUT_NS``);
``nnc_model_run``
    ``nnc_run`` plus a 64-byte aligned heap arena, and the embedded weights
    when the caller passes none;
``nnc_model_num_inputs``, ``nnc_model_input_type``/``rank``/``dims``/``size``/``scale``/``zero_point``
    (and the ``output`` counterparts), ``nnc_model_arena_size``,
    ``nnc_model_weights_size``, ``nnc_model_embedded_weights``, ``nnc_model_abi_version``
    constant tables behind bounds-checked accessors;
``nnc_model_check_weights``
    CRC-32 (zlib's) of a caller-loaded weights buffer against the one the
    code was compiled with.

The model's functions are optimised first (``runtime.jit.optimize``, which
internalises everything but ``nnc_run``), that ``nnc_run`` is renamed
``nnc_run_with_loop_timeout`` and the ABI module is linked in afterwards, so
its machine code is the same as the runtime's for the same target.  :func:`header_text` documents the result for C callers,
:func:`link_shared` turns the object into a shared library with the system C
compiler.
"""

from __future__ import annotations

import difflib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

import llvmlite.binding as llvm
from llvmlite import ir

from nnc.dialects.rules import OperandInfo
from nnc.enums import DEFAULT_LOOP_TIMEOUT_NS, MAXIMUM_LOOP_TIMEOUT_NS, OperandType, OperationType
from nnc.errors import BadDataError, NNError, OpFailedError, OutOfMemoryError, UnsupportedOperationError
from nnc.model import Model, dtype_of
from nnc.passes.lowering.control_flow import LOOP_TIMEOUT_STATUS
from nnc.runtime.executable import ARTIFACT_ENTRY_NAME, CompiledIR, NativeCode, lower_shaped, shaped_module
from nnc.runtime.jit import Target, emit_object, initialize, optimize

#: Bumped when a function of the artifact ABI changes meaning or signature
#: (2: nnc_run_with_loop_timeout, NNC_MODEL_ERROR_LOOP_TIMEOUT).
ABI_VERSION = 2
#: Alignment of the arena nnc_model_run allocates and of embedded weights.
ALIGNMENT = 64
#: nnc_model_run / nnc_model_check_weights status codes (nnc_run itself
#: returns 0, k + 1 for operation k, or NNC_MODEL_ERROR_LOOP_TIMEOUT).
STATUS = {"NNC_MODEL_OK": 0, "NNC_MODEL_ERROR_OUT_OF_MEMORY": -1,
          "NNC_MODEL_ERROR_NO_WEIGHTS": -2, "NNC_MODEL_ERROR_BAD_WEIGHTS": -3,
          "NNC_MODEL_ERROR_LOOP_TIMEOUT": LOOP_TIMEOUT_STATUS}  # fmt: skip
_FN = "ANeuralNetworksCompilation_finish"


class ArtifactError(Exception):
    """An artifact could not be built or written (``nnc compile`` exit status 1)."""


class ArtifactUsageError(ArtifactError):
    """The request cannot be met: an input's shape or value is only known at
    execution, the target CPU is unknown, or two output files would be the
    same.  The command line reports this as bad usage (exit status 2)."""


# -- what gets compiled ---------------------------------------------------------------------------


def static_input_infos(model: Model) -> list[OperandInfo]:
    """The inputs' infos, if every one is a fully specified tensor whose value
    is a run-time input (scalars and tensors read as shapes are compiled into
    the code by nnc, so they cannot be inputs of a native artifact)."""
    from nnc.compilation import specialised_inputs

    specialised = specialised_inputs(model)
    infos = []
    for k, idx in enumerate(model.inputs):
        op = model.operands[idx]
        info = op.info(with_value=False)
        if op.type.is_scalar:
            raise ArtifactUsageError(
                f"input_{k} is a scalar ({op.type.name}); nnc compiles scalar input values into the code, "
                "so a native artifact cannot take it at run time (make it a constant of the model)"
            )
        if not info.shape_known:
            raise ArtifactUsageError(
                f"input_{k} has unspecified dimensions ({info.describe()}); nnc compile needs every input "
                "fully specified (set its dimensions in the model and save it again)"
            )
        if k in specialised:
            raise ArtifactUsageError(
                f"input_{k} is read as a shape by an operation, so nnc compiles its value into the code; "
                "a native artifact cannot take it at run time (make it a constant of the model)"
            )
        infos.append(OperandInfo(info.type, tuple(info.dims), info.scale, info.zero_point, info.channel_quant))
    return infos


def _as_nn_errors(model: Model):
    """Compiler failures as the NNAPI errors Compilation.finish would raise."""
    from nnc.compilation import compiler_errors

    return compiler_errors(model, _FN)


def shaped_nnapi(model: Model, infos: Sequence[OperandInfo]):
    """(nnapi module after shape inference, constant pool), errors as NNError."""
    with _as_nn_errors(model):
        return shaped_module(model, infos)


def lower(model: Model, infos: Sequence[OperandInfo], progress: Progress | None = None) -> CompiledIR:
    """Check support and run the whole pipeline to LLVM IR, errors as NNError."""
    from nnc.compilation import check_support

    check_support(model, _FN)
    module, weights = shaped_nnapi(model, infos)
    if progress:
        progress.stage("lowering")
    with _as_nn_errors(model):
        return lower_shaped(module, weights, infos)


# -- target CPU -------------------------------------------------------------------------------------

_PROBE = r"""
import json, os, sys, tempfile
import llvmlite.binding as llvm
llvm.initialize_native_target(); llvm.initialize_native_asmprinter()
t = llvm.Target.from_triple(sys.argv[1])
def machine(cpu):
    sys.stderr.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(2); os.dup2(f.fileno(), 2)
        try:
            tm = t.create_target_machine(cpu=cpu, features="", opt=3, reloc="pic")
        finally:
            os.dup2(saved, 2); os.close(saved)
        f.seek(0)
        return tm, f.read().decode(errors="replace")
if sys.argv[2] == "help":
    print(json.dumps({"listing": machine("help")[1]}))
    sys.exit(0)
tm, warnings = machine(sys.argv[2])
if "not a recognized processor" in warnings:
    _, listing = machine("help")
    print(json.dumps({"unknown": True, "listing": listing}))
    sys.exit(0)
m = llvm.parse_assembly("define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}")
m.triple = sys.argv[1]
tm.emit_object(m)
print(json.dumps({"unknown": False}))
"""


def _probe(cpu: str) -> tuple[subprocess.CompletedProcess, str]:
    initialize()
    triple = llvm.get_process_triple()
    proc = subprocess.run([sys.executable, "-c", _PROBE, triple, cpu], capture_output=True, text=True, timeout=120)
    return proc, triple


def _cpu_names(listing: str) -> list[str]:
    return re.findall(r"^\s+(\S+)\s+- Select the", listing, re.M)


def known_cpus() -> list[str]:
    """The CPU names LLVM accepts for this machine's triple."""
    proc, triple = _probe("help")
    if proc.returncode != 0:
        raise ArtifactError(f"cannot list the CPUs LLVM knows for {triple}: {proc.stderr.strip()}")
    return _cpu_names(json.loads(proc.stdout.strip().splitlines()[-1])["listing"])


def target_for_cpu(cpu: str | None) -> Target:
    """The host target, or the host triple for ``cpu``.  The CPU is checked in
    a child process first: LLVM aborts the process on some CPU names (a
    32-bit-only CPU for a 64-bit triple) instead of reporting an error."""
    if cpu is None or cpu in ("host", "native"):
        return Target.host()
    if not cpu or cpu == "help" or cpu.startswith("-") or any(c.isspace() for c in cpu):
        raise ArtifactUsageError(f"--target-cpu {cpu!r} is not a CPU name (--target-cpu help lists them)")
    proc, triple = _probe(cpu)
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["LLVM aborted"])[-1]
        raise ArtifactUsageError(f"--target-cpu {cpu!r} cannot generate code for {triple}: {why}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["unknown"]:
        near = difflib.get_close_matches(cpu, _cpu_names(result["listing"]), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else " (--target-cpu help lists them)"
        raise ArtifactUsageError(f"--target-cpu {cpu!r} is not a CPU LLVM knows for {triple}{hint}")
    return Target.for_cpu(cpu)


# -- the ABI module ---------------------------------------------------------------------------------


def _pointer_bits(data_layout: str) -> int:
    m = re.search(r"(?:^|-)p(?:0)?:(\d+)", data_layout)
    return int(m.group(1)) if m else 64


def byte_size(info: OperandInfo) -> int:
    n = dtype_of(info.type).itemsize
    for d in info.dims or ():
        n *= d
    return n


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
    for kind, infos in (("input", code.inputs), ("output", code.outputs)):
        constant_fn(f"nnc_model_num_{kind}s", i32, len(infos))
        table_fn(f"nnc_model_{kind}_type", i32, [int(i.type) for i in infos], -1)
        table_fn(f"nnc_model_{kind}_rank", i32, [len(i.dims or ()) for i in infos], -1)
        dims = [
            const_global(f"nnc_model_{kind}_{k}.dims", ir.ArrayType(i32, len(i.dims or ())), list(i.dims or ()))
            for k, i in enumerate(infos)
        ]
        table_fn(f"nnc_model_{kind}_dims", ptr, dims, ir.Constant(ptr, None))
        table_fn(f"nnc_model_{kind}_size", size_t, [byte_size(i) for i in infos], 0)
        table_fn(f"nnc_model_{kind}_scale", f32, [float(i.scale) for i in infos], 0.0)
        table_fn(f"nnc_model_{kind}_zero_point", i32, [int(i.zero_point) for i in infos], 0)

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

    # int nnc_model_run(const void *const *inputs, void *const *outputs, const void *weights)
    posix_memalign = ir.Function(mod, ir.FunctionType(i32, [ptr, size_t, size_t]), "posix_memalign")
    free = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr]), "free")
    fn = ir.Function(mod, ir.FunctionType(i32, [ptr, ptr, ptr]), "nnc_model_run")
    ins, outs, w = fn.args
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
        b.call(free, [mem])
    else:
        status = b.call(nnc_run, [ins, outs, w, ir.Constant(ptr, None)])
    b.ret(status)
    return mod


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


def link_shared(object_code: bytes, out: str, cc: Sequence[str] | None = None) -> None:
    """``cc -shared`` the object into ``out`` (with libm)."""
    cmd = list(cc or c_compiler())
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
        args = [*cmd, "-shared", "-o", staged, obj, "-lm"]
        if sys.platform.startswith("linux"):
            args.insert(-2, f"-Wl,-soname,{os.path.basename(out)}")
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
        except OSError as e:
            _unlink(staged)
            raise ArtifactError(f"cannot run the C compiler {cmd[0]!r}: {e.strerror}") from None
        if proc.returncode != 0:
            _unlink(staged)
            detail = (proc.stderr or proc.stdout).strip()
            raise ArtifactError(f"linking {out} failed ({shlex.join(args)}):\n{detail}")
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
    dims = ", ".join(str(d) for d in info.dims or ())
    ctype = _C_TYPES.get(dtype_of(info.type).name, dtype_of(info.type).name)
    text = f"{kind}_{k}: {info.type.name} [{dims}], {ctype}, {byte_size(info)} bytes"
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
    """The C header of an artifact (see README.md, "Native artifacts")."""
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
        "NNC_MODEL_NUM_INPUTS": f"{len(code.inputs)}",
        "NNC_MODEL_NUM_OUTPUTS": f"{len(code.outputs)}",
        "NNC_MODEL_ARENA_SIZE": f"((size_t){arena}u)",
        "NNC_MODEL_ARENA_ALIGNMENT": f"{ALIGNMENT}",
        "NNC_MODEL_WEIGHTS_SIZE": f"((size_t){weights_size}u)",
        "NNC_MODEL_WEIGHTS_CRC32": f"0x{zlib.crc32(code.weights):08x}u",
        "NNC_MODEL_WEIGHTS_EMBEDDED": "1" if embedded else "0",
        "NNC_MODEL_LOOP_TIMEOUT_NS": f"((uint64_t){DEFAULT_LOOP_TIMEOUT_NS}u)",
        "NNC_MODEL_MAX_LOOP_TIMEOUT_NS": f"((uint64_t){MAXIMUM_LOOP_TIMEOUT_NS}u)",
    }
    if weights_file is not None:
        defines["NNC_MODEL_WEIGHTS_FILE"] = json.dumps(os.path.basename(weights_file))
    for kind, infos in (("INPUT", code.inputs), ("OUTPUT", code.outputs)):
        for k, info in enumerate(infos):
            defines[f"NNC_MODEL_{kind}_{k}_TYPE"] = f"{int(info.type)}"
            defines[f"NNC_MODEL_{kind}_{k}_RANK"] = f"{len(info.dims or ())}"
            defines[f"NNC_MODEL_{kind}_{k}_SIZE"] = f"((size_t){byte_size(info)}u)"
    defines.update({k: f"({v})" for k, v in STATUS.items()})
    width = max(len(k) for k in defines) + 1
    lines = "\n".join(f"#define {k.ljust(width)}{v}" for k, v in defines.items())
    types = "\n".join(f"#define NNC_TYPE_{t.name} {int(t)}" for t in OperandType if t != OperandType.MODEL)
    return f"""\
/* {header_name}: generated by nnc from {model_name}; do not edit.
 *
 * Native code for one NNAPI model, compiled ahead of time into {library}
 * for {target.triple}, CPU {target.cpu or "generic"}: the code may use every instruction of that
 * CPU (`nnc compile --target-cpu generic`, or an older CPU, for other machines).
 *
 * Operands (C-contiguous, row-major, native byte order):
{chr(10).join(" *   " + x for x in ios)}
 *
{weights_doc} *
 * Running it:
 *
 *   const void *inputs[NNC_MODEL_NUM_INPUTS] = {{ ... }};
 *   void *outputs[NNC_MODEL_NUM_OUTPUTS] = {{ ... }};
 *   int status = nnc_model_run(inputs, outputs, weights);
 *
 * Each buffer holds the operand's byte size (nnc_model_input_size(i),
 * nnc_model_output_size(i)), aligned for its element type; outputs are written
 * in place and must not overlap the inputs.  nnc_model_run allocates a
 * {ALIGNMENT}-byte aligned arena of nnc_model_arena_size() bytes on the heap per call
 * and is safe to call from several threads at once.  To reuse your own arena,
 * call nnc_run(inputs, outputs, weights, arena) with NNC_MODEL_ARENA_SIZE bytes
 * aligned to NNC_MODEL_ARENA_ALIGNMENT (one arena per concurrent call).
 *
 * WHILE loops: each loop stops when it has run longer than the loop timeout
 * (NNC_MODEL_LOOP_TIMEOUT_NS for nnc_run and nnc_model_run; choose it
 * with nnc_run_with_loop_timeout, nanoseconds per loop; NNAPI allows at most
 * NNC_MODEL_MAX_LOOP_TIMEOUT_NS) and the call returns
 * NNC_MODEL_ERROR_LOOP_TIMEOUT.
 *
 * Status: 0 on success; k + 1 when operation k of the model met invalid
 * run-time data (an index out of range, say: outputs are then unspecified but
 * no memory outside the buffers was touched); NNC_MODEL_ERROR_LOOP_TIMEOUT
 * from every run function (outputs unspecified); the other negative
 * NNC_MODEL_ERROR_* codes below from nnc_model_run / nnc_model_check_weights only.
 */
#ifndef {guard}
#define {guard}

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

{lines}

#ifndef NNC_TYPE_TENSOR_FLOAT32
/* NNAPI operand type codes (ANEURALNETWORKS_*), as returned by nnc_model_*_type. */
{types}
#endif

/* The model: inputs[i] / outputs[i] point to operand i's buffer; weights to the
 * weights (NULL: the embedded ones, if any); arena to NNC_MODEL_ARENA_SIZE
 * bytes of scratch memory (64-byte aligned). */
int32_t nnc_run(void *const *inputs, void *const *outputs, const void *weights, void *arena);
/* nnc_run with the WHILE loop timeout in nanoseconds (per loop). */
int32_t nnc_run_with_loop_timeout(void *const *inputs, void *const *outputs, const void *weights, void *arena,
                                  uint64_t loop_timeout_ns);
/* nnc_run with an arena from the heap.  Returns as nnc_run, or
 * NNC_MODEL_ERROR_OUT_OF_MEMORY, or NNC_MODEL_ERROR_NO_WEIGHTS (weights NULL
 * while the model needs them and has none embedded). */
int nnc_model_run(const void *const *inputs, void *const *outputs, const void *weights);

/* Interface queries (the same values as the macros above, for code that loads
 * the library with dlopen).  An index out of range gives -1 (type, rank),
 * NULL (dims), 0 (size, scale, zero_point). */
int nnc_model_abi_version(void);
int nnc_model_num_inputs(void);
int nnc_model_num_outputs(void);
int nnc_model_input_type(int index);              /* NNC_TYPE_* */
int nnc_model_input_rank(int index);
const uint32_t *nnc_model_input_dims(int index);  /* rank entries */
size_t nnc_model_input_size(int index);           /* bytes */
float nnc_model_input_scale(int index);           /* quantised types */
int32_t nnc_model_input_zero_point(int index);
int nnc_model_output_type(int index);
int nnc_model_output_rank(int index);
const uint32_t *nnc_model_output_dims(int index);
size_t nnc_model_output_size(int index);
float nnc_model_output_scale(int index);
int32_t nnc_model_output_zero_point(int index);
size_t nnc_model_arena_size(void);

/* Weights: size in bytes, the embedded copy (NULL when not embedded), and a
 * check of a buffer the caller loaded: NNC_MODEL_OK when size and CRC-32
 * match what this code was compiled with, else NNC_MODEL_ERROR_BAD_WEIGHTS. */
size_t nnc_model_weights_size(void);
const void *nnc_model_embedded_weights(void);
int nnc_model_check_weights(const void *weights, size_t size);

#ifdef __cplusplus
}}
#endif

#endif /* {guard} */
"""


# -- progress -----------------------------------------------------------------------------------------


class Progress:
    """A progress indicator on ``stream`` (stderr) for slow compilations.

    Nothing is shown for the first ``delay`` seconds.  On a terminal a single
    line then shows the current stage and the elapsed time, redrawn in place
    and erased at the end; otherwise (CI logs) one line says the compilation
    is under way and one more says when it finished.
    """

    SPIN = "|/-\\"

    def __init__(self, label: str, stream: TextIO | None = None, delay: float = 1.5, interval: float = 0.1):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.interval = interval
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._stage = "importing"
        self._start = time.monotonic()
        self._shown = False
        self._width = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def stage(self, name: str) -> None:
        with self._lock:
            self._stage = name

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="nnc-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if not self._shown:
                return
            if self.tty:
                self._write("\r" + " " * self._width + "\r")
            elif exc_type is None:
                self._write(f"nnc: compiled {self.label} in {time.monotonic() - self._start:.1f} s\n")

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        n = 0
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                elapsed = time.monotonic() - self._start
                if self.tty:
                    text = f"nnc: compiling {self.label}: {self._stage} {self.SPIN[n % 4]} {elapsed:.0f} s"
                    self._write("\r" + text.ljust(self._width))
                    self._width = max(self._width, len(text))
                elif not self._shown:
                    self._write(f"nnc: compiling {self.label} ({self._stage})...\n")
                self._shown = True
            if not self.tty or self._stop.wait(self.interval):
                return
            n += 1

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass


# -- the whole job ---------------------------------------------------------------------------------


EMITS = ("mlir", "llvm", "obj", "shared")


def compile_artifact(
    model: Model,
    out: str,
    *,
    emit: str = "shared",
    target: Target | None = None,
    header: str | None = None,
    embed_weights: bool = False,
    model_name: str = "model",
    progress: Progress | None = None,
    stdout: TextIO | None = None,
) -> list[str]:
    """Compile ``model`` and write ``out`` (``-`` = ``stdout`` for mlir/llvm),
    plus the header and weights file for obj/shared.  Returns the paths written."""
    if emit not in EMITS:
        raise ValueError(f"emit must be one of {EMITS}")
    infos = static_input_infos(model)
    stage: Callable[[str], None] = progress.stage if progress else (lambda name: None)

    def put(text: str) -> list[str]:
        if out == "-":
            (stdout or sys.stdout).write(text if text.endswith("\n") else text + "\n")
            return []
        write_file(out, text if text.endswith("\n") else text + "\n")
        return [out]

    binary = emit in ("obj", "shared")
    header = (header or header_path(out)) if binary else None
    wpath = weights_path(out) if binary and not embed_weights else None
    files = [p for p in (out, header, wpath) if p is not None and p != "-"]
    if len({os.path.realpath(p) for p in files}) != len(files):
        raise ArtifactUsageError(f"output files would overwrite each other ({', '.join(files)}); choose another -o or --header")
    for path in files:  # fail before the slow part
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise ArtifactError(f"cannot write {path}: no directory {os.path.dirname(path)!r}")
    if emit == "mlir":
        from xdsl.printer import Printer

        module, _ = shaped_nnapi(model, infos)
        buf = io.StringIO()
        Printer(stream=buf).print_op(module)
        return put(buf.getvalue())
    cc = c_compiler() if emit == "shared" else None
    target = target or Target.host()
    code = lower(model, infos, progress)
    with _as_nn_errors(model):
        art = build(code, target, embed_weights, progress)
    if emit == "llvm":
        return put(art.llvm_ir)
    stage("writing" if emit == "obj" else "linking")
    if emit == "obj":
        write_file(out, art.code.object_code)
    else:
        link_shared(art.code.object_code, out, cc)
    written = [out]
    if wpath is not None:
        write_file(wpath, code.weights)
        written.append(wpath)
    assert header is not None
    text = header_text(
        art.code,
        header_name=os.path.basename(header),
        library=os.path.basename(out),
        model_name=model_name,
        embedded=embed_weights,
        weights_file=wpath,
    )
    write_file(header, text)
    written.append(header)
    return written
