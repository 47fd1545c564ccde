"""Data-dependent sizes inside the graph (issue 15): BOX_WITH_NMS_LIMIT keeps a
number of boxes known only at run time, and that size flows through ADD and
FULLY_CONNECTED (whose rows of 4 are two inputs of size 2) to the model's
outputs, which report their actual dimensions; a caller's buffer too small
for them is OUTPUT_INSUFFICIENT_SIZE with the actual dimensions.  The same
chain as a native artifact gives a C caller the actual dimensions."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.cli import main as nnc_main
from nnc.errors import OutputInsufficientSizeError, UnsupportedOperationError

N = 5  # boxes; 2 classes (background + 1), so at most 5 kept
#: non-overlapping boxes: hard NMS keeps every box above the score threshold
ROIS = np.array([[0, 0, 1, 1, 10 * i, 10 * i, 10 * i + 2, 10 * i + 3] for i in range(N)], np.float32)
BIAS = np.array([1, 2, 3, 4], np.float32)
W = np.array([[1, 2], [-1, 0.5], [0, 3]], np.float32)
FB = np.array([0.5, -1, 2], np.float32)
THRESHOLD = 0.3
CC = shutil.which(os.environ.get("CC", "").split()[0] if os.environ.get("CC", "").strip() else "cc")


def _scalar(m: nnc.Model, t: T, v) -> int:
    k = m.add_operand(t)
    m.set_operand_value(k, v)
    return k


def _const(m: nnc.Model, v: np.ndarray, t: T = T.TENSOR_FLOAT32) -> int:
    k = m.add_operand(t, list(v.shape))
    m.set_operand_value(k, v)
    return k


def _kept_boxes(m: nnc.Model, threshold: float = THRESHOLD) -> tuple[int, int, list[int]]:
    """Model inputs scores [N, 2] and batch indices [N], and the four outputs
    of a hard-NMS BOX_WITH_NMS_LIMIT over the constant ROIS: scores [n],
    boxes [n, 4], classes [n], batch indices [n], n known only at run time."""
    scores = m.add_operand(T.TENSOR_FLOAT32, [N, 2])
    batch = m.add_operand(T.TENSOR_INT32, [N])
    f = lambda v: _scalar(m, T.FLOAT32, v)
    i = lambda v: _scalar(m, T.INT32, v)
    outs = [m.add_operand(T.TENSOR_FLOAT32, [0]), m.add_operand(T.TENSOR_FLOAT32, [0, 4]),
            m.add_operand(T.TENSOR_INT32, [0]), m.add_operand(T.TENSOR_INT32, [0])]  # fmt: skip
    m.add_operation(Op.BOX_WITH_NMS_LIMIT, [scores, _const(m, ROIS), batch, f(threshold), i(-1), i(0), f(0.5), f(1.0), f(0.1)], outs)
    return scores, batch, outs


def chain_model() -> nnc.Model:
    """BOX_WITH_NMS_LIMIT -> ADD (bias broadcast along the boxes) ->
    FULLY_CONNECTED; outputs: the kept scores [n], the ADD [n, 4] and the
    FULLY_CONNECTED [2n, 3], n known only at run time."""
    m = nnc.Model()
    scores, batch, outs = _kept_boxes(m)
    none = _scalar(m, T.INT32, 0)
    added = m.add_operand(T.TENSOR_FLOAT32, [0, 4])
    m.add_operation(Op.ADD, [outs[1], _const(m, BIAS), none], [added])
    fc = m.add_operand(T.TENSOR_FLOAT32, [0, 3])
    m.add_operation(Op.FULLY_CONNECTED, [added, _const(m, W), _const(m, FB), none], [fc])
    m.identify_inputs_and_outputs([scores, batch], [outs[0], added, fc])
    m.finish()
    return m


def reference(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the chain computes for one batch of non-overlapping boxes: the
    boxes above the threshold by descending score."""
    keep = [b for b in np.argsort(-scores[:, 1], kind="stable") if scores[b, 1] > THRESHOLD]
    boxes = ROIS[keep, 4:8].reshape(-1, 4)
    added = boxes + BIAS
    fc = added.reshape(-1, 2) @ W.T + FB
    return scores[keep, 1], added, fc


@pytest.fixture(scope="module")
def compilation() -> nnc.Compilation:
    c = nnc.Compilation(chain_model())
    c.finish()
    return c


def _run(compilation: nnc.Compilation, scores: np.ndarray, sizes=(N, N * 4, N * 6)):
    ex = nnc.Execution(compilation)
    ex.set_input(0, scores)
    ex.set_input(1, np.zeros(N, np.int32))
    bufs = [np.full(s, -7, np.float32) for s in sizes]
    for k, b in enumerate(bufs):
        ex.set_output(k, b)
    ex.compute()
    return ex, bufs


