"""Results do not depend on the thread count (issue 11).

The generated code splits each parallel layer (GEMM tiles, depthwise rows,
blocks of dot products) into contiguous chunks of independent iterations; each
output element is computed by one iteration in the same order whichever
thread runs it.  So the model zoo's outputs must be bit-identical at 1, 2 and
4 threads, through the real thread pool, and every model must actually reach
the pool (its code calls ``nnc_parallel_for``), or the comparison shows
nothing.  The C side (a shared library at 1 and 2 threads) is in
tests/test_c_abi.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import nnc
from nnc import driver
from nnc.passes.outline_parallel import PARALLEL_FOR
from nnc.tflite import import_tflite
from test_tflite import cache_dir, run, zoo_inputs, zoo_path  # noqa: F401 - cache_dir is a fixture

#: float32 and int8 models of the zoo, and a transformer (batch matrix
#: products, row kernels).  The LSTM text classifier runs on the calling
#: thread alone (its input products are too shallow to be worth other cores,
#: tests/test_parallel_loops.py); its parallel form is compared there.
MODELS = ["mobilenet_v1_0.5_160_float32", "mobilenet_v1_0.5_160_int8", "text_encoder_float32"]
THREADS = (1, 2, 4)


def outputs_at(model: nnc.Model, inputs: list[np.ndarray], cache_dir: str, threads: int) -> list[bytes]:
    return [y.tobytes() for y in run(model, inputs, cache_dir, threads)]


@pytest.mark.parametrize("name", MODELS)
def test_outputs_bit_identical_across_thread_counts(name, cache_dir):
    model = import_tflite(zoo_path(name, ".tflite"))
    io = np.load(zoo_path(name, ".io.npz"))
    inputs = zoo_inputs(model, io)
    results = {t: outputs_at(model, inputs, cache_dir, t) for t in THREADS}
    assert results[2] == results[1] and results[4] == results[1]
    # The same again at 2 threads: no state left over between computes.
    assert outputs_at(model, inputs, cache_dir, 2) == results[1]


@pytest.mark.parametrize("name", MODELS)
def test_zoo_models_reach_the_thread_pool(name):
    model = import_tflite(zoo_path(name, ".tflite"))
    code = driver.lower(model, driver.static_input_infos(model))
    assert re.search(rf'call (ccc )?void @"?{PARALLEL_FOR}"?\(', code.llvm_ir)
