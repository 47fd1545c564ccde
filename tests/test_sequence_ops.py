"""GATHER and the sequence recurrent operations against NumPy references.

The main configuration is the one of issue 5's TFLite text classifier
(``lstm_textcls_float32.tflite``): an embedding GATHER (float32 table
[5000, 64], int32 indices [1, 64], axis 0) feeding a batch-major
UNIDIRECTIONAL_SEQUENCE_LSTM (input [1, 64, 64], 128 units, tanh, cell clip
10, no projection clip, no peephole, projection, layer norm or CIFG) whose
state tensors are model inputs and whose final state comes back through the
feature-level-4 outputs 1 and 2.  NNAPI's form of that LSTM has 28 inputs
with the four layer-norm weights omitted (Android validates exactly 28).

The references follow Android's LSTMCell::LSTMStep / RNN::RNNStep in float64,
so the comparisons allow float32 rounding only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

GATES = ("input", "forget", "cell", "output")
TANH = 4


# -- references ------------------------------------------------------------------------------


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@dataclass
class LstmWeights:
    """Float32 weights of an LSTM without peephole, projection, layer norm or CIFG."""

    w_in: dict[str, np.ndarray]
    w_rec: dict[str, np.ndarray]
    bias: dict[str, np.ndarray]

    @classmethod
    def random(cls, rng: np.random.Generator, n_input: int, n_cell: int, scale: float = 0.15) -> LstmWeights:
        def mat(rows: int, cols: int) -> np.ndarray:
            return rng.uniform(-scale, scale, (rows, cols)).astype(np.float32)

        return cls(
            {g: mat(n_cell, n_input) for g in GATES},
            {g: mat(n_cell, n_cell) for g in GATES},
            {g: rng.uniform(-0.5, 0.5, n_cell).astype(np.float32) for g in GATES},
        )


def lstm_reference(x_tm, w: LstmWeights, h0, c0, cell_clip: float):
    """Time-major x [T, B, I] -> (outputs [T, B, N], h_T, c_T) in float64."""
    h, c = h0.astype(np.float64), c0.astype(np.float64)
    outs = []
    for x in x_tm.astype(np.float64):
        pre = {g: x @ w.w_in[g].T.astype(np.float64) + h @ w.w_rec[g].T.astype(np.float64) + w.bias[g] for g in GATES}
        i, f, o = sigmoid(pre["input"]), sigmoid(pre["forget"]), sigmoid(pre["output"])
        c = f * c + i * np.tanh(pre["cell"])
        if cell_clip > 0:
            c = np.clip(c, -cell_clip, cell_clip)
        h = o * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def rnn_reference(x_tm, w, r, b, h0, relu: bool):
    """Time-major x [T, B, I] -> (outputs [T, B, N], h_T) in float64."""
    h = h0.astype(np.float64)
    outs = []
    for x in x_tm.astype(np.float64):
        h = x @ w.T.astype(np.float64) + h @ r.T.astype(np.float64) + b
        if relu:
            h = np.maximum(h, 0.0)
        outs.append(h)
    return np.stack(outs), h


# -- model builders ------------------------------------------------------------------------------


@dataclass
class _Builder:
    m: nnc.Model = field(default_factory=nnc.Model)

    def tensor(self, t: T, dims, value=None) -> int:
        i = self.m.add_operand(t, list(dims))
        if value is not None:
            self.m.set_operand_value(i, value)
        return i

    def const(self, value: np.ndarray) -> int:
        return self.tensor(T.TENSOR_FLOAT32, value.shape, value)

    def scalar(self, t: T, value) -> int:
        i = self.m.add_operand(t)
        self.m.set_operand_value(i, value)
        return i

    def none(self, rank: int) -> int:
        """An omitted optional tensor operand."""
        i = self.m.add_operand(T.TENSOR_FLOAT32, [0] * rank)
        self.m.set_operand_value(i, None)
        return i


def add_lstm(
    b: _Builder,
    x: int,
    x_shape,
    w: LstmWeights,
    cell_clip: float,
    time_major: bool,
    n_outputs: int,
) -> tuple[int, int, list[int]]:
    """UNIDIRECTIONAL_SEQUENCE_LSTM (28 inputs, layer norm omitted) on ``x``;
    returns (output_state_in, cell_state_in, outputs)."""
    n_cell = w.w_in["output"].shape[0]
    batch = x_shape[1] if time_major else x_shape[0]
    h_in = b.tensor(T.TENSOR_FLOAT32, [batch, n_cell])
    c_in = b.tensor(T.TENSOR_FLOAT32, [batch, n_cell])
    ins = [x]
    ins += [b.const(w.w_in[g]) for g in GATES]
    ins += [b.const(w.w_rec[g]) for g in GATES]
    ins += [b.none(1) for _ in range(3)]  # no peephole
    ins += [b.const(w.bias[g]) for g in GATES]
    ins += [b.none(2), b.none(1)]  # no projection
    ins += [h_in, c_in]
    ins += [b.scalar(T.INT32, TANH), b.scalar(T.FLOAT32, cell_clip), b.scalar(T.FLOAT32, 0.0)]
    ins += [b.scalar(T.BOOL, time_major)]
    ins += [b.none(1) for _ in range(4)]  # no layer norm
    assert len(ins) == 28
    seq = [x_shape[0], x_shape[1], n_cell]
    outs = [b.tensor(T.TENSOR_FLOAT32, seq)]
    if n_outputs == 3:
        outs += [b.tensor(T.TENSOR_FLOAT32, [batch, n_cell]), b.tensor(T.TENSOR_FLOAT32, [batch, n_cell])]
    b.m.add_operation(Op.UNIDIRECTIONAL_SEQUENCE_LSTM, ins, outs)
    return h_in, c_in, outs


def lstm_model(x_shape, w: LstmWeights, cell_clip: float, time_major: bool, n_outputs: int) -> nnc.Model:
    b = _Builder()
    x = b.tensor(T.TENSOR_FLOAT32, x_shape)
    h_in, c_in, outs = add_lstm(b, x, x_shape, w, cell_clip, time_major, n_outputs)
    b.m.identify_inputs_and_outputs([x, h_in, c_in], outs)
    b.m.finish()
    return b.m


def to_time_major(x: np.ndarray, time_major: bool) -> np.ndarray:
    return x if time_major else x.transpose(1, 0, 2)


def check_close(got: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=2e-5)


# -- UNIDIRECTIONAL_SEQUENCE_LSTM ----------------------------------------------------------------

#: issue 5's classifier: batch 1, 64 steps of 64 features, 128 units, cell clip 10
TEXTCLS = dict(batch=1, steps=64, n_input=64, n_cell=128, cell_clip=10.0)


def _textcls_weights(seed: int) -> LstmWeights:
    return LstmWeights.random(np.random.default_rng(seed), TEXTCLS["n_input"], TEXTCLS["n_cell"])


@pytest.fixture(scope="module")
def textcls_lstm():
    """The classifier's LSTM (batch-major, 3 outputs), compiled once."""
    w = _textcls_weights(5)
    shape = (TEXTCLS["batch"], TEXTCLS["steps"], TEXTCLS["n_input"])
    return w, shape, nnc.compile(lstm_model(shape, w, TEXTCLS["cell_clip"], time_major=False, n_outputs=3))


