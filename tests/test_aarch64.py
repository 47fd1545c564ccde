"""Cross-compilation to AArch64 (issue 16), run under user-mode emulation.

Models are compiled with ``--target aarch64-linux-gnu`` into shared
libraries, a C caller (test_c_abi's, generic over the model through the
header) is built with the cross compiler and run under ``qemu-aarch64 -L
/usr/aarch64-linux-gnu`` at 1 and 2 threads, and its outputs are compared
with the host's (``nnc.compile``): integers identical, floats within 1e-5
relative (NEON's 4 lanes and the host's 8 or 16 sum in other orders).
The models: examples/tiny_cnn.nnc and two of ../shared/models, MobileNet v1
0.5 at 160x160 in float32 and int8 (each compiled once per module, for each
target).

The tools come from Debian's packages ``qemu-user gcc-aarch64-linux-gnu
libc6-dev-arm64-cross`` (.ci/run installs them when it runs as root).
Without them the emulated tests are skipped locally, with the reason, and
fail in CI (the environment variable CI set), never passing silently.  The
tests of the generated code itself (NEON instructions, no spills, the
Android object) need only llvmlite and always run.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import time

import numpy as np
import pytest

import nnc
from nnc import FuseCode, driver
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.cli import main as nnc_main
from nnc.operand_types import dtype_of
from nnc.runtime import cpu_probe, jit
from nnc.runtime.artifact import ArtifactError, find_linker
from test_c_abi import C_MAIN
from test_kernels import _functions, _kernel_model
from test_tflite import cache_dir, run, zoo_inputs, zoo_path  # noqa: F401 - cache_dir is a fixture

ROOT = os.path.join(os.path.dirname(__file__), "..")
EXAMPLE = os.path.join(ROOT, "examples", "tiny_cnn.nnc")
TRIPLE = "aarch64-linux-gnu"
SYSROOT = "/usr/aarch64-linux-gnu"
CROSS_CC = "aarch64-linux-gnu-gcc"
QEMU = "qemu-aarch64"
OBJDUMP = "aarch64-linux-gnu-objdump"
PACKAGES = "qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
#: seconds one emulated run may take (MobileNet v1 0.5 runs in 1-4 s under qemu)
RUN_TIMEOUT = 300


def _missing_tools() -> list[str]:
    missing = [tool for tool in (CROSS_CC, OBJDUMP, QEMU) if shutil.which(tool) is None]
    if not os.path.isfile(os.path.join(SYSROOT, "lib", "ld-linux-aarch64.so.1")):
        missing.append(f"{SYSROOT} (libc6-dev-arm64-cross)")
    return missing


def _require_tools() -> None:
    """Fail in CI, skip locally (with the reason), when a tool is missing."""
    missing = _missing_tools()
    if missing:
        why = f"missing {', '.join(missing)}: apt-get install -y --no-install-recommends {PACKAGES}"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the AArch64 tests: {why}")
        pytest.skip(why)


# -- the generated code (no emulation needed) --------------------------------------------------------------------


#: a q register (a whole 128-bit vector) stored to or loaded from the stack:
#: a spill or a reload (prologues save only the low halves of v8-v15, as d8-d15)
_STACK_Q = re.compile(r"\b(ldr|str|ldp|stp|ldur|stur)\s+q\d+.*\[sp")


def _aarch64_kernels(features: str = "") -> dict[str, list[str]]:
    target = jit.Target("aarch64-unknown-linux-gnu", "generic", features)
    model = _kernel_model(filter_is_input=True)
    code = driver.lower(model, driver.static_input_infos(model), target=target)
    return _functions(jit.emit_assembly(jit.optimize(code.llvm_ir, target), target))


def test_neon_gemm_uses_128_bit_fmas_without_spills() -> None:
    """The float32 kernels blocked for NEON (4 lanes, 32 registers: GEMM
    blocks of 4 vectors x 6 pixels) are vector FMAs on 4 x float32
    (``fmla v.4s``), and no kernel keeps a vector on the stack."""
    fns = _aarch64_kernels()
    kernels = {n: ls for n, ls in fns.items() if re.match(r"nnc_(gemm|dw|dot|transpose)_", n)}
    assert {n.split("_")[1] for n in kernels} == {"gemm", "dw", "dot", "transpose"}
    gemm = "\n".join(line for n, ls in kernels.items() if n.startswith("nnc_gemm_") for line in ls)
    assert re.search(r"\bfmla\s+v\d+\.4s, v\d+\.4s, v\d+\.(4s|s\[\d\])", gemm), "no 128-bit vector FMA in the GEMM"
    assert not re.search(r"\b[xyz]mm\d", gemm)
    spills = {n: [ln.strip() for ln in ls if _STACK_Q.search(ln)] for n, ls in kernels.items()}
    assert not {n: s for n, s in spills.items() if s}, spills


def _loops(lines: list[str]) -> list[str]:
    """The bodies of a function's innermost loops (a label to the branch back to it)."""
    return [body for _, body in re.findall(r"\n(\.LBB\w+):(.*?)\n\tb(?:\.\w+)?\t\1\n", "\n" + "\n".join(lines), re.S)]


