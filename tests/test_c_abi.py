"""Native artifacts (``nnc compile``) called from C, without Python.

The models are compiled to a shared library + header (+ weights file); a small
C program reads raw input files, calls the library and writes raw outputs.  Its
outputs must equal the Python runtime's exactly: the artifact's ``nnc_run`` is
the same optimised code for the same (host) target.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import nnc
from nnc import FuseCode, driver
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.cli import Progress
from nnc.cli import main as nnc_main
from nnc.operand_types import dtype_of
from nnc.runtime import artifact

ROOT = os.path.join(os.path.dirname(__file__), "..")
EXAMPLE = os.path.join(ROOT, "examples", "tiny_cnn.nnc")
CC = shutil.which(os.environ.get("CC", "").split()[0] if os.environ.get("CC", "").strip() else "cc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc or $CC) on PATH: cannot link or run C callers")
if CC is None:  # say why in the warnings summary, not only in the skip reasons (-rs)
    warnings.warn(pytest.PytestWarning("test_c_abi: no C compiler (cc or $CC) found; the C-caller tests are skipped"), stacklevel=1)


def nnc_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from nnc.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def compile_in_process(*args: str) -> None:
    assert nnc_main(["compile", *args]) == 0


def two_io_model() -> nnc.Model:
    """Two inputs, two outputs of different shapes; a weight matrix large
    enough to live in the weights file; expf through LOGISTIC."""
    rng = np.random.default_rng(11)
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2, 16])
    b = m.add_operand(T.TENSOR_FLOAT32, [2, 16])
    relu = m.add_operand(T.INT32)
    m.set_operand_value(relu, FuseCode.RELU)
    total = m.add_operand(T.TENSOR_FLOAT32, [2, 16])
    m.add_operation(Op.ADD, [a, b, relu], [total])
    w = m.add_operand(T.TENSOR_FLOAT32, [5, 16])
    m.set_operand_value(w, rng.normal(0, 0.5, (5, 16)).astype(np.float32))
    bias = m.add_operand(T.TENSOR_FLOAT32, [5])
    m.set_operand_value(bias, rng.normal(0, 0.1, 5).astype(np.float32))
    none = m.add_operand(T.INT32)
    m.set_operand_value(none, FuseCode.NONE)
    fc = m.add_operand(T.TENSOR_FLOAT32, [2, 5])
    m.add_operation(Op.FULLY_CONNECTED, [b, w, bias, none], [fc])
    probs = m.add_operand(T.TENSOR_FLOAT32, [2, 5])
    m.add_operation(Op.LOGISTIC, [fc], [probs])
    m.identify_inputs_and_outputs([a, b], [total, probs])
    m.finish()
    return m


def conv_model() -> nnc.Model:
    """A float32 3x3 CONV_2D (SAME, RELU) of 24x24x16 -> 32 channels: large
    enough that its GEMM tiles are a parallel loop handed to the thread pool."""
    rng = np.random.default_rng(12)
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [1, 24, 24, 16])
    w = m.add_operand(T.TENSOR_FLOAT32, [32, 3, 3, 16])
    m.set_operand_value(w, rng.normal(0, 0.3, (32, 3, 3, 16)).astype(np.float32))
    bias = m.add_operand(T.TENSOR_FLOAT32, [32])
    m.set_operand_value(bias, rng.normal(0, 0.1, 32).astype(np.float32))
    scalars = []
    for value in (1, 1, 1, FuseCode.RELU):  # PaddingCode SAME, strides 1, 1, activation
        s = m.add_operand(T.INT32)
        m.set_operand_value(s, value)
        scalars.append(s)
    y = m.add_operand(T.TENSOR_FLOAT32, [1, 24, 24, 32])
    m.add_operation(Op.CONV_2D, [x, w, bias, *scalars], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("models")
    paths = {"two_io": str(d / "two_io.nnc"), "conv": str(d / "conv.nnc")}
    two_io_model().save(paths["two_io"])
    conv_model().save(paths["conv"])
    return {"tiny_cnn": EXAMPLE, **paths}


def random_inputs(model: nnc.Model, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for i in model.inputs:
        op = model.operands[i]
        out.append(rng.uniform(-1, 1, op.dims).astype(dtype_of(op.type)))
    return out


# What every C caller starts with: the model's header and reading a whole file.
C_PRELUDE = r"""
#include HEADER
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(3); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { perror(path); exit(3); }
    fclose(f);
    *size = (size_t)n;
    return buf;
}
"""

# The caller: generic over the model through the header's query functions.
C_MAIN = C_PRELUDE + r"""
static void describe(const char *kind, int i, int type, int rank, const uint32_t *dims, size_t size) {
    printf("%s %d type %d rank %d dims", kind, i, type, rank);
    for (int d = 0; d < rank; d++) printf(" %u", (unsigned)dims[d]);
    printf(" size %zu\n", size);
}