def test_textcls_lstm_zero_state(textcls_lstm):
    w, shape, compiled = textcls_lstm
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    zeros = np.zeros((1, TEXTCLS["n_cell"]), np.float32)
    out, h, c = compiled.run(x, zeros, zeros)
    ref, ref_h, ref_c = lstm_reference(to_time_major(x, False), w, zeros, zeros, TEXTCLS["cell_clip"])
    assert out.shape == shape[:2] + (TEXTCLS["n_cell"],)
    check_close(out, to_time_major(ref, False))
    check_close(h, ref_h)
    check_close(c, ref_c)
    # The last output step is the final output state.
    np.testing.assert_array_equal(out[:, -1, :], h)


def test_textcls_lstm_nonzero_state_and_cell_clip():
    """Non-zero incoming state, and gates biased so the cell state grows past
    the clip of 10 (the reference without the clip differs, so the clip is
    exercised)."""
    w = _textcls_weights(6)
    n = TEXTCLS["n_cell"]
    w.bias["input"][:] = 6.0
    w.bias["forget"][:] = 6.0
    w.bias["cell"][: n // 2] = 4.0
    shape = (TEXTCLS["batch"], TEXTCLS["steps"], TEXTCLS["n_input"])
    compiled = nnc.compile(lstm_model(shape, w, TEXTCLS["cell_clip"], time_major=False, n_outputs=3))
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    h0 = rng.uniform(-1, 1, (1, n)).astype(np.float32)
    c0 = rng.uniform(-9.5, 9.5, (1, n)).astype(np.float32)
    out, h, c = compiled.run(x, h0, c0)
    ref, ref_h, ref_c = lstm_reference(to_time_major(x, False), w, h0, c0, TEXTCLS["cell_clip"])
    _, _, unclipped_c = lstm_reference(to_time_major(x, False), w, h0, c0, 0.0)
    assert np.abs(unclipped_c).max() > 12.0 and np.abs(ref_c).max() == pytest.approx(10.0)
    check_close(out, to_time_major(ref, False))
    check_close(h, ref_h)
    check_close(c, ref_c)


def test_textcls_lstm_state_round_trip(textcls_lstm):
    """Feeding the returned state into a second run continues the sequence,
    as the importer does with TFLite's variable state tensors."""
    w, shape, compiled = textcls_lstm
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (1, 2 * shape[1], shape[2])).astype(np.float32)
    zeros = np.zeros((1, TEXTCLS["n_cell"]), np.float32)
    first, h, c = compiled.run(x[:, : shape[1]], zeros, zeros)
    second, h2, c2 = compiled.run(x[:, shape[1] :], h, c)
    ref, ref_h, ref_c = lstm_reference(to_time_major(x, False), w, zeros, zeros, TEXTCLS["cell_clip"])
    check_close(np.concatenate([first, second], axis=1), to_time_major(ref, False))
    check_close(h2, ref_h)
    check_close(c2, ref_c)