def test_sdot_gemm_with_dotprod_without_spills() -> None:
    """With +dotprod the int8 GEMM kernels are sdot on 4 (or, in a 2-lane
    channel tail, 2) x int32 lanes (the quad form, chosen by the target description's Int8Dot.SDOT) and their
    reduction loops keep every accumulator in a register (the
    requantisation after the loop, 4 x int64 intermediates per vector, may
    spill: once per block, not per step); without +dotprod, no sdot."""
    model, _ = _q8_models()["q8_signed"]
    infos = driver.static_input_infos(model)
    for features, expect in (("+dotprod", True), ("", False)):
        target = jit.Target("aarch64-unknown-linux-gnu", "generic", features)
        code = driver.lower(model, infos, target=target)
        fns = _functions(jit.emit_assembly(jit.optimize(code.llvm_ir, target), target))
        kernels = {n: ls for n, ls in fns.items() if n.startswith("nnc_q8_")}
        sdot = {n for n, ls in kernels.items() if any(re.search(r"\bsdot\s+v\d+\.(4s|2s), v\d+\.(16b|8b), v\d+\.(16b|8b|4b\[\d\])", x) for x in ls)}
        assert bool(sdot) == expect, (features, sorted(kernels))
        assert sdot == {n for n in kernels if n.startswith("nnc_q8_sdot_gemm_")}
    for name in sdot:
        loops = _loops(kernels[name])
        assert len(loops) == 1 and "sdot" in loops[0], name
        assert not [ln for ln in loops[0].splitlines() if _STACK_Q.search(ln)], (name, loops[0])


