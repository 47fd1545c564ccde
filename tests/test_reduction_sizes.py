"""Every reduction-style lowering compiles at every last-dimension size 1..130.

LLVM's loop vectorizer has assertions on in llvmlite's build; a reduction loop
of an unlucky trip count once aborted the whole process inside
``computeBestVF`` (SOFTMAX over 30 or 31 floats on znver3, issue 17).  Which
sizes trigger such a bug depends on the loop's shape and the CPU's cost model,
so each operation is compiled at every size from 1 to 130, as ten models of
13 sizes per operation, for znver3 (the CPU of the
report; the abort also reproduced here for znver1/2, haswell and
skylake-avx512, not for x86-64).  MAX_POOL_2D's window (1 x n) is such a
reduction loop too: with llvm.maxnum it aborted the same way at n = 30, 31.
Only the LLVM IR and the object are produced (the code is never loaded, so
any CPU can be named).  Why ten models: LLVM's time grows faster than the
size of a function, and each model lowers to one function (its operations
inlined into ``main``): LOG_SOFTMAX's 130 sizes in one model took LLVM 16 s,
in ten models 7.2 s, in 26 models of five 6.6 s (lowering: 3.5 s for each
split).  Each loop, and so what the vectoriser decides for it, is the same
either way.  The compilation runs in a forked child so that an
abort fails this test instead of killing the test run.
"""

from __future__ import annotations

import dataclasses
import os
import signal

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.runtime.executable import CompiledIR, generate_code
from nnc.runtime.jit import Target

SIZES = range(1, 131)
#: sizes per model (see the module doc)
CHUNK = 13
ROWS = 2
#: the CPU whose cost model aborted (issue 17)
CPU = "znver3"


def _scalar(m: nnc.Model, t: T, value: float | int | bool) -> int:
    o = m.add_operand(t)
    m.set_operand_value(o, value)
    return o


def _axes(m: nnc.Model, axes: list[int]) -> int:
    v = np.asarray(axes, np.int32)
    o = m.add_operand(T.TENSOR_INT32, [v.size])
    m.set_operand_value(o, v)
    return o


def _add(m: nnc.Model, op: Op, n: int) -> tuple[int, int]:
    """``op`` reducing (or normalising along) a last dimension of size ``n``."""
    shape, out_type = [ROWS, n], T.TENSOR_FLOAT32
    if op == Op.INSTANCE_NORMALIZATION:
        shape = [1, 1, n, ROWS]  # NHWC: the statistics run over H x W, per channel
    elif op == Op.MAX_POOL_2D:
        shape = [1, 1, n, ROWS]  # one 1 x n window per channel
    x = m.add_operand(T.TENSOR_FLOAT32, shape)
    out_shape = shape
    if op == Op.MAX_POOL_2D:
        # VALID padding, strides 1, filter n x 1 (width, height), no activation
        ins = [x, *(_scalar(m, T.INT32, v) for v in (2, 1, 1, n, 1, 0))]
        out_shape = [1, 1, 1, ROWS]
    elif op == Op.SOFTMAX:
        ins = [x, _scalar(m, T.FLOAT32, 1.0)]
    elif op == Op.LOG_SOFTMAX:
        ins = [x, _scalar(m, T.FLOAT32, 1.0), _scalar(m, T.INT32, -1)]
    elif op == Op.L2_NORMALIZATION:
        ins = [x]
    elif op == Op.LOCAL_RESPONSE_NORMALIZATION:
        ins = [x, _scalar(m, T.INT32, 2), *(_scalar(m, T.FLOAT32, v) for v in (1.0, 1.0, 0.5))]
    elif op == Op.INSTANCE_NORMALIZATION:
        ins = [x, *(_scalar(m, T.FLOAT32, v) for v in (1.0, 0.0, 1e-5)), _scalar(m, T.BOOL, False)]
    elif op == Op.MEAN:
        ins, out_shape = [x, _axes(m, [1]), _scalar(m, T.INT32, 0)], [ROWS]
    elif op in (Op.ARGMAX, Op.ARGMIN):
        ins, out_shape, out_type = [x, _scalar(m, T.INT32, 1)], [ROWS], T.TENSOR_INT32
    else:  # REDUCE_*
        ins, out_shape = [x, _axes(m, [1]), _scalar(m, T.BOOL, False)], [ROWS]
    y = m.add_operand(out_type, out_shape)
    m.add_operation(op, ins, [y])
    return x, y


def _models(op: Op) -> list[nnc.Model]:
    """``op`` at every size of :data:`SIZES`, :data:`CHUNK` sizes a model."""
    models = []
    for k in range(0, len(SIZES), CHUNK):
        m = nnc.Model()
        pairs = [_add(m, op, n) for n in SIZES[k : k + CHUNK]]
        m.identify_inputs_and_outputs([x for x, _ in pairs], [y for _, y in pairs])
        m.finish()
        models.append(m)
    return models


def _hot(ir: CompiledIR) -> CompiledIR:
    """``ir`` without nnc-mark-cold's ``optsize``: a model this small is
    cold, and a module of cold functions skips LLVM's middle end, so its
    loops would never meet the vectoriser this test is about."""
    return dataclasses.replace(ir, llvm_ir=ir.llvm_ir.replace(" optsize", ""))


def _compiles_in_child(models: list[nnc.Model]) -> int:
    """The child's wait status: 0 when the objects for :data:`CPU` were generated
    (in the child itself, not in nnc's LLVM worker: this tests the IR)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        code = 1
        try:
            target = Target.for_cpu(CPU)
            for model in models:
                infos = [model.operands[i].info() for i in model.inputs]
                generate_code(_hot(driver.lower(model, infos, target=target)), target)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


@pytest.mark.parametrize(
    "op",
    [
        Op.SOFTMAX, Op.LOG_SOFTMAX, Op.L2_NORMALIZATION, Op.LOCAL_RESPONSE_NORMALIZATION,
        Op.INSTANCE_NORMALIZATION, Op.MEAN, Op.REDUCE_SUM, Op.REDUCE_PROD, Op.REDUCE_MAX,
        Op.REDUCE_MIN, Op.ARGMAX, Op.ARGMIN, Op.MAX_POOL_2D,
    ],
    ids=lambda op: op.name,
)  # fmt: skip
def test_reduction_compiles_at_every_size(op: Op) -> None:
    status = _compiles_in_child(_models(op))
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        pytest.fail(f"compiling {op.name} for {CPU} over last dimensions {SIZES.start}..{SIZES.stop - 1} died with {sig}")
    assert os.WEXITSTATUS(status) == 0, f"compiling {op.name} raised (see the child's output above)"
