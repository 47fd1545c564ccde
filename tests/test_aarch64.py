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
import subprocess
import time

import numpy as np
import pytest

from test_c_abi import C_MAIN
from test_kernels import _functions, _kernel_model
from test_tflite import cache_dir, run, zoo_inputs, zoo_path  # noqa: F401 - cache_dir is a fixture

import nnc
from nnc import driver
from nnc.cli import main as nnc_main
from nnc.operand_types import dtype_of
from nnc.runtime import cpu_probe, jit
from nnc.runtime.artifact import ArtifactError, find_linker

ROOT = os.path.join(os.path.dirname(__file__), "..")
EXAMPLE = os.path.join(ROOT, "examples", "tiny_cnn.nnc")
TRIPLE = "aarch64-linux-gnu"
SYSROOT = "/usr/aarch64-linux-gnu"
CROSS_CC = "aarch64-linux-gnu-gcc"
QEMU = "qemu-aarch64"
PACKAGES = "qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
#: seconds one emulated run may take (MobileNet v1 0.5 runs in 1-4 s under qemu)
RUN_TIMEOUT = 300


def _missing_tools() -> list[str]:
    missing = [tool for tool in (CROSS_CC, QEMU) if shutil.which(tool) is None]
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


def test_android_object_has_the_abi(tmp_path) -> None:
    """``--target aarch64-linux-android29 --emit obj``: an AArch64 ELF
    relocatable object exporting the C ABI; the header names the triple."""
    obj = tmp_path / "model.o"
    assert nnc_main(["compile", EXAMPLE, "--target", "aarch64-linux-android29", "--emit", "obj", "-o", str(obj)]) == 0
    data = obj.read_bytes()
    # ELF64, little endian, ET_REL (1), EM_AARCH64 (183)
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    assert int.from_bytes(data[16:18], "little") == 1 and int.from_bytes(data[18:20], "little") == 183
    for symbol in (b"nnc_run\0", b"nnc_model_run\0", b"nnc_model_set_num_threads\0", b"nnc_model_target_triple\0"):
        assert symbol in data
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
    """One model cross-compiled and its C caller, built with the cross compiler."""

    def __init__(self, name: str, work: str):
        self.name = name
        self.model = nnc.load_model(MODELS[name])
        self.dir = work
        self.lib = os.path.join(work, f"lib{name}.so")
        written = nnc.compile_artifact(self.model, self.lib, target=TRIPLE)
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
def test_aarch64_library_under_qemu_matches_the_host(name, tmp_path, cache_dir) -> None:  # noqa: F811
    """The AArch64 library, called from C under qemu, computes the host's
    outputs (integers exactly, floats within 1e-5 relative) at 1 and 2
    threads.  One test per model (compile once, run twice), so that xdist
    workers never compile the same model twice; the host's outputs come
    through test_tflite's compilation cache, shared with the zoo's tests."""
    _require_tools()
    t0 = time.perf_counter()
    case = Emulated(name, str(tmp_path))
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