/* usage: prog WEIGHTS|- IN_0 .. IN_n OUT_0 .. OUT_m */
int main(int argc, char **argv) {
    int ni = nnc_model_num_inputs(), no = nnc_model_num_outputs();
    if (nnc_model_abi_version() != NNC_MODEL_ABI_VERSION || ni != NNC_MODEL_NUM_INPUTS
        || no != NNC_MODEL_NUM_OUTPUTS || nnc_model_arena_size() != NNC_MODEL_ARENA_SIZE
        || nnc_model_weights_size() != NNC_MODEL_WEIGHTS_SIZE) {
        fprintf(stderr, "header and library disagree\n");
        return 4;
    }
    if (argc != 2 + ni + no) { fprintf(stderr, "usage: %s WEIGHTS|- inputs... outputs...\n", argv[0]); return 2; }
    /* out-of-range queries */
    if (nnc_model_input_type(ni) != -1 || nnc_model_output_rank(-1) != -1 || nnc_model_input_dims(ni) != NULL
        || nnc_model_output_size(no) != 0) { fprintf(stderr, "out-of-range query\n"); return 4; }

    const void *weights = NULL;
    if (strcmp(argv[1], "-") != 0) {
        size_t n;
        void *w = read_file(argv[1], &n);
        if (nnc_model_check_weights(w, n) != NNC_MODEL_OK) { fprintf(stderr, "weights do not match\n"); return 5; }
        if (n > 0) {  /* a corrupted copy is detected */
            unsigned char *bad = malloc(n);
            memcpy(bad, w, n);
            bad[n / 2] ^= 1;
            if (nnc_model_check_weights(bad, n) != NNC_MODEL_ERROR_BAD_WEIGHTS
                || nnc_model_check_weights(w, n - 1) != NNC_MODEL_ERROR_BAD_WEIGHTS) return 5;
            free(bad);
        }
        weights = w;
    } else if (!NNC_MODEL_WEIGHTS_EMBEDDED && NNC_MODEL_WEIGHTS_SIZE > 0) {
        fprintf(stderr, "this model needs its weights file\n");
        return 2;
    }
    if (NNC_MODEL_WEIGHTS_EMBEDDED) {
        if (nnc_model_embedded_weights() == NULL
            || nnc_model_check_weights(nnc_model_embedded_weights(), NNC_MODEL_WEIGHTS_SIZE) != NNC_MODEL_OK)
            return 5;
    } else if (nnc_model_embedded_weights() != NULL) {
        return 5;
    } else if (NNC_MODEL_WEIGHTS_SIZE > 0) {
        void *out0 = malloc(nnc_model_output_size(0));
        const void *ins0[NNC_MODEL_NUM_INPUTS] = {0};
        void *outs0[NNC_MODEL_NUM_OUTPUTS] = {0};
        if (nnc_model_run(ins0, outs0, NULL) != NNC_MODEL_ERROR_NO_WEIGHTS) return 5;
        free(out0);
    }

    const void *inputs[NNC_MODEL_NUM_INPUTS];
    for (int i = 0; i < ni; i++) {
        size_t n;
        inputs[i] = read_file(argv[2 + i], &n);
        if (n != nnc_model_input_size(i)) { fprintf(stderr, "input %d: %zu bytes, expected %zu\n", i, n, nnc_model_input_size(i)); return 3; }
        describe("input", i, nnc_model_input_type(i), nnc_model_input_rank(i), nnc_model_input_dims(i), n);
    }
    void *outputs[NNC_MODEL_NUM_OUTPUTS], *again[NNC_MODEL_NUM_OUTPUTS];
    for (int i = 0; i < no; i++) {
        outputs[i] = malloc(nnc_model_output_size(i));
        again[i] = malloc(nnc_model_output_size(i));
        memset(outputs[i], 0xA5, nnc_model_output_size(i));
        memset(again[i], 0x5A, nnc_model_output_size(i));
        describe("output", i, nnc_model_output_type(i), nnc_model_output_rank(i), nnc_model_output_dims(i),
                 nnc_model_output_size(i));
    }
    int status = nnc_model_run(inputs, outputs, weights);
    if (status != 0) { fprintf(stderr, "nnc_model_run: %d\n", status); return 6; }

    /* the raw entry point with a caller-owned arena gives the same bytes */
    void *arena = NULL;
    if (posix_memalign(&arena, NNC_MODEL_ARENA_ALIGNMENT, NNC_MODEL_ARENA_SIZE ? NNC_MODEL_ARENA_SIZE : 64)) return 7;
    const void *w = weights ? weights : nnc_model_embedded_weights();
    status = nnc_run((void *const *)inputs, again, w, arena);
    if (status != 0) { fprintf(stderr, "nnc_run: %d\n", status); return 6; }
    for (int i = 0; i < no; i++)
        if (memcmp(outputs[i], again[i], nnc_model_output_size(i)) != 0) { fprintf(stderr, "nnc_run differs\n"); return 8; }

    for (int i = 0; i < no; i++) {
        FILE *f = fopen(argv[2 + ni + i], "wb");
        if (!f || fwrite(outputs[i], 1, nnc_model_output_size(i), f) != nnc_model_output_size(i)) return 3;
        fclose(f);
    }
    printf("ok\n");
    return 0;
}
"""


def build_caller(tmp, header: str, link: list[str]) -> str:
    src = os.path.join(tmp, "caller.c")
    with open(src, "w") as f:
        f.write(C_MAIN.replace("HEADER", f'"{os.path.basename(header)}"'))
    exe = os.path.join(tmp, "caller")
    cmd = [CC, "-std=c11", "-D_POSIX_C_SOURCE=200112L", "-Wall", "-Wextra", "-Werror", "-pedantic",
           "-I", os.path.dirname(header), "-o", exe, src, *link, "-pthread", "-lm"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return exe


def run_caller(exe: str, tmp, model: nnc.Model, inputs: list[np.ndarray], weights: str | None) -> tuple[list, str]:
    in_paths, out_paths = [], []
    for k, x in enumerate(inputs):
        p = os.path.join(tmp, f"in{k}.bin")
        x.tofile(p)
        in_paths.append(p)
    for k in range(len(model.outputs)):
        out_paths.append(os.path.join(tmp, f"out{k}.bin"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([exe, weights or "-", *in_paths, *out_paths], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, f"caller exited {proc.returncode}: {proc.stderr}"
    outs = []
    for k, i in enumerate(model.outputs):
        op = model.operands[i]
        outs.append(np.fromfile(out_paths[k], dtype=dtype_of(op.type)).reshape(op.dims))
    return outs, proc.stdout


def expected_description(model: nnc.Model) -> str:
    lines = []
    for kind, idxs in (("input", model.inputs), ("output", model.outputs)):
        for k, i in enumerate(idxs):
            op = model.operands[i]
            size = int(np.prod(op.dims)) * dtype_of(op.type).itemsize
            lines.append(f"{kind} {k} type {int(op.type)} rank {len(op.dims)} dims {' '.join(map(str, op.dims))} size {size}")
    return "\n".join(lines)


@needs_cc
@pytest.mark.parametrize("name", ["tiny_cnn", "two_io"])
def test_shared_library_from_c_matches_python_runtime(name, models, tmp_path):
    path = models[name]
    lib = str(tmp_path / f"lib{name}.so")
    compile_in_process(path, "-o", lib)
    header = str(tmp_path / f"lib{name}.h")
    weights = lib + ".weights"
    assert os.path.exists(header) and os.path.exists(weights)
    model = nnc.Model.load(path)
    code = driver.lower(model, driver.static_input_infos(model))
    assert open(weights, "rb").read() == code.weights

    exe = build_caller(tmp_path, header, [lib, f"-Wl,-rpath,{tmp_path}"])
    inputs = random_inputs(model, seed=5)
    outs, stdout = run_caller(exe, tmp_path, model, inputs, weights)
    assert expected_description(model) in stdout
    assert stdout.strip().endswith("ok")

    ref = nnc.compile(model).run(*inputs)
    for got, want in zip(outs, ref, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)

    # `nnc run --input ... --output-dir` is the same computation
    args = []
    for k, x in enumerate(inputs):
        np.save(tmp_path / f"x{k}.npy", x)
        args += ["--input", f"input_{k}={tmp_path / f'x{k}.npy'}"]
    assert nnc_main(["run", path, *args, "--output-dir", str(tmp_path / "run")]) == 0
    for k, got in enumerate(outs):
        np.testing.assert_array_equal(np.load(tmp_path / "run" / f"output_{k}.npy"), got)


@needs_cc
def test_embedded_weights_and_separate_header(models, tmp_path):
    path = models["two_io"]
    lib = str(tmp_path / "emb.so")
    header = str(tmp_path / "inc" / "two_io_model.h")
    os.makedirs(os.path.dirname(header))
    compile_in_process(path, "-o", lib, "--embed-weights", "--header", header)
    assert not os.path.exists(lib + ".weights")
    text = open(header).read()
    assert "#define NNC_MODEL_WEIGHTS_EMBEDDED    1" in text and "embedded in emb.so" in text
    model = nnc.Model.load(path)
    exe = build_caller(tmp_path, header, [lib, f"-Wl,-rpath,{tmp_path}"])
    inputs = random_inputs(model, seed=9)
    outs, _ = run_caller(exe, tmp_path, model, inputs, None)
    for got, want in zip(outs, nnc.compile(model).run(*inputs), strict=True):
        np.testing.assert_array_equal(got, want)


@needs_cc
def test_object_file_links_into_a_c_program(models, tmp_path):
    path = models["tiny_cnn"]
    obj = str(tmp_path / "tiny.o")
    compile_in_process(path, "-o", obj, "--emit", "obj")
    data = open(obj, "rb").read()
    assert data[:4] == b"\x7fELF" and data[16] == 1  # ET_REL
    model = nnc.Model.load(path)
    exe = build_caller(tmp_path, str(tmp_path / "tiny.h"), [obj])
    inputs = random_inputs(model, seed=1)
    outs, _ = run_caller(exe, tmp_path, model, inputs, obj + ".weights")
    np.testing.assert_array_equal(outs[0], nnc.compile(model).run(*inputs)[0])


def test_artifact_object_loads_in_the_python_runtime(models):
    """The artifact object still exports nnc_run for the runtime's MCJIT loader."""
    from nnc.runtime.executable import Executable

    model = nnc.Model.load(models["two_io"])
    infos = driver.static_input_infos(model)
    art = artifact.build(driver.lower(model, infos), artifact.Target.host(), embed_weights=True)
    exe = Executable(art.code)
    inputs = random_inputs(model, seed=2)
    outs = [np.zeros(s, d) for s, d in zip(exe.output_shapes, exe.output_dtypes)]
    assert exe.run(inputs, outs) == 0
    for got, want in zip(outs, nnc.compile(model).run(*inputs), strict=True):
        np.testing.assert_array_equal(got, want)