@pytest.mark.parametrize("kept", [0, 1, 3, N])
def test_data_dependent_size_flows_through_two_operations(compilation, kept: int) -> None:
    scores = np.zeros((N, 2), np.float32)
    scores[:kept, 1] = np.linspace(0.9, 0.4, kept, dtype=np.float32)[::-1]  # ascending: NMS reorders them
    ex, bufs = _run(compilation, scores)
    want = reference(scores)
    assert [list(ex.get_output_operand_dimensions(k)) for k in range(3)] == [[kept], [kept, 4], [2 * kept, 3]]
    for k, w in enumerate(want):
        np.testing.assert_allclose(bufs[k][: w.size], w.reshape(-1), rtol=1e-6)
        assert (bufs[k][w.size :] == -7).all()  # nothing written past the actual size


def test_output_buffer_smaller_than_the_bound_but_enough(compilation) -> None:
    scores = np.zeros((N, 2), np.float32)
    scores[1, 1] = 0.8
    ex, bufs = _run(compilation, scores, sizes=(1, 4, 6))
    assert list(ex.get_output_operand_dimensions(2)) == [2, 3]
    np.testing.assert_allclose(bufs[2], reference(scores)[2].reshape(-1), rtol=1e-6)


def test_output_insufficient_size_reports_the_actual_dimensions(compilation) -> None:
    scores = np.zeros((N, 2), np.float32)
    scores[:3, 1] = [0.5, 0.6, 0.7]
    ex = nnc.Execution(compilation)
    ex.set_input(0, scores)
    ex.set_input(1, np.zeros(N, np.int32))
    for k, s in enumerate((3, 12, 2)):  # the FULLY_CONNECTED output needs 18
        ex.set_output(k, np.zeros(s, np.float32))
    with pytest.raises(OutputInsufficientSizeError) as info:
        ex.compute()
    assert info.value.output_shapes == [(3,), (3, 4), (6, 3)]
    assert info.value.sufficient == [True, True, False]
    dims = ex.get_output_operand_dimensions(2)
    assert list(dims) == [6, 3] and dims.code == nnc.ResultCode.OUTPUT_INSUFFICIENT_SIZE


def test_bounded_input_to_an_operation_without_a_rule_is_unsupported() -> None:
    """SOFTMAX along the data-dependent axis cannot compute over the bound."""
    m = nnc.Model()
    scores, batch, outs = _kept_boxes(m, 0.3)
    f = lambda v: _scalar(m, T.FLOAT32, v)
    sm = m.add_operand(T.TENSOR_FLOAT32, [0])
    m.add_operation(Op.SOFTMAX, [outs[0], f(1.0)], [sm])
    m.identify_inputs_and_outputs([scores, batch], [sm])
    m.finish()
    with pytest.raises(UnsupportedOperationError, match="data-dependent dimension"):
        nnc.Compilation(m).finish()


# -- a native artifact called from C ------------------------------------------------------------------

_C_CALLER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libchain.h"