def _undefined_symbols(elf: bytes) -> set[str]:
    """The undefined symbols of an ELF64 little-endian object (its .symtab)."""
    shoff, shentsize, shnum = struct.unpack_from("<Q", elf, 0x28)[0], *struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + k * shentsize) for k in range(shnum)]
    out = set()
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link][4]
        for k in range(size // entsize):
            name, _, _, shndx = struct.unpack_from("<IBBH", elf, offset + k * entsize)
            if name and shndx == 0:
                out.add(elf[strtab + name : elf.index(b"\0", strtab + name)].decode())
    return out


#: what an artifact may need from the C library: all in Android's bionic
#: (libc, and libm for the math functions)
BIONIC = {"clock_gettime", "free", "getenv", "memset", "memcpy", "memmove", "posix_memalign", "pthread_atfork",
          "pthread_cond_broadcast", "pthread_cond_init", "pthread_cond_signal", "pthread_cond_wait",
          "pthread_create", "pthread_mutex_init", "pthread_mutex_lock", "pthread_mutex_unlock", "pthread_sigmask",
          "sched_getaffinity", "sigfillset", "sysconf", "expf", "logf", "roundf", "tanhf", "powf", "sinf", "cosf",
          "atan2f", "sqrtf", "floorf", "ceilf", "fmodf", "log1pf", "expm1f", "erff"}  # fmt: skip


def test_android_object_has_the_abi(tmp_path) -> None:
    """``--target aarch64-linux-android29 --emit obj``: an AArch64 ELF
    relocatable object exporting the C ABI and needing only functions
    bionic has; the header names the triple."""
    obj = tmp_path / "model.o"
    assert nnc_main(["compile", EXAMPLE, "--target", "aarch64-linux-android29", "--emit", "obj", "-o", str(obj)]) == 0
    data = obj.read_bytes()
    # ELF64, little endian, ET_REL (1), EM_AARCH64 (183)
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    assert int.from_bytes(data[16:18], "little") == 1 and int.from_bytes(data[18:20], "little") == 183
    for symbol in (b"nnc_run\0", b"nnc_model_run\0", b"nnc_model_set_num_threads\0", b"nnc_model_target_triple\0"):
        assert symbol in data
    needed = _undefined_symbols(data)
    assert "pthread_create" in needed and needed <= BIONIC, needed - BIONIC
    header = (tmp_path / "model.h").read_text()
    assert "#define NNC_MODEL_TARGET_TRIPLE" in header and '"aarch64-linux-android29"' in header


def test_android_thread_pool_uses_bionic_constants() -> None:
    """The pool is generated for the target's libc: sysconf's
    _SC_NPROCESSORS_ONLN is 0x61 in bionic, 84 in glibc; the spin hint is
    AArch64's YIELD, not x86's pause."""
    from nnc.runtime import threadpool

    android = str(threadpool.pool_module(jit.Target("aarch64-linux-android29", "generic", "")))
    gnu = str(threadpool.pool_module(jit.Target("aarch64-unknown-linux-gnu", "generic", "")))
    assert re.search(r'@"?sysconf"?\(i32 97\)', android) and re.search(r'@"?sysconf"?\(i32 84\)', gnu)
    assert "llvm.aarch64.hint" in android and "llvm.x86" not in android


def test_target_options_are_checked(tmp_path, capsys) -> None:
    """Bad --target / --target-cpu / --target-features are usage errors
    (exit 2) that say what is wrong, before anything is compiled."""
    out = str(tmp_path / "m.o")
    cases = [
        (["--target", "riscv64-linux-gnu"], "64-bit Linux and Android"),
        (["--target", "aarch64-apple-darwin"], "64-bit Linux and Android"),
        (["--target", "aarch64 linux"], "not a target triple"),
        (["--target", TRIPLE, "--target-cpu", "cortex-a7600"], "not a CPU LLVM knows"),
        (["--target", TRIPLE, "--target-features", "+nosuchfeature"], "not a recognized feature"),
        (["--target", TRIPLE, "--target-features", "dotprod"], "not a feature list"),
        (["--target", TRIPLE, "--target-cpu", "native"], "cannot run"),
        (["--target", TRIPLE, "--emit", "mlir"], "does not apply to --emit mlir"),
    ]
    for args, message in cases:
        assert nnc_main(["compile", EXAMPLE, "-o", out, "--emit", "obj", *args]) == 2, args
        assert message in capsys.readouterr().err, args
    assert not os.path.exists(out)
    assert nnc_main(["compile", EXAMPLE, "-o", out, "--target", TRIPLE, "--target-cpu", "help"]) == 0
    assert "cortex-a76" in capsys.readouterr().out.split()


def test_target_features_reach_the_description() -> None:
    """``--target-features +dotprod`` on the generic AArch64 CPU gives the
    int8 dot product; ``-dotprod`` takes it from a CPU that has it."""
    plus = driver.target_description(cpu_probe.target_for(TRIPLE, None, "+dotprod"))
    minus = driver.target_description(cpu_probe.target_for(TRIPLE, "cortex-a76", "-dotprod"))
    assert plus.has("dotprod") and plus.vector_bits == 128 and plus.registers == 32
    assert minus.has("neon") and not minus.has("dotprod")
    assert cpu_probe.target_for(None) == jit.Target.host()
    assert cpu_probe.target_for("host") == jit.Target.host()


def test_missing_cross_linker_is_a_clear_error(tmp_path, monkeypatch) -> None:
    """--emit shared for a foreign target without a cross linker on PATH
    fails before compiling, naming what it looked for; so does the Python
    API (OpFailedError)."""
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    target = jit.Target("aarch64-linux-gnu", "generic", "")
    with pytest.raises(ArtifactError, match="aarch64-linux-gnu-gcc.*ld.lld.*--emit obj"):
        find_linker(target)
    with pytest.raises(nnc.OpFailedError, match="no cross linker for aarch64-linux-gnu"):
        nnc.compile_artifact(nnc.load_model(EXAMPLE), tmp_path / "lib.so", target=TRIPLE)
    monkeypatch.setenv("CC", "no-such-cross-cc")
    with pytest.raises(ArtifactError, match="no-such-cross-cc"):
        find_linker(target)


def test_python_api_and_compilation_stays_host_only(tmp_path) -> None:
    """nnc.compile_artifact writes what the CLI writes; in-process
    compilation refuses a foreign target (its code cannot run here)."""
    model = nnc.load_model(EXAMPLE)
    written = nnc.compile_artifact(model, tmp_path / "m.ll", target="aarch64-linux-android29", emit="llvm")
    assert written == [str(tmp_path / "m.ll")]
    text = (tmp_path / "m.ll").read_text()
    assert 'target triple = "aarch64-linux-android29"' in text and "<4 x float>" in text
    with pytest.raises(nnc.BadDataError, match="64-bit Linux and Android"):
        nnc.compile_artifact(model, tmp_path / "x.o", target="armv7-linux-gnueabihf", emit="obj")
    with pytest.raises(ValueError, match="cannot be loaded"):
        driver.compile_model(model, driver.static_input_infos(model), jit.Target("aarch64-linux-gnu", "generic", ""))


# -- under emulation ----------------------------------------------------------------------------------------------

MODELS = {
    "tiny_cnn": EXAMPLE,
    "mobilenet_v1_float32": zoo_path("mobilenet_v1_0.5_160_float32", ".tflite"),
    "mobilenet_v1_int8": zoo_path("mobilenet_v1_0.5_160_int8", ".tflite"),
}


def _inputs(name: str, model: nnc.Model) -> list[np.ndarray]:
    """The zoo's stored input for its models, random floats for tiny_cnn."""
    if name != "tiny_cnn":
        return zoo_inputs(model, np.load(MODELS[name].removesuffix(".tflite") + ".io.npz"))
    rng = np.random.default_rng(3)
    return [rng.uniform(-1, 1, model.operands[i].dims).astype(np.float32) for i in model.inputs]


class Emulated:
    """One model cross-compiled (for the generic AArch64 CPU plus
    ``features``) and its C caller, built with the cross compiler."""

    def __init__(self, name: str, model: nnc.Model, work: str, features: str | None = None):
        self.name = name
        self.model = model
        self.dir = work
        self.lib = os.path.join(work, f"lib{name}.so")
        written = nnc.compile_artifact(self.model, self.lib, target=TRIPLE, features=features)
        assert self.lib in written and self.lib + ".weights" in written
        header = os.path.join(work, f"lib{name}.h")
        assert "#define NNC_MODEL_TARGET_TRIPLE" in open(header).read()
        src = os.path.join(work, "caller.c")
        with open(src, "w") as f:
            f.write(C_MAIN.replace("HEADER", f'"lib{name}.h"'))
        self.exe = os.path.join(work, "caller")
        cmd = [CROSS_CC, "-std=c11", "-D_POSIX_C_SOURCE=200112L", "-Wall", "-Wextra", "-Werror", "-pedantic",
               "-I", work, "-o", self.exe, src, self.lib, f"-Wl,-rpath,{work}", "-pthread", "-lm"]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"

    def run(self, inputs: list[np.ndarray], threads: int, qemu_cpu: str | None = None) -> list[np.ndarray]:
        """The caller under qemu at ``threads`` threads; its outputs."""
        ins = []
        for k, x in enumerate(inputs):
            ins.append(os.path.join(self.dir, f"in{k}.bin"))
            x.tofile(ins[-1])
        outs = [os.path.join(self.dir, f"out{k}_{threads}.bin") for k in range(len(self.model.outputs))]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "QEMU_"))}
        env["NNC_NUM_THREADS"] = str(threads)
        cpu = ["-cpu", qemu_cpu] if qemu_cpu else []
        proc = subprocess.run([QEMU, *cpu, "-L", SYSROOT, self.exe, self.lib + ".weights", *ins, *outs],
                              capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)  # fmt: skip
        assert proc.returncode == 0, f"{self.name} under qemu exited {proc.returncode}: {proc.stderr}"
        assert proc.stdout.strip().endswith("ok")
        got = []
        for k, i in enumerate(self.model.outputs):
            op = self.model.operands[i]
            got.append(np.fromfile(outs[k], dtype=dtype_of(op.type)).reshape(op.dims))
        return got