def test_emit_mlir_llvm_obj(tmp_path, capsys):
    compile_in_process(EXAMPLE, "-o", "-", "--emit", "mlir")
    mlir = capsys.readouterr().out
    assert "func.func @main(%0: tensor<1x8x8x1xf32>) -> tensor<1x3xf32>" in mlir
    assert '"nnapi.conv_2d"' in mlir and "#nnapi.blob" in mlir

    out = tmp_path / "m.ll"
    compile_in_process(EXAMPLE, "-o", str(out), "--emit", "llvm")
    ll = out.read_text()
    assert re.search(r"^define .*i32 @nnc_run\(ptr", ll, re.M) and re.search(r"^define i32 @nnc_model_run\(", ll, re.M)
    assert not re.search(r"^define (?!internal).*@main\(", ll, re.M)  # only the ABI is exported
    assert not (tmp_path / "m.h").exists()  # no header for IR

    obj = tmp_path / "m.o"
    compile_in_process(EXAMPLE, "-o", str(obj), "--emit", "obj", "--target-cpu", "generic")
    assert obj.read_bytes()[:4] == b"\x7fELF"
    assert (tmp_path / "m.h").exists() and (tmp_path / "m.o.weights").exists()
    assert "CPU generic" in (tmp_path / "m.h").read_text()


