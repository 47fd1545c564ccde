"""The kernels of every x86-64 path this machine can run compute the same
results, at 1 and 2 threads.

Each model is compiled for every CPU of :func:`targets.runnable_cpus`
(generic x86-64, x86-64-v2, an AVX2 + FMA CPU, an AVX-512 CPU where the host
has AVX-512) and run through the public API on the thread pool at 1 and 2
threads.  On one target the thread counts give the same bits (the pool
splits work, it never reassociates).  Across targets the vector widths
differ (4, 8, 16 float lanes), so float sums run in other orders and FMA
contracts where the CPU has it: integer results are bit for bit the same,
float results within a relative 1e-5 of the output's magnitude.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnc
from fuzz.edges import compiling_for
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.model import dtype_of
from targets import runnable_cpus, runnable_target
from test_kernels import _kernel_model
from test_q8_kernels import conv_then_depthwise


def _rows_model() -> tuple[nnc.Model, list[np.ndarray]]:
    """SOFTMAX, LOGISTIC, TANH and MEAN over rows of 37 floats (row kernels
    with a tail on every width, element-wise math)."""
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [5, 37])
    beta = m.add_operand(T.FLOAT32)
    m.set_operand_value(beta, 1.0)
    soft, logi, tanh = (m.add_operand(T.TENSOR_FLOAT32, [5, 37]) for _ in range(3))
    axes = m.add_operand(T.TENSOR_INT32, [1])
    m.set_operand_value(axes, np.array([1], np.int32))
    keep = m.add_operand(T.INT32)
    m.set_operand_value(keep, 0)
    mean = m.add_operand(T.TENSOR_FLOAT32, [5])
    m.add_operation(Op.SOFTMAX, [x, beta], [soft])
    m.add_operation(Op.LOGISTIC, [x], [logi])
    m.add_operation(Op.TANH, [x], [tanh])
    m.add_operation(Op.MEAN, [x, axes, keep], [mean])
    m.identify_inputs_and_outputs([x], [soft, logi, tanh, mean])
    m.finish()
    return m, [np.random.default_rng(2).normal(0, 3, (5, 37)).astype(np.float32)]


def _float_kernels(filter_is_input: bool) -> tuple[nnc.Model, list[np.ndarray]]:
    m = _kernel_model(filter_is_input)
    rng = np.random.default_rng(4)
    return m, [rng.standard_normal(m.operands[i].dims).astype(np.float32) for i in m.inputs]


def _q8_kernels() -> tuple[nnc.Model, list[np.ndarray]]:
    m, x = conv_then_depthwise(np.random.default_rng(5))
    return m, [x]


def _transpose_fc() -> tuple[nnc.Model, list[np.ndarray]]:
    """TRANSPOSE of a [1, 24, 40] matrix (the blocked transposition kernel on
    every vector width) into a FULLY_CONNECTED of 40 rows whose small panel
    puts its tiles in row-major order."""
    rng = np.random.default_rng(7)
    m = nnc.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, [1, 24, 40])
    perm = m.add_operand(T.TENSOR_INT32, [3])
    m.set_operand_value(perm, np.array([0, 2, 1], np.int32))
    t = m.add_operand(T.TENSOR_FLOAT32, [1, 40, 24])
    m.add_operation(Op.TRANSPOSE, [x, perm], [t])
    w = m.add_operand(T.TENSOR_FLOAT32, [96, 24])
    m.set_operand_value(w, rng.normal(0, 0.5, (96, 24)).astype(np.float32))
    b = m.add_operand(T.TENSOR_FLOAT32, [96])
    m.set_operand_value(b, rng.normal(0, 0.1, 96).astype(np.float32))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    y = m.add_operand(T.TENSOR_FLOAT32, [40, 96])
    m.add_operation(Op.FULLY_CONNECTED, [t, w, b, act], [y])
    m.identify_inputs_and_outputs([x], [t, y])
    m.finish()
    return m, [rng.standard_normal((1, 24, 40)).astype(np.float32)]


MODELS = {
    "f32-transpose-fc": _transpose_fc,
    "f32-gemm-dw-dot": lambda: _float_kernels(False),
    "f32-transposed-filter": lambda: _float_kernels(True),
    "f32-rows": _rows_model,
    "q8-gemm-dw": _q8_kernels,
}


def _outputs(model: nnc.Model, inputs: list[np.ndarray], cpu: str, threads: int) -> tuple[list[np.ndarray], bytes]:
    """The outputs computed by ``model`` compiled for ``cpu`` at ``threads``, and its object code."""
    with compiling_for(runnable_target(cpu)):
        comp = nnc.Compilation(model)
        comp.finish()
    ex = nnc.Execution(comp)
    ex.set_num_threads(threads)
    for k, x in enumerate(inputs):
        ex.set_input(k, x)
    outs = [np.zeros(model.operands[i].dims, dtype_of(model.operands[i].type)) for i in model.outputs]
    for k, y in enumerate(outs):
        ex.set_output(k, y)
    ex.compute()
    (exe,) = comp._variants.values()
    return outs, exe.code.object_code


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_runnable_target_computes_the_same(name: str) -> None:
    model, inputs = MODELS[name]()
    cpus = runnable_cpus()
    results, objects = {}, {}
    for cpu in cpus:
        one, objects[cpu] = _outputs(model, inputs, cpu, 1)
        two, _ = _outputs(model, inputs, cpu, 2)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(one, two)), f"{cpu}: 1 and 2 threads differ"
        results[cpu] = one
    assert len(set(objects.values())) == len(cpus), "two targets got the same code: nothing compared"
    first = results[cpus[0]]
    for cpu in cpus[1:]:
        for k, (a, b) in enumerate(zip(first, results[cpu])):
            if a.dtype.kind != "f":
                assert a.tobytes() == b.tobytes(), f"output {k}: {cpus[0]} and {cpu} differ"
            else:
                scale = max(1.0, float(np.abs(a).max()))
                np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5 * scale, err_msg=f"output {k}: {cpus[0]} vs {cpu}")


def test_the_runnable_targets_cover_the_host_kernel_paths() -> None:
    """Generic x86-64 is always among them; AVX2 wherever the host has AVX2
    and FMA; AVX-512 wherever it has AVX-512F."""
    from nnc.runtime.jit import Target
    from targets import description

    host = description(Target.host())
    cpus = runnable_cpus()
    if host.arch != "x86_64":
        pytest.skip("the x86-64 kernel paths need an x86-64 host")
    assert "x86-64" in cpus and "x86-64-v2" in cpus
    assert ("haswell" in cpus) == (host.has("avx2") and host.has("fma"))
    assert ("skylake-avx512" in cpus) == all(host.has(f) for f in ("avx512f", "avx2", "fma"))