def _assert_matches_host(name: str, got: list[np.ndarray], expected: list[np.ndarray]) -> None:
    for out, want in zip(got, expected, strict=True):
        assert out.dtype == want.dtype and out.shape == want.shape
        if want.dtype.kind == "f":
            scale = float(np.max(np.abs(want))) or 1.0
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * scale, err_msg=name)
        else:
            np.testing.assert_array_equal(out, want, err_msg=name)


@pytest.mark.parametrize("name", list(MODELS))
def test_aarch64_library_under_qemu_matches_the_host(name, tmp_path, cache_dir) -> None:
    """The AArch64 library, called from C under qemu, computes the host's
    outputs (integers exactly, floats within 1e-5 relative) at 1 and 2
    threads.  One test per model (compile once, run twice), so that xdist
    workers never compile the same model twice; the host's outputs come
    through test_tflite's compilation cache, shared with the zoo's tests."""
    _require_tools()
    t0 = time.perf_counter()
    case = Emulated(name, nnc.load_model(MODELS[name]), str(tmp_path))
    t1 = time.perf_counter()
    inputs = _inputs(name, case.model)
    expected = run(case.model, inputs, cache_dir)
    t2 = time.perf_counter()
    times = []
    for threads in (1, 2):
        start = time.perf_counter()
        got = case.run(inputs, threads)
        times.append(time.perf_counter() - start)
        _assert_matches_host(f"{name} at {threads} thread(s)", got, expected)
    print(f"\n{name}: cross-compile + cross cc {t1 - t0:.1f} s, host {t2 - t1:.1f} s, "
          f"qemu at 1 thread {times[0]:.2f} s, 2 threads {times[1]:.2f} s")  # fmt: skip