def test_header_compiles_standalone(tmp_path):
    """The header is self-contained C99, and may be included twice."""
    model = nnc.Model.load(EXAMPLE)
    code = driver.lower(model, driver.static_input_infos(model))
    native = artifact.NativeCode(b"", code.weights, code.arena_size, code.inputs, code.outputs, artifact.Target.host())
    text = artifact.header_text(native, header_name="x.h", library="libx.so", model_name="tiny_cnn.nnc",
                                embedded=False, weights_file="libx.so.weights")  # fmt: skip
    assert "#define NNC_MODEL_INPUT_0_SIZE        ((size_t)256u)" in text
    assert "#define NNC_MODEL_OUTPUT_0_RANK       2" in text
    assert "input_0: TENSOR_FLOAT32 [1, 8, 8, 1], float, 256 bytes" in text
    if CC is not None:
        (tmp_path / "x.h").write_text(text)
        (tmp_path / "t.c").write_text('#include "x.h"\n#include "x.h"\nint f(void) { return NNC_MODEL_NUM_INPUTS; }\n')
        proc = subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-pedantic", "-c", "-o", str(tmp_path / "t.o"),
                               str(tmp_path / "t.c")], capture_output=True, text=True)  # fmt: skip
        assert proc.returncode == 0, proc.stderr


