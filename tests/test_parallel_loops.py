"""Loops marked parallel (``nnc-outline-parallel``) run through
``nnc_parallel_for`` and give bit-identical results however the pool splits
them.

The thread pool is replaced here by stand-ins compiled with llvmlite and
registered under its symbol: one that runs the whole range on the calling
thread, and ones that split it into chunks and run them last chunk first (so
that every outlined body is shown to handle an arbitrary ``[begin, end)``).
Each stand-in counts its calls, which shows the loops really were dispatched.
Results are compared with the same model compiled without the pass (the
marked loops then stay plain loops), bit for bit, and with numpy loosely.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator

import llvmlite.binding as llvm
import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, i32
from xdsl.ir import Attribute, Block

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc import driver
from nnc.passes import pipeline as passes_pipeline
from nnc.passes.lowering import recurrent_cells
from nnc.passes.outline_parallel import PARALLEL_FOR, const_index
from nnc.runtime import threadpool
from nnc.runtime.executable import Executable, generate_code
from nnc.runtime.jit import Target
from test_c_abi import build_caller, compile_in_process, needs_cc, run_caller
from test_control_flow import _compare, _graph, _ref, _scalar, _tensor, _while
from test_tflite import MODELS_DIR, execute, zoo_inputs

I32 = np.int32


# -- stand-ins for the thread pool ----------------------------------------------------------------


def _stand_in_ir(chunks: int) -> str:
    """``nnc_parallel_for`` running [0, n) as ``chunks`` contiguous pieces
    (the last may be shorter), last piece first, counting its calls in
    ``@calls``; ``chunks`` 0: one piece per iteration."""
    size = "1" if chunks == 0 else f"%n{chunks}"
    split = "" if chunks == 0 else f"""
  %np = add i64 %n, {chunks - 1}
  %n{chunks} = sdiv i64 %np, {chunks}"""
    return f"""