int main(void) {
    if (nnc_model_abi_version() != NNC_MODEL_ABI_VERSION || nnc_model_output_dynamic_axis(2) != 0
        || nnc_model_output_dynamic_axis(3) != -1 || NNC_MODEL_OUTPUT_2_DYNAMIC_AXIS != 0) return 2;
    float scores[%(n)d * 2] = {%(scores)s};
    int32_t batch[%(n)d] = {0};
    const void *ins[2] = {scores, batch};
    void *outs[3], *again[3];
    for (int i = 0; i < 3; i++) {
        outs[i] = malloc(nnc_model_output_size(i));  /* the bound's size */
        again[i] = malloc(nnc_model_output_size(i));
    }
    uint32_t dims[NNC_MODEL_OUTPUT_DIMS_COUNT], dims2[NNC_MODEL_OUTPUT_DIMS_COUNT];
    int status = nnc_model_run_with_dims(ins, outs, NULL, dims);
    if (status != 0) return 3;
    /* the raw entry with the caller's arena, then the dims from that arena */
    void *arena = NULL;
    if (posix_memalign(&arena, NNC_MODEL_ARENA_ALIGNMENT, NNC_MODEL_ARENA_SIZE)) return 4;
    if (nnc_run((void *const *)ins, again, nnc_model_embedded_weights(), arena) != 0) return 5;
    nnc_model_output_actual_dims(arena, dims2);
    if (memcmp(dims, dims2, sizeof dims) != 0) return 6;
    printf("dims");
    for (int i = 0; i < NNC_MODEL_OUTPUT_DIMS_COUNT; i++) printf(" %%u", (unsigned)dims[i]);
    printf("\n");
    int d = 0;
    for (int i = 0; i < 3; i++) {
        size_t n = 1;
        for (int j = 0; j < nnc_model_output_rank(i); j++) n *= dims[d++];
        if (memcmp(outs[i], again[i], n * sizeof(float)) != 0) return 7;
        printf("out%%d", i);
        for (size_t j = 0; j < n; j++) printf(" %%.9g", (double)((float *)outs[i])[j]);
        printf("\n");
    }
    return 0;
}
"""


@pytest.mark.skipif(CC is None, reason="no C compiler (cc or $CC) on PATH")
@pytest.mark.parametrize("kept", [0, 3])
def test_native_artifact_reports_actual_dims_to_c(tmp_path, kept: int) -> None:
    """The data-dependent size reaches a C caller of the native artifact:
    nnc_model_run_with_dims (and nnc_run + nnc_model_output_actual_dims)
    give the actual dimensions, the buffers hold the actual tensors."""
    model_file = str(tmp_path / "chain.nnc")
    chain_model().save(model_file)
    lib = str(tmp_path / "libchain.so")
    assert nnc_main(["compile", model_file, "-o", lib, "--embed-weights"]) == 0
    scores = np.zeros((N, 2), np.float32)
    scores[:kept, 1] = [0.5, 0.9, 0.7][:kept]
    src = tmp_path / "caller.c"
    src.write_text(_C_CALLER % {"n": N, "scores": ", ".join(f"{float(v)!r}f" for v in scores.reshape(-1))})
    exe = str(tmp_path / "caller")
    subprocess.run([CC, "-std=c11", "-D_POSIX_C_SOURCE=200112L", "-Wall", "-Werror", "-o", exe, str(src),
                    f"-I{tmp_path}", lib, f"-Wl,-rpath,{tmp_path}", "-pthread", "-lm"],
                   check=True, capture_output=True, text=True)  # fmt: skip
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert [int(x) for x in lines[0].split()[1:]] == [kept, kept, 4, 2 * kept, 3]
    for k, want in enumerate(reference(scores)):
        got = np.array([float(x) for x in lines[1 + k].split()[1:]], np.float32)
        np.testing.assert_array_equal(got, want.reshape(-1).astype(np.float32))


def test_concatenation_along_the_data_dependent_axis_compacts_the_rows() -> None:
    """CONCATENATION of the kept boxes [n, 4] and a fixed [2, 4] along axis 0:
    the fixed rows follow the n actual ones, the output has n + 2 rows."""
    m = nnc.Model()
    scores, batch, outs = _kept_boxes(m)
    i = lambda v: _scalar(m, T.INT32, v)
    tail = np.arange(8, dtype=np.float32).reshape(2, 4)
    cat = m.add_operand(T.TENSOR_FLOAT32, [0, 4])
    m.add_operation(Op.CONCATENATION, [outs[1], _const(m, tail), i(0)], [cat])
    m.identify_inputs_and_outputs([scores, batch], [cat])
    m.finish()
    c = nnc.Compilation(m)
    c.finish()
    for kept in (0, 2):
        s = np.zeros((N, 2), np.float32)
        s[:kept, 1] = [0.6, 0.8][:kept]
        ex = nnc.Execution(c)
        ex.set_input(0, s)
        ex.set_input(1, np.zeros(N, np.int32))
        buf = np.full((N + 2) * 4, -7, np.float32)
        ex.set_output(0, buf)
        ex.compute()
        assert list(ex.get_output_operand_dimensions(0)) == [kept + 2, 4]
        want = np.concatenate([reference(s)[1] - BIAS, tail])
        np.testing.assert_array_equal(buf[: want.size], want.reshape(-1))


def test_compilation_cache_keeps_the_data_dependent_dimensions(tmp_path) -> None:
    """An entry loaded from the compilation cache still knows which outputs
    have a data-dependent dimension (cache format 3)."""
    model = chain_model()
    events = []
    for _ in range(2):
        c = nnc.Compilation(model)
        c.set_caching(str(tmp_path), b"d" * 32)
        c.finish()
        events.append(c.cache_events[-1][0])
        scores = np.zeros((N, 2), np.float32)
        scores[:2, 1] = [0.4, 0.8]
        ex, bufs = _run(c, scores)
        assert list(ex.get_output_operand_dimensions(2)) == [4, 3]
        np.testing.assert_allclose(bufs[2][:12], reference(scores)[2].reshape(-1), rtol=1e-6)
    assert events == ["saved", "hit"]


def test_transposed_output_is_compacted() -> None:
    """BOX_WITH_NMS_LIMIT -> ADD -> TRANSPOSE: the data-dependent dimension
    becomes the last ([4, n]); the output is the actual [4, n] tensor."""
    m = nnc.Model()
    scores, batch, outs = _kept_boxes(m)
    i = lambda v: _scalar(m, T.INT32, v)
    added = m.add_operand(T.TENSOR_FLOAT32, [0, 4])
    m.add_operation(Op.ADD, [outs[1], _const(m, BIAS), i(0)], [added])
    tr = m.add_operand(T.TENSOR_FLOAT32, [4, 0])
    m.add_operation(Op.TRANSPOSE, [added, _const(m, np.array([1, 0], np.int32), T.TENSOR_INT32)], [tr])
    m.identify_inputs_and_outputs([scores, batch], [tr])
    m.finish()
    c = nnc.Compilation(m)
    c.finish()
    for kept in (0, 1, 3):
        s = np.zeros((N, 2), np.float32)
        s[:kept, 1] = [0.6, 0.8, 0.7][:kept]
        ex = nnc.Execution(c)
        ex.set_input(0, s)
        ex.set_input(1, np.zeros(N, np.int32))
        buf = np.full(4 * N, -7, np.float32)
        ex.set_output(0, buf)
        ex.compute()
        assert list(ex.get_output_operand_dimensions(0)) == [4, kept]
        np.testing.assert_array_equal(buf[: 4 * kept], reference(s)[1].T.reshape(-1))