def test_bad_usage_exits_2(tmp_path, models):
    proc = nnc_cli("compile", EXAMPLE)  # no -o
    assert proc.returncode == 2 and "-o" in proc.stderr
    proc = nnc_cli("compile", EXAMPLE, "-o", str(tmp_path / "x"), "--emit", "exe")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    proc = nnc_cli("compile", EXAMPLE, "-o", "-", "--emit", "shared")
    assert proc.returncode == 2 and "give -o a path" in proc.stderr
    proc = nnc_cli("compile", EXAMPLE, "-o", str(tmp_path / "x.ll"), "--emit", "llvm", "--header", "x.h")
    assert proc.returncode == 2 and "--header only applies" in proc.stderr
    proc = nnc_cli("compile", EXAMPLE, "-o", str(tmp_path / "x.o"), "--emit", "obj", "--target-cpu", "no-such-cpu")
    assert proc.returncode == 2 and "not a CPU LLVM knows" in proc.stderr
    assert not os.listdir(tmp_path)

    # inputs that are not fully specified
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [0, 4])
    out = m.add_operand(T.TENSOR_FLOAT32, [0, 4])
    m.add_operation(Op.LOGISTIC, [a], [out])
    m.identify_inputs_and_outputs([a], [out])
    m.finish()
    m.save(tmp_path / "dyn.nnc")
    proc = nnc_cli("compile", str(tmp_path / "dyn.nnc"), "-o", str(tmp_path / "dyn.so"))
    assert proc.returncode == 2 and "input_0 has unspecified dimensions" in proc.stderr
    assert not (tmp_path / "dyn.so").exists()