@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("n_outputs", [1, 3])
def test_lstm_layouts_and_output_counts(time_major, n_outputs):
    """Batch 3 (a real transpose for batch-major), both layouts, 1 or 3 outputs."""
    rng = np.random.default_rng(7)
    w = LstmWeights.random(rng, 5, 4, scale=0.5)
    steps, batch = 6, 3
    shape = (steps, batch, 5) if time_major else (batch, steps, 5)
    compiled = nnc.compile(lstm_model(shape, w, 0.0, time_major, n_outputs))
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    h0 = rng.uniform(-1, 1, (batch, 4)).astype(np.float32)
    c0 = rng.uniform(-1, 1, (batch, 4)).astype(np.float32)
    got = compiled.run(x, h0, c0)
    ref, ref_h, ref_c = lstm_reference(to_time_major(x, time_major), w, h0, c0, 0.0)
    assert len(got) == n_outputs
    check_close(got[0], to_time_major(ref, time_major))
    if n_outputs == 3:
        check_close(got[1], ref_h)
        check_close(got[2], ref_c)


@pytest.mark.parametrize("batch", [3, 4, 9])
def test_lstm_step_with_run_time_weights_and_a_batch(batch: int) -> None:
    """LSTM (one step) whose input weights come at run time: they are
    transposed into panels in the arena for the GEMM (a batch of 4 or more
    rows), the input products land in a temporary, and the recurrent
    products read it through views of its gate blocks.  Those views keep
    the temporary alive: the panels must not be placed over it (they were,
    and the gates and outputs came out wrong)."""
    rng = np.random.default_rng(21)
    n_input, n_cell = 16, 16  # deeper than a vector on every x86-64 target: both products use the kernels
    w = LstmWeights.random(rng, n_input, n_cell, scale=0.3)
    b = _Builder()
    x = b.tensor(T.TENSOR_FLOAT32, [batch, n_input])
    h_in, c_in = (b.tensor(T.TENSOR_FLOAT32, [batch, n_cell]) for _ in range(2))
    fed = [(b.tensor(T.TENSOR_FLOAT32, w.w_in[g].shape), w.w_in[g]) for g in GATES]
    ins = [x, *(i for i, _ in fed), *(b.const(w.w_rec[g]) for g in GATES), *(b.none(1) for _ in range(3))]
    ins += [b.const(w.bias[g]) for g in GATES] + [b.none(2), b.none(1), h_in, c_in]
    ins += [b.scalar(T.INT32, TANH), b.scalar(T.FLOAT32, 0.0), b.scalar(T.FLOAT32, 0.0)]
    outs = [b.tensor(T.TENSOR_FLOAT32, [batch, 4 * n_cell])] + [b.tensor(T.TENSOR_FLOAT32, [batch, n_cell]) for _ in range(3)]
    b.m.add_operation(Op.LSTM, ins, outs)
    b.m.identify_inputs_and_outputs([x, h_in, c_in, *(i for i, _ in fed)], outs[1:])
    b.m.finish()
    xs = rng.uniform(-1, 1, (1, batch, n_input)).astype(np.float32)
    h0, c0 = (rng.uniform(-1, 1, (batch, n_cell)).astype(np.float32) for _ in range(2))
    h, c, out = nnc.compile(b.m).run(xs[0], h0, c0, *(v for _, v in fed))
    _, want_h, want_c = lstm_reference(xs, w, h0, c0, 0.0)
    for got, want in ((h, want_h), (c, want_c), (out, want_h)):
        check_close(got, want)