@calls = global i64 0
define void @{PARALLEL_FOR}(ptr %body, ptr %ctx, i64 %n) {{
entry:
  %c = load i64, ptr @calls
  %c1 = add i64 %c, 1
  store i64 %c1, ptr @calls
  %some = icmp sgt i64 %n, 0
  br i1 %some, label %start, label %done
start:{split}
  %last = sub i64 %n, 1
  %k = sdiv i64 %last, {size}
  %b0 = mul i64 %k, {size}
  br label %loop
loop:
  %b = phi i64 [ %b0, %start ], [ %bn, %loop ]
  %e0 = add i64 %b, {size}
  %short = icmp slt i64 %n, %e0
  %e = select i1 %short, i64 %n, i64 %e0
  call void %body(i64 %b, i64 %e, ptr %ctx)
  %bn = sub i64 %b, {size}
  %more = icmp sge i64 %bn, 0
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


class StandIn:
    """A compiled stand-in, registered as ``nnc_parallel_for`` while in use."""

    def __init__(self, chunks: int):
        machine = Target.host().machine()
        threadpool.install()  # the process's pool: the symbol to restore
        mod = llvm.parse_assembly(_stand_in_ir(chunks))
        mod.verify()
        self.engine = llvm.create_mcjit_compiler(mod, machine)
        self.engine.finalize_object()
        self._calls = self.engine.get_global_value_address("calls")

    @property
    def calls(self) -> int:
        return ctypes.c_int64.from_address(self._calls).value

    def __enter__(self) -> StandIn:
        self._previous = llvm.address_of_symbol(PARALLEL_FOR)
        llvm.add_symbol(PARALLEL_FOR, self.engine.get_function_address(PARALLEL_FOR))
        return self

    def __exit__(self, *exc: object) -> None:
        llvm.add_symbol(PARALLEL_FOR, self._previous)


#: chunk counts of the stand-ins: the whole range, three pieces and one piece
#: per iteration (both backwards)
CHUNKS = (1, 3, 0)


# -- running a model ----------------------------------------------------------------------------------


def lowered(model: nnc.Model, parallel: bool = True) -> str:
    """LLVM IR of ``model``, with or without nnc-outline-parallel."""
    infos = driver.static_input_infos(model)
    module, weights = driver.shaped_module(model, infos)
    pipeline = passes_pipeline.DEFAULT_PIPELINE
    if not parallel:
        pipeline = tuple(p for p in pipeline if p != "nnc-outline-parallel")
    return _lower(module, weights, infos, pipeline)


def _lower(module, weights, infos, pipeline):  # type: ignore[no-untyped-def]
    saved = passes_pipeline.DEFAULT_PIPELINE
    passes_pipeline.DEFAULT_PIPELINE = pipeline  # read by default_pipeline() in the driver
    try:
        return driver.lower_shaped(module, weights, infos)
    finally:
        passes_pipeline.DEFAULT_PIPELINE = saved


def run(model: nnc.Model, inputs: list[np.ndarray], outputs: list[np.ndarray], parallel: bool = True) -> list[np.ndarray]:
    """Compile ``model`` afresh (so that it binds the current stand-in) and run it."""
    exe = Executable(generate_code(lowered(model, parallel), Target.host()))
    outs = [np.zeros_like(o) for o in outputs]
    assert exe.run(inputs, outs) == 0
    return outs


# -- models ----------------------------------------------------------------------------------------------


def _scalars(m: nnc.Model, values: list[int]) -> list[int]:
    return [_scalar(m, T.INT32, v) for v in values]


def _dw(m: nnc.Model, x: int, shape: tuple[int, int, int, int], pad: int, stride: int, seed: int,
        act: int = 0, dilation: int = 1) -> int:  # fmt: skip
    """A 3x3 DEPTHWISE_CONV_2D (NHWC float32, multiplier 1) on ``x``."""
    n, h, w, c = shape
    rng = np.random.default_rng(seed)
    f = _tensor(m, T.TENSOR_FLOAT32, [1, 3, 3, c], rng.standard_normal((1, 3, 3, c)).astype(np.float32))
    b = _tensor(m, T.TENSOR_FLOAT32, [c], rng.standard_normal(c).astype(np.float32))
    eff = 2 * dilation + 1
    oh, ow = (h + 2 * pad - eff) // stride + 1, (w + 2 * pad - eff) // stride + 1
    o = _tensor(m, T.TENSOR_FLOAT32, [n, oh, ow, c])
    nchw = m.add_operand(T.BOOL)
    m.set_operand_value(nchw, False)
    head, tail = _scalars(m, [pad, pad, pad, pad, stride, stride, 1, act]), _scalars(m, [dilation, dilation])
    m.add_operation(Op.DEPTHWISE_CONV_2D, [x, f, b, *head, nchw, *tail], [o])
    return o


def dw_model(shape=(1, 24, 24, 40), pad=1, stride=1, dilation=1) -> nnc.Model:  # type: ignore[no-untyped-def]
    return _graph([(T.TENSOR_FLOAT32, list(shape))], lambda m, x: [_dw(m, x, shape, pad, stride, 1, 1, dilation)])


X = (1, 16, 16, 32)


def while_dw_model() -> nnc.Model:
    """x, i = x, 0; while i < n: x = dw(x); i += 1; returns x (n input-only)."""
    state = [(T.TENSOR_FLOAT32, list(X)), (T.TENSOR_INT32, [1]), (T.TENSOR_INT32, [1])]
    cond = _graph(state, lambda m, x, i, n: [_compare(m, Op.LESS, i, n)])

    def body(m, x, i, n):  # type: ignore[no-untyped-def]
        one = _tensor(m, T.TENSOR_INT32, [1], np.array([1], I32))
        i2 = _tensor(m, T.TENSOR_INT32, [1])
        m.add_operation(Op.ADD, [i, one, *_scalars(m, [0])], [i2])
        return [_dw(m, x, X, 1, 1, 2), i2]

    return _while(cond, _graph(state, body), [0, np.array([0], I32), 1],
                  [state[0], state[2]], state[:2], returned=[0])  # fmt: skip


def if_dw_model() -> nnc.Model:
    """y = dw(x) if c else dw'(x) (two different filters)."""
    then = _graph([(T.TENSOR_FLOAT32, list(X))], lambda m, x: [_dw(m, x, X, 1, 1, 3)])
    other = _graph([(T.TENSOR_FLOAT32, list(X))], lambda m, x: [_dw(m, x, X, 1, 1, 4)])
    m = nnc.Model()
    c, x, y = _tensor(m, T.TENSOR_BOOL8, [1]), _tensor(m, T.TENSOR_FLOAT32, list(X)), _tensor(m, T.TENSOR_FLOAT32, list(X))
    m.add_operation(Op.IF, [c, _ref(m, then), _ref(m, other), x], [y])
    m.identify_inputs_and_outputs([c, x], [y])
    m.finish()
    return m


def _input(shape: tuple[int, ...], seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def np_dw(x: np.ndarray, model_seed: int, pad: int, stride: int, act_relu: bool, dilation: int = 1) -> np.ndarray:
    """The depthwise convolution of :func:`_dw` in numpy (float64)."""
    n, h, w, c = x.shape
    rng = np.random.default_rng(model_seed)
    f = rng.standard_normal((1, 3, 3, c)).astype(np.float32)[0].astype(np.float64)
    b = rng.standard_normal(c).astype(np.float32).astype(np.float64)
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    eff = 2 * dilation + 1
    oh, ow = (h + 2 * pad - eff) // stride + 1, (w + 2 * pad - eff) // stride + 1
    out = np.zeros((n, oh, ow, c)) + b
    for kh in range(3):
        for kw in range(3):
            r, q = kh * dilation, kw * dilation
            out += xp[:, r : r + stride * (oh - 1) + 1 : stride, q : q + stride * (ow - 1) + 1 : stride, :] * f[kh, kw]
    return np.maximum(out, 0) if act_relu else out


# -- tests ----------------------------------------------------------------------------------------------


DW_CASES = {
    "same": dict(shape=(1, 24, 24, 40)),
    "stride2": dict(shape=(1, 33, 30, 24), stride=2),
    "batches": dict(shape=(3, 20, 20, 16)),
    "dilation": dict(shape=(1, 26, 26, 48), pad=2, dilation=2),
}


@pytest.fixture(params=CHUNKS, ids=lambda k: f"chunks{k}")
def stand_in(request: pytest.FixtureRequest) -> Iterator[StandIn]:
    with StandIn(request.param) as s:
        yield s


_SERIAL: dict[str, np.ndarray] = {}


def serial_dw(case: str, x: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The case's output without nnc-outline-parallel (computed once per case)."""
    if case not in _SERIAL:
        (_SERIAL[case],) = run(dw_model(**DW_CASES[case]), [x], [like], parallel=False)
    return _SERIAL[case]


@pytest.mark.parametrize("case", DW_CASES, ids=list(DW_CASES))
def test_depthwise_rows_bit_identical(case: str, stand_in: StandIn) -> None:
    kw = DW_CASES[case]
    model = dw_model(**kw)
    x = _input(kw["shape"])
    ref = np_dw(x, 1, kw.get("pad", 1), kw.get("stride", 1), True, kw.get("dilation", 1)).astype(np.float32)
    before = stand_in.calls
    (out,) = run(model, [x], [ref])
    assert stand_in.calls > before, "the rows loop was not dispatched"
    assert out.tobytes() == serial_dw(case, x, ref).tobytes()
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_while_body_dispatches(stand_in: StandIn) -> None:
    model = while_dw_model()
    x, n = _input(X), np.array([3], I32)
    before = stand_in.calls
    (out,) = run(model, [x, n], [np.zeros(X, np.float32)])
    assert stand_in.calls - before == 3
    (serial,) = run(model, [x, n], [np.zeros(X, np.float32)], parallel=False)
    assert out.tobytes() == serial.tobytes()
    ref = x
    for _ in range(3):
        ref = np_dw(ref, 2, 1, 1, False).astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("cond", [True, False])
def test_if_branch_dispatches(cond: bool, stand_in: StandIn) -> None:
    model = if_dw_model()
    x = _input(X)
    c = np.array([cond], np.bool_)
    before = stand_in.calls
    (out,) = run(model, [c, x], [np.zeros(X, np.float32)])
    assert stand_in.calls - before == 1
    (serial,) = run(model, [c, x], [np.zeros(X, np.float32)], parallel=False)
    assert out.tobytes() == serial.tobytes()
    np.testing.assert_allclose(out, np_dw(x, 3 if cond else 4, 1, 1, False), rtol=1e-4, atol=1e-4)


def test_tiny_loops_stay_serial() -> None:
    """Below the minimum work nothing is outlined and the pool is not referenced."""
    ir = lowered(dw_model(shape=(1, 2, 2, 4))).llvm_ir
    assert PARALLEL_FOR not in ir and "nnc_par_" not in ir


def test_models_without_parallel_loops_do_not_reference_the_pool() -> None:
    m = nnc.Model()
    a, b = m.add_operand(T.TENSOR_FLOAT32, [4]), m.add_operand(T.TENSOR_FLOAT32, [4])
    o = m.add_operand(T.TENSOR_FLOAT32, [4])
    m.add_operation(Op.ADD, [a, b, *_scalars(m, [0])], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    m.finish()
    assert PARALLEL_FOR not in lowered(m).llvm_ir


def test_public_api_runs_with_the_default_pool() -> None:
    """Through nnc.Execution, with whatever ``nnc_parallel_for`` the runtime provides."""
    model = dw_model()
    x = _input((1, 24, 24, 40))
    c = nnc.Compilation(model)
    c.finish()
    ex = nnc.Execution(c)
    out = np.zeros((1, 24, 24, 40), np.float32)
    ex.set_input(0, x)
    ex.set_output(0, out)
    ex.compute()
    (serial,) = run(model, [x], [out], parallel=False)
    assert out.tobytes() == serial.tobytes()


@needs_cc
def test_shared_library_with_parallel_loops(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A ``.so`` from ``nnc compile`` of a model with parallel loops links and
    runs from C, with the same results as without the pass."""
    model = dw_model()
    path = str(tmp_path / "dw.nnc")
    model.save(path)
    lib = str(tmp_path / "libdw.so")
    compile_in_process(path, "-o", lib)
    exe = build_caller(tmp_path, str(tmp_path / "libdw.h"), [lib, f"-Wl,-rpath,{tmp_path}"])
    x = _input((1, 24, 24, 40))
    (out,), stdout = run_caller(exe, tmp_path, model, [x], lib + ".weights")
    assert stdout.strip().endswith("ok")
    assert out.tobytes() == serial_dw("same", x, out).tobytes()


def test_shallow_sequence_input_products_stay_on_the_calling_thread() -> None:
    """An LSTM sequence's input products (depth 64 here) are read by the
    serial recurrence right after, so below PARALLEL_INPUT_DEPTH they are
    not dispatched, nor is any time step's product (the shared text
    classifier then has one parallel loop: its embedding GATHER); from that
    depth the four gates' input products are."""
    path = os.path.join(MODELS_DIR, "lstm_textcls_float32.tflite")
    model = nnc.import_tflite(path)
    infos = driver.static_input_infos(model)
    assert driver.lower_to_llvm(model, infos).llvm_ir.count(f'call ccc void @"{PARALLEL_FOR}"') == 1
    io = np.load(os.path.join(MODELS_DIR, "lstm_textcls_float32.io.npz"))
    serial = run_model(model, io, 1)
    saved = recurrent_cells.PARALLEL_INPUT_DEPTH
    recurrent_cells.PARALLEL_INPUT_DEPTH = 64
    try:
        assert driver.lower_to_llvm(model, infos).llvm_ir.count(f'call ccc void @"{PARALLEL_FOR}"') == 5
        assert all(a.tobytes() == b.tobytes() for a, b in zip(serial, run_model(model, io, 2)))
    finally:
        recurrent_cells.PARALLEL_INPUT_DEPTH = saved
        driver._CACHE.clear()


def run_model(model: nnc.Model, io, threads: int) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """``model``'s outputs for its ``.io.npz`` input (zero states) at
    ``threads``, compiled afresh (the in-process cache cleared)."""
    driver._CACHE.clear()
    comp = nnc.Compilation(model)
    comp.finish()
    return execute(model, comp, zoo_inputs(model, io), threads)


def _const(v: int, t: Attribute | None = None) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(v, IndexType() if t is None else t))


def test_work_estimate_folds_bounds_exactly() -> None:
    """The work estimate's constants (nnc-outline-parallel's const_index):
    a kernel's whole-vector bound ``n - n % 16`` folds; signed division and
    remainder round toward zero as arith's do; a division by zero, a result
    that would wrap its type and unknown operands stay unknown; and only an
    upper bound takes min(known, unknown) as the known value."""
    n, lanes = _const(1000), _const(16)
    rem = arith.RemSIOp(n, lanes)
    assert const_index(arith.SubiOp(n, rem).result) == 992
    assert const_index(arith.DivSIOp(_const(-7), _const(2)).result) == -3
    assert const_index(arith.RemSIOp(_const(-7), _const(2)).result) == -1
    assert const_index(arith.FloorDivSIOp(_const(-7), _const(2)).result) == -4
    assert const_index(arith.CeilDivSIOp(_const(7), _const(2)).result) == 4
    assert const_index(arith.DivSIOp(_const(7), _const(0)).result) is None
    assert const_index(arith.MuliOp(_const(1 << 20, i32), _const(1 << 12, i32)).result) is None  # wraps i32
    assert const_index(arith.IndexCastOp(_const(1 << 40), i32).result) is None  # truncated
    unknown = Block(arg_types=[IndexType()]).args[0]
    clipped = arith.MinSIOp(_const(4096), arith.SubiOp(unknown, _const(3)))
    assert const_index(clipped.result) is None
    assert const_index(clipped.result, upper=True) == 4096
    assert const_index(arith.AddiOp(unknown, _const(1)).result, {unknown: 41}) == 42