def test_corrupt_model_exits_1_with_bad_data(tmp_path):
    bad = tmp_path / "bad.nnc"
    bad.write_text('{"format": "nnc-model", "version": 1, "operands": [')
    proc = nnc_cli("compile", str(bad), "-o", str(tmp_path / "bad.so"))
    assert proc.returncode == 1 and "BAD_DATA" in proc.stderr
    bad.write_text('{"format": "nnc-model", "version": 1, "operands": [{"type": "NOPE"}], "operations": []}')
    proc = nnc_cli("compile", str(bad), "-o", str(tmp_path / "bad.so"), "--emit", "obj")
    assert proc.returncode == 1 and "BAD_DATA" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad.nnc"]


def test_missing_c_compiler_is_a_clear_error(tmp_path):
    env = dict(os.environ, CC=str(tmp_path / "no-such-cc"))
    proc = nnc_cli("compile", EXAMPLE, "-o", str(tmp_path / "x.so"), env=env)
    assert proc.returncode == 1 and "no-such-cc" in proc.stderr and "--emit obj" in proc.stderr
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env["PATH"] = str(tmp_path)  # nothing in it
    proc = nnc_cli("compile", EXAMPLE, "-o", str(tmp_path / "x.so"), env=env)
    assert proc.returncode == 1 and "no C compiler found" in proc.stderr
    assert not (tmp_path / "x.so").exists()


class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_progress_indicator():
    quiet = _Stream(tty=False)
    with Progress("m.nnc", quiet, delay=5):
        pass
    assert quiet.getvalue() == ""  # fast compilations print nothing

    log = _Stream(tty=False)
    with Progress("m.nnc", log, delay=0, interval=0.01) as p:
        p.stage("lowering")
        time.sleep(0.1)
    lines = log.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("nnc: compiling m.nnc") and "compiled m.nnc in" in lines[1]

    tty = _Stream(tty=True)
    with Progress("m.nnc", tty, delay=0, interval=0.01) as p:
        p.stage("optimising")
        time.sleep(0.1)
    text = tty.getvalue()
    assert "\n" not in text and "nnc: compiling m.nnc: optimising" in text
    assert text.endswith("\r") and text.rsplit("\r", 2)[-2].strip() == ""  # line erased at the end


# A caller of the thread-count API: the default, then the model at 1 and 2 threads (outputs compared).
C_THREADS = C_PRELUDE + r"""
/* usage: prog IN_0 .. IN_n OUT_0 .. OUT_m (weights embedded) */
int main(int argc, char **argv) {
    int ni = nnc_model_num_inputs(), no = nnc_model_num_outputs();
    if (argc != 1 + ni + no) return 2;
    printf("default %d\n", nnc_model_get_num_threads());
    const void *inputs[NNC_MODEL_NUM_INPUTS];
    for (int i = 0; i < ni; i++) {
        size_t n;
        inputs[i] = read_file(argv[1 + i], &n);
        if (n != nnc_model_input_size(i)) return 3;
    }
    void *one[NNC_MODEL_NUM_OUTPUTS], *two[NNC_MODEL_NUM_OUTPUTS];
    for (int i = 0; i < no; i++) {
        one[i] = malloc(nnc_model_output_size(i));
        two[i] = malloc(nnc_model_output_size(i));
        memset(one[i], 0xA5, nnc_model_output_size(i));
        memset(two[i], 0x5A, nnc_model_output_size(i));
    }
    nnc_model_set_num_threads(1);
    if (nnc_model_get_num_threads() != 1) return 4;
    if (nnc_model_run(inputs, one, NULL) != 0) return 6;
    nnc_model_set_num_threads(2);
    if (nnc_model_get_num_threads() != 2) return 4;
    for (int k = 0; k < 20; k++)
        if (nnc_model_run(inputs, two, NULL) != 0) return 6;
    for (int i = 0; i < no; i++)
        if (memcmp(one[i], two[i], nnc_model_output_size(i)) != 0) { fprintf(stderr, "outputs differ\n"); return 8; }
    nnc_model_set_num_threads(100000);
    if (nnc_model_get_num_threads() != NNC_MODEL_MAX_THREADS) return 4;
    nnc_model_set_num_threads(0);
    printf("reset %d\n", nnc_model_get_num_threads());
    for (int i = 0; i < no; i++) {
        FILE *f = fopen(argv[1 + ni + i], "wb");
        if (!f || fwrite(one[i], 1, nnc_model_output_size(i), f) != nnc_model_output_size(i)) return 3;
        fclose(f);
    }
    printf("ok\n");
    return 0;
}
"""