# -- the int8 GEMM's sdot form (+dotprod), under qemu -cpu max ---------------------------------------------------


def _q8_models() -> dict[str, tuple[nnc.Model, np.ndarray]]:
    """Two small int8 models whose GEMMs cover the sdot form's cases: int8
    with a per-channel filter (3x3, stride 2, padding: a run of 9, padded
    to 3 quads; 19 channels: tails of 2 and 1 lanes), a per-tensor 1x1
    (70 channels) and a FULLY_CONNECTED; uint8 (the input shifted by 128)
    with a filter whose offsets fit int8 and a FULLY_CONNECTED whose
    offsets do not (the pair form, next to the sdot form)."""
    rng = np.random.default_rng(7)
    models = {}

    def scalars(m: nnc.Model, *values: int) -> list[int]:
        out = []
        for v in values:
            i = m.add_operand(T.INT32)
            m.set_operand_value(i, np.int32(v))
            out.append(i)
        return out

    def tensor(m: nnc.Model, t, shape, scale: float, zp: int, value=None) -> int:
        i = m.add_operand(t, list(shape), scale, zp)
        if value is not None:
            m.set_operand_value(i, value)
        return i

    def bias(m: nnc.Model, n: int, scale: float) -> int:
        return tensor(m, T.TENSOR_INT32, [n], scale, 0, rng.integers(-3000, 3000, n).astype(np.int32))

    s8, u8 = T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_ASYMM
    # int8: CONV 3x3/2 per channel -> CONV 1x1 -> FULLY_CONNECTED
    m = nnc.Model()
    x = tensor(m, s8, [1, 8, 7, 3], 0.05, 3)
    w = m.add_operand(T.TENSOR_QUANT8_SYMM_PER_CHANNEL, [19, 3, 3, 3])
    m.set_operand_symm_per_channel_quant_params(w, [float(v) for v in rng.uniform(0.005, 0.03, 19)], 0)
    m.set_operand_value(w, rng.integers(-127, 127, (19, 3, 3, 3), endpoint=True).astype(np.int8))
    c1 = tensor(m, s8, [1, 4, 4, 19], 0.3, -5)
    m.add_operation(Op.CONV_2D, [x, w, bias(m, 19, 0.0), *scalars(m, 1, 1, 1, 1, 2, 2, FuseCode.RELU6)], [c1])
    w2 = tensor(m, s8, [70, 1, 1, 19], 0.02, 4, rng.integers(-120, 120, (70, 1, 1, 19)).astype(np.int8))
    c2 = tensor(m, s8, [1, 4, 4, 70], 0.2, 2)
    m.add_operation(Op.CONV_2D, [c1, w2, bias(m, 70, 0.3 * 0.02), *scalars(m, 0, 0, 0, 0, 1, 1, FuseCode.NONE)], [c2])
    w3 = tensor(m, s8, [10, 4 * 4 * 70], 0.01, 0, rng.integers(-128, 127, (10, 1120), endpoint=True).astype(np.int8))
    y = tensor(m, s8, [1, 10], 16.0, 1)
    m.add_operation(Op.FULLY_CONNECTED, [c2, w3, bias(m, 10, 0.2 * 0.01), *scalars(m, FuseCode.RELU)], [y])
    m.identify_inputs_and_outputs([x], [c1, c2, y])
    m.finish()
    models["q8_signed"] = (m, rng.integers(-128, 127, (1, 8, 7, 3), endpoint=True).astype(np.int8))
    # uint8: CONV 3x2 (offsets fit int8) -> FULLY_CONNECTED (offsets do not)
    m = nnc.Model()
    x = tensor(m, u8, [2, 7, 9, 5], 0.05, 131)
    w = tensor(m, u8, [24, 3, 2, 5], 0.02, 130, rng.integers(2, 255, (24, 3, 2, 5), endpoint=True).astype(np.uint8))
    c1 = tensor(m, u8, [2, 8, 5, 24], 0.4, 120)
    m.add_operation(Op.CONV_2D, [x, w, bias(m, 24, 0.05 * 0.02), *scalars(m, 1, 0, 2, 1, 2, 1, FuseCode.RELU)], [c1])
    w2 = tensor(m, u8, [7, 8 * 5 * 24], 0.01, 128, rng.integers(0, 255, (7, 960), endpoint=True).astype(np.uint8))
    y = tensor(m, u8, [2, 7], 40.0, 128)
    m.add_operation(Op.FULLY_CONNECTED, [c1, w2, bias(m, 7, 0.4 * 0.01), *scalars(m, FuseCode.NONE)], [y])
    m.identify_inputs_and_outputs([x], [c1, y])
    m.finish()
    models["q8_unsigned"] = (m, rng.integers(0, 255, (2, 7, 9, 5), endpoint=True).astype(np.uint8))
    return models


def test_sdot_form_under_qemu_matches_the_host(tmp_path) -> None:
    """With ``--target-features +dotprod`` the int8 GEMMs use sdot; under
    ``qemu-aarch64 -cpu max`` (which has FEAT_DotProd) their outputs equal
    the host's (the pair form, checked against a reference in
    test_q8_kernels) exactly, at 1 and 2 threads."""
    _require_tools()
    for name, (model, x) in _q8_models().items():
        work = tmp_path / name
        work.mkdir()
        case = Emulated(name, model, str(work), features="+dotprod")
        disassembly = subprocess.run([OBJDUMP, "-d", case.lib], capture_output=True, text=True, timeout=60).stdout
        assert re.search(r"\bsdot\s+v\d+\.4s", disassembly), name
        expected = nnc.compile(model).run(x)
        assert all(len(np.unique(y)) > 3 for y in expected), "outputs saturated: the comparison would show little"
        for threads in (1, 2):
            _assert_matches_host(f"{name} at {threads} thread(s)", case.run([x], threads, qemu_cpu="max"), expected)