def _lowered(model: nnc.Model) -> str:
    from nnc.importer import import_model
    from nnc.passes.pipeline import run_passes

    module = import_model(model).module
    run_passes(module, ["nnapi-shape-inference", "convert-nnapi-to-linalg"])
    return str(module)


def test_lstm_emits_one_loop_over_time():
    """The time steps are one scf.for in the generated code: the IR does not
    grow with the sequence length (no unrolled copies of the cell)."""
    w = LstmWeights.random(np.random.default_rng(8), 3, 2)
    short = _lowered(lstm_model((1, 2, 3), w, 0.0, False, 3))
    long = _lowered(lstm_model((1, 40, 3), w, 0.0, False, 3))
    assert short.count("scf.for") == long.count("scf.for") == 1
    assert short.count("linalg.generic") == long.count("linalg.generic")


# -- GATHER ---------------------------------------------------------------------------------------


def gather_model(t: T, in_shape, axis: int, idx_shape, indices=None, scale=0.0, zero_point=0) -> nnc.Model:
    m = nnc.Model()
    x = m.add_operand(t, list(in_shape), scale=scale, zero_point=zero_point)
    a = m.add_operand(T.INT32)
    m.set_operand_value(a, axis)
    idx = m.add_operand(T.TENSOR_INT32, list(idx_shape))
    if indices is not None:
        m.set_operand_value(idx, np.asarray(indices, np.int32))
    k = axis % len(in_shape)
    out_shape = [*in_shape[:k], *idx_shape, *in_shape[k + 1 :]]
    out = m.add_operand(t, out_shape, scale=scale, zero_point=zero_point)
    m.add_operation(Op.GATHER, [x, a, idx], [out])
    m.identify_inputs_and_outputs([x] if indices is not None else [x, idx], [out])
    m.finish()
    return m


@pytest.mark.parametrize(
    "in_shape, axis, idx_shape",
    [((5, 3), 0, (4,)), ((2, 5, 3), 1, (2, 3)), ((2, 3, 4), -1, (3,)), ((4,), 0, (2, 2)), ((3, 4), -2, (1,))],
)
def test_gather_matches_take(in_shape, axis, idx_shape):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(in_shape).astype(np.float32)
    n = in_shape[axis]
    indices = rng.integers(0, n, idx_shape).astype(np.int32)
    [got] = nnc.compile(gather_model(T.TENSOR_FLOAT32, in_shape, axis, idx_shape)).run(x, indices)
    np.testing.assert_array_equal(got, np.take(x, indices, axis=axis))


@pytest.mark.parametrize("t", [T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED])
def test_gather_copies_other_types_verbatim(t):
    dtype = {T.TENSOR_INT32: np.int32, T.TENSOR_QUANT8_ASYMM: np.uint8, T.TENSOR_QUANT8_ASYMM_SIGNED: np.int8}[t]
    info = np.iinfo(dtype)
    x = np.random.default_rng(12).integers(info.min, info.max, (3, 4), endpoint=True).astype(dtype)
    scale = 0.0 if t == T.TENSOR_INT32 else 0.5
    m = gather_model(t, (3, 4), 1, (5,), scale=scale, zero_point=3 if scale else 0)
    indices = np.array([3, 0, 0, 2, 1], np.int32)
    [got] = nnc.compile(m).run(x, indices)
    np.testing.assert_array_equal(got, x[:, indices])