@needs_cc
def test_thread_count_from_c(models, tmp_path):
    """nnc_model_set_num_threads / get from C: the default from NNC_NUM_THREADS
    or the CPUs, the model at 1 and 2 threads with equal outputs, equal to the
    Python runtime's; the pool is linked into the library, not exported.  The
    model's code calls the pool (a CONV_2D whose GEMM tiles are a parallel loop)."""
    path = models["conv"]
    conv = nnc.Model.load(path)
    assert re.search(r'call (ccc )?void @"?nnc_parallel_for"?\(', driver.lower(conv, driver.static_input_infos(conv)).llvm_ir)
    lib = str(tmp_path / "libthreads.so")
    compile_in_process(path, "-o", lib, "--embed-weights")
    header = str(tmp_path / "libthreads.h")
    text = open(header).read()
    assert "nnc_model_set_num_threads(int n)" in text and "NNC_NUM_THREADS" in text
    assert "#define NNC_MODEL_MAX_THREADS" in text
    proc = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    if proc.returncode == 0:  # binutils present: only the C ABI is exported
        assert "nnc_model_set_num_threads" in proc.stdout and "nnc_parallel_for" not in proc.stdout

    src = tmp_path / "threads.c"
    src.write_text(C_THREADS.replace("HEADER", '"libthreads.h"'))
    exe = str(tmp_path / "threads")
    cmd = [CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", str(tmp_path), "-o", exe, str(src),
           lib, f"-Wl,-rpath,{tmp_path}", "-pthread", "-lm"]  # fmt: skip
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr

    model = nnc.Model.load(path)
    inputs = random_inputs(model, seed=4)
    in_paths = []
    for k, x in enumerate(inputs):
        in_paths.append(str(tmp_path / f"in{k}.bin"))
        x.tofile(in_paths[-1])
    out_paths = [str(tmp_path / f"out{k}.bin") for k in range(len(model.outputs))]
    cpus = min(len(os.sched_getaffinity(0)), 64)
    base = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "NNC_NUM_THREADS"}
    for env_value, default in ((None, cpus), ("3", 3), ("lots", cpus), ("500", 64)):
        env = dict(base) if env_value is None else dict(base, NNC_NUM_THREADS=env_value)
        proc = subprocess.run([exe, *in_paths, *out_paths], capture_output=True, text=True, timeout=60, env=env)
        assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
        assert proc.stdout.split() == ["default", str(default), "reset", str(default), "ok"], (env_value, proc.stdout)
    ref = nnc.compile(model).run(*inputs)
    for k, want in enumerate(ref):
        got = np.fromfile(out_paths[k], dtype=want.dtype).reshape(want.shape)
        np.testing.assert_array_equal(got, want)


def test_artifact_ab_benchmark(models, tmp_path):
    """benchmarks/artifact_ab.py times two artifacts of one model in one
    process at each thread count, and names a missing weights file."""
    libs = []
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        libs.append(str(tmp_path / side / "conv.so"))
        compile_in_process(models["conv"], "-o", libs[-1])
    script = os.path.join(ROOT, "benchmarks", "artifact_ab.py")
    run = [sys.executable, script, *libs, "--rounds", "2", "--runs", "2", "--threads", "1", "2"]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["1 thread(s)", "2 thread(s)"] and all("B/A min" in x for x in lines)
    os.remove(libs[1] + ".weights")
    proc = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "conv.so.weights: no such file" in proc.stderr