@pytest.mark.parametrize("bad", [-1, 5, 2**31 - 1, -(2**31)])
def test_gather_index_out_of_range_is_an_error(bad):
    compiled = nnc.compile(gather_model(T.TENSOR_FLOAT32, (5, 2), 0, (3,)))
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    [ok] = compiled.run(x, np.array([4, 0, 1], np.int32))
    assert ok.tolist() == [[8, 9], [0, 1], [2, 3]]
    with pytest.raises(nnc.OpFailedError, match=r"operation 0 \(GATHER\)"):
        compiled.run(x, np.array([0, bad, 1], np.int32))


def test_gather_constant_index_out_of_range_is_rejected():
    with pytest.raises(nnc.BadDataError, match="outside dimension 0"):
        gather_model(T.TENSOR_FLOAT32, (5, 2), 0, (2,), indices=[1, 5])


# -- the classifier's front end: GATHER into UNIDIRECTIONAL_SEQUENCE_LSTM -----------------------


def test_textcls_embedding_into_lstm():
    rng = np.random.default_rng(13)
    vocab, steps, dim, n_cell = 5000, TEXTCLS["steps"], TEXTCLS["n_input"], TEXTCLS["n_cell"]
    table = rng.uniform(-1, 1, (vocab, dim)).astype(np.float32)
    w = _textcls_weights(14)
    b = _Builder()
    tokens = b.tensor(T.TENSOR_INT32, [1, steps])
    emb = b.tensor(T.TENSOR_FLOAT32, [1, steps, dim])
    b.m.add_operation(Op.GATHER, [b.const(table), b.scalar(T.INT32, 0), tokens], [emb])
    h_in, c_in, outs = add_lstm(b, emb, (1, steps, dim), w, TEXTCLS["cell_clip"], False, 3)
    b.m.identify_inputs_and_outputs([tokens, h_in, c_in], outs)
    b.m.finish()
    compiled = nnc.compile(b.m)
    ids = rng.integers(0, vocab, (1, steps)).astype(np.int32)
    zeros = np.zeros((1, n_cell), np.float32)
    out, h, c = compiled.run(ids, zeros, zeros)
    ref, ref_h, ref_c = lstm_reference(to_time_major(table[ids], False), w, zeros, zeros, TEXTCLS["cell_clip"])
    check_close(out, to_time_major(ref, False))
    check_close(h, ref_h)
    check_close(c, ref_c)
    bad = ids.copy()
    bad[0, 7] = vocab
    with pytest.raises(nnc.OpFailedError, match=r"operation 0 \(GATHER\)"):
        compiled.run(bad, zeros, zeros)


# -- UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN --------------------------------------


def _rnn_weights(rng: np.random.Generator, n_input: int, units: int):
    return (
        rng.uniform(-0.4, 0.4, (units, n_input)).astype(np.float32),
        rng.uniform(-0.4, 0.4, (units, units)).astype(np.float32),
        rng.uniform(-0.5, 0.5, units).astype(np.float32),
    )


@pytest.mark.parametrize("time_major", [0, 1])
def test_unidirectional_sequence_rnn(time_major):
    rng = np.random.default_rng(21)
    steps, batch, n_input, units = 5, 3, 4, 6
    shape = (steps, batch, n_input) if time_major else (batch, steps, n_input)
    w, r, bias = _rnn_weights(rng, n_input, units)
    b = _Builder()
    x = b.tensor(T.TENSOR_FLOAT32, shape)
    h_in = b.tensor(T.TENSOR_FLOAT32, [batch, units])
    out = b.tensor(T.TENSOR_FLOAT32, [shape[0], shape[1], units])
    h_out = b.tensor(T.TENSOR_FLOAT32, [batch, units])
    ins = [x, b.const(w), b.const(r), b.const(bias), h_in, b.scalar(T.INT32, 1), b.scalar(T.INT32, time_major)]
    b.m.add_operation(Op.UNIDIRECTIONAL_SEQUENCE_RNN, ins, [out, h_out])
    b.m.identify_inputs_and_outputs([x, h_in], [out, h_out])
    b.m.finish()
    xv = rng.uniform(-1, 1, shape).astype(np.float32)
    h0 = rng.uniform(-1, 1, (batch, units)).astype(np.float32)
    got, got_h = nnc.compile(b.m).run(xv, h0)
    ref, ref_h = rnn_reference(to_time_major(xv, bool(time_major)), w, r, bias, h0, relu=True)
    check_close(got, to_time_major(ref, bool(time_major)))
    check_close(got_h, ref_h)


def test_bidirectional_sequence_rnn_merged_with_states():
    """Forward over t = 0..T-1, backward over T-1..0, merged in the last
    dimension (fw first), plus both final hidden states; batch-major."""
    rng = np.random.default_rng(22)
    steps, batch, n_input, fw_units, bw_units = 4, 2, 3, 5, 2
    fw = _rnn_weights(rng, n_input, fw_units)
    bw = _rnn_weights(rng, n_input, bw_units)
    b = _Builder()
    x = b.tensor(T.TENSOR_FLOAT32, [batch, steps, n_input])
    fw_h = b.tensor(T.TENSOR_FLOAT32, [batch, fw_units])
    bw_h = b.tensor(T.TENSOR_FLOAT32, [batch, bw_units])
    ins = [x, *(b.const(a) for a in fw), fw_h, *(b.const(a) for a in bw), bw_h]
    ins += [b.none(3), b.none(2), b.none(2)]  # no aux input
    ins += [b.scalar(T.INT32, 0), b.scalar(T.BOOL, False), b.scalar(T.BOOL, True)]
    outs = [
        b.tensor(T.TENSOR_FLOAT32, [batch, steps, fw_units + bw_units]),
        b.tensor(T.TENSOR_FLOAT32, [batch, fw_units]),
        b.tensor(T.TENSOR_FLOAT32, [batch, bw_units]),
    ]
    b.m.add_operation(Op.BIDIRECTIONAL_SEQUENCE_RNN, ins, outs)
    b.m.identify_inputs_and_outputs([x, fw_h, bw_h], outs)
    b.m.finish()
    xv = rng.uniform(-1, 1, (batch, steps, n_input)).astype(np.float32)
    h0f = rng.uniform(-1, 1, (batch, fw_units)).astype(np.float32)
    h0b = rng.uniform(-1, 1, (batch, bw_units)).astype(np.float32)
    got, got_fh, got_bh = nnc.compile(b.m).run(xv, h0f, h0b)
    x_tm = to_time_major(xv, False)
    ref_f, ref_fh = rnn_reference(x_tm, *fw, h0f, relu=False)
    ref_b, ref_bh = rnn_reference(x_tm[::-1], *bw, h0b, relu=False)
    merged = np.concatenate([ref_f, ref_b[::-1]], axis=2)
    check_close(got, to_time_major(merged, False))
    check_close(got_fh, ref_fh)
    check_close(got_bh, ref_bh)


@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("batch,n_in,n_cell", [(3, 20, 24), (5, 33, 18), (1, 16, 7)])
def test_lstm_vector_kernel_path_batches_and_ragged_sizes(time_major, batch, n_in, n_cell):
    """Depths of 16 or more take the vector-kernel gate matmuls (inputs for all
    steps before the loop, recurrent products per step); batches above one
    and sizes that are not multiples of the vector width must agree too."""
    rng = np.random.default_rng(11)
    w = LstmWeights.random(rng, n_in, n_cell, scale=0.3)
    steps = 7
    shape = (steps, batch, n_in) if time_major else (batch, steps, n_in)
    compiled = nnc.compile(lstm_model(shape, w, 3.0, time_major, 3))
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    h0 = rng.uniform(-1, 1, (batch, n_cell)).astype(np.float32)
    c0 = rng.uniform(-1, 1, (batch, n_cell)).astype(np.float32)
    got = compiled.run(x, h0, c0)
    ref, ref_h, ref_c = lstm_reference(to_time_major(x, time_major), w, h0, c0, 3.0)
    check_close(got[0], to_time_major(ref, time_major))
    check_close(got[1], ref_h)
    check_close(got[2], ref_c)
