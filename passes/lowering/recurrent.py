"""Recurrent operations: LSTM, RNN, SVDF and the sequence operations
UNIDIRECTIONAL_SEQUENCE_LSTM/RNN and BIDIRECTIONAL_SEQUENCE_LSTM/RNN, and
the integer cells QUANTIZED_16BIT_LSTM and QUANTIZED_LSTM (their steps are in
:mod:`nnc.passes.lowering.recurrent_q8`).

Each lowering follows Android's reference implementation (``LSTM.cpp``,
``RNN.cpp``, ``SVDF.cpp``, ``UnidirectionalSequenceLSTM.cpp``, ... in
``nn/common/operations``) step by step: LSTM gates are initialised with their
bias (or zero under layer normalisation) and accumulate the matrix products,
then peephole terms, layer normalisation, activations and clipping are
applied in LSTMCell's order, and the scratch buffer ends up holding the same
gate blocks as Android's.  This module reads each operation's operands and
outputs; the cell steps and the time-step loops they share are in
:mod:`nnc.passes.lowering.recurrent_cells`.

Activation codes of LSTM and SVDF are TfLite's fused activations
(0 none, 1 relu, 2 relu1, 3 relu6, 4 tanh, 6 sigmoid).

(LSH_PROJECTION, which Android lists with these, is in
:mod:`nnc.passes.lowering.hashing`.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32

from nnc.dialects.rules.recurrent import (
    BIDI_ACTIVATION,
    BIDI_AUX_INPUT,
    BIDI_BW_CELL,
    BIDI_FW_CELL,
    BIDI_MERGE,
    BIDI_TIME_MAJOR,
    LSTM_CELL,
    SEQ_LSTM_CELL,
    SEQ_TIME_MAJOR,
)
from nnc.enums import OperationType as Op
from nnc.passes.lowering.base import Emitter, LoweringContext, Value, affine_map, lowering
from nnc.passes.lowering.recurrent_cells import (
    LstmCell,
    Slab,
    assign_rows,
    element_type,
    lstm_sequence,
    lstm_step,
    matvec_acc,
    rnn_sequence,
    rnn_step,
    sequence_output,
    tflite_activation,
    time_major_input,
    write_sequence,
)
from nnc.passes.lowering.recurrent_q8 import quantized_16bit_lstm_step, quantized_lstm_step

# -- LSTM ----------------------------------------------------------------------------------------

ACTIVATION, CELL_CLIP, PROJ_CLIP = 20, 21, 22


def _cell_params(ctx: LoweringContext, first: int = ACTIVATION) -> tuple[int, float, float]:
    """(activation, cell_clip, proj_clip) from three consecutive scalar inputs."""
    return ctx.scalar(first), ctx.scalar(first + 1), ctx.scalar(first + 2)


@lowering(Op.LSTM)
def lstm(ctx: LoweringContext) -> None:
    """One step of LSTMCell::LSTMStep (float32); the gates live in the scratch
    output, blocks of [batch, num_units] in Android's order (input,) cell,
    forget, output."""
    cell = LstmCell.from_inputs(ctx, LSTM_CELL, *_cell_params(ctx))
    x = ctx.input(LSTM_CELL.weights - 1)
    h_in, c_in = (ctx.input(i) for i in LSTM_CELL.states)
    scratch, h_out, c_out, out = (ctx.output(i) for i in range(4))
    batch = ctx.shape(x)[0]
    n_gates, n_cell = len(cell.gates), cell.num_units
    if ctx.shape(scratch) == (batch, n_gates * n_cell):
        gates_buf = ctx.reshaped(scratch, [n_gates, batch, n_cell])
        own_scratch = True
    else:
        # Declared with the other CIFG width (see the LSTM rule): keep the
        # gates in a temporary and zero the scratch output.
        gates_buf = ctx.alloc([n_gates, batch, n_cell], f32)
        own_scratch = False
    lstm_step(ctx, cell, x, h_in, c_in, gates_buf, out, c_out)
    ctx.copy(out, h_out)
    if not own_scratch:
        ctx.fill(scratch, 0.0)


@lowering(Op.QUANTIZED_16BIT_LSTM)
def quantized_16bit_lstm(ctx: LoweringContext) -> None:
    """QuantizedLSTMCell::eval: see :func:`~nnc.passes.lowering.recurrent_q8.quantized_16bit_lstm_step`."""
    quantized_16bit_lstm_step(ctx)


@lowering(Op.QUANTIZED_LSTM)
def quantized_lstm(ctx: LoweringContext) -> None:
    """qlstm::execute: see :func:`~nnc.passes.lowering.recurrent_q8.quantized_lstm_step`."""
    quantized_lstm_step(ctx)


# -- unidirectional sequences ----------------------------------------------------------------------


def _state(ctx: LoweringContext, k: int, like: Value) -> Value:
    """Output ``k`` when the operation has it, else a temporary shaped like ``like``."""
    if k < len(ctx.outputs):
        return ctx.output(k)
    return ctx.alloc(ctx.shape(like), element_type(like))


@lowering(Op.UNIDIRECTIONAL_SEQUENCE_LSTM)
def unidirectional_sequence_lstm(ctx: LoweringContext) -> None:
    """UnidirectionalSequenceLSTM: LSTMStep over each time step (an ``scf.for``),
    batch-major sequences transposed to time-major and back as Android does;
    with 3 outputs the state is carried in output_state_out/cell_state_out."""
    cell = LstmCell.from_inputs(ctx, SEQ_LSTM_CELL, *_cell_params(ctx))
    time_major = bool(ctx.scalar(SEQ_TIME_MAJOR))
    h0, c0 = (ctx.input(i) for i in SEQ_LSTM_CELL.states)
    out = ctx.output(0)
    xs = time_major_input(ctx, ctx.input(0), time_major)
    ys, copy_out = sequence_output(ctx, out, time_major)
    lstm_sequence(ctx, cell, xs, h0, c0, ys, _state(ctx, 1, h0), _state(ctx, 2, c0))
    if copy_out:
        write_sequence(ctx, ys, out, time_major)


@lowering(Op.UNIDIRECTIONAL_SEQUENCE_RNN)
def unidirectional_sequence_rnn(ctx: LoweringContext) -> None:
    """UnidirectionalSequenceRNN: RNNStep over each time step (an ``scf.for``);
    with 2 outputs the hidden state is carried in hidden_state_out."""
    time_major = bool(ctx.scalar(6))
    h0, out = ctx.input(4), ctx.output(0)
    xs = time_major_input(ctx, ctx.input(0), time_major)
    ys, copy_out = sequence_output(ctx, out, time_major)
    weights = [ctx.input(i) for i in (1, 2, 3)]
    rnn_sequence(ctx, xs, weights, h0, ys, _state(ctx, 1, h0), ctx.scalar(5))
    if copy_out:
        write_sequence(ctx, ys, out, time_major)


# -- bidirectional sequences -----------------------------------------------------------------------


@dataclass
class _Direction:
    """One direction of a bidirectional op: its time-major input, where its
    sequence goes (output ``out`` at feature ``offset``) and which outputs
    hold its final state (None: temporaries)."""

    xs: Value
    out: int
    offset: int
    reverse: bool
    states: int | None


def _bidi_directions(
    ctx: LoweringContext, xs: Value, bw_xs: Value, fw_size: int, merge: bool, n_states: int
) -> list[_Direction]:
    """Android's layout of a bidirectional op's outputs: fw (and bw unless
    merged: then bw follows fw in the last dimension of output 0), then the
    optional state outputs, ``n_states`` per direction."""
    first_state = 1 if merge else 2
    with_states = len(ctx.outputs) > first_state
    return [
        _Direction(xs, 0, 0, False, first_state if with_states else None),
        _Direction(bw_xs, 0 if merge else 1, fw_size if merge else 0, True,
                   first_state + n_states if with_states else None),  # fmt: skip
    ]


def _run_direction(
    ctx: LoweringContext,
    d: _Direction,
    size: int,
    time_major: bool,
    run: Callable[[Value, Callable[[int, Value], Value]], None],
) -> None:
    """Give ``run(ys, state)`` a time-major buffer for the direction's steps
    (``state(k, like)``: the direction's k-th state output or a temporary),
    then write the steps into the direction's output."""
    out = ctx.output(d.out)
    ys, copy_out = sequence_output(ctx, out, time_major, size)

    def state(k: int, like: Value) -> Value:
        if d.states is None:
            return ctx.alloc(ctx.shape(like), element_type(like))
        return ctx.output(d.states + k)

    run(ys, state)
    if copy_out:
        write_sequence(ctx, ys, out, time_major, d.offset)


def _aux_sequence(ctx: LoweringContext, index: int, time_major: bool) -> Value | None:
    return time_major_input(ctx, ctx.input(index), time_major) if ctx.has_input(index) else None


@lowering(Op.BIDIRECTIONAL_SEQUENCE_LSTM)
def bidirectional_sequence_lstm(ctx: LoweringContext) -> None:
    """BidirectionalSequenceLSTM: a forward and a backward :func:`lstm_sequence`.

    Linking modes as Android: an aux input without aux weights is the
    backward direction's input (parallel linking); with aux weights it is
    multiplied into both directions' gates (cross linking).  Layer
    normalisation is on for both directions iff the forward input layer-norm
    weights are given (Android's single ``use_layer_norm``)."""
    params = _cell_params(ctx, BIDI_ACTIVATION)
    assert BIDI_FW_CELL.layer_norm is not None  # the bidirectional LSTM has layer-norm weights
    layer_norm = ctx.has_input(BIDI_FW_CELL.layer_norm)
    cells = [
        LstmCell.from_inputs(ctx, c, *params, layer_norm=layer_norm) for c in (BIDI_FW_CELL, BIDI_BW_CELL)
    ]
    time_major = bool(ctx.scalar(BIDI_TIME_MAJOR))
    merge = bool(ctx.scalar(BIDI_MERGE))
    xs = time_major_input(ctx, ctx.input(0), time_major)
    aux = _aux_sequence(ctx, BIDI_AUX_INPUT, time_major)
    cross = aux is not None and bool(cells[0].aux)
    bw_xs = aux if aux is not None and not cross else xs
    fw_size = ctx.shape(ctx.input(BIDI_FW_CELL.states[0]))[1]
    directions = _bidi_directions(ctx, xs, bw_xs, fw_size, merge, 2)
    for cell, layout, d in zip(cells, (BIDI_FW_CELL, BIDI_BW_CELL), directions):
        h0, c0 = (ctx.input(i) for i in layout.states)

        def run(ys: Value, state: Callable[[int, Value], Value], cell=cell, d=d, h0=h0, c0=c0) -> None:
            h, c = state(0, h0), state(1, c0)
            lstm_sequence(ctx, cell, d.xs, h0, c0, ys, h, c, d.reverse, aux if cross else None)

        _run_direction(ctx, d, ctx.shape(h0)[1], time_major, run)


#: BIDIRECTIONAL_SEQUENCE_RNN: fw (weights, recurrent, bias, hidden) at 1, bw at
#: 5, aux input 9, fw/bw aux weights 10/11, activation 12, time_major 13, merge 14.
_BIDI_RNN_CELLS, _BIDI_RNN_AUX_WEIGHTS = (1, 5), (10, 11)


@lowering(Op.BIDIRECTIONAL_SEQUENCE_RNN)
def bidirectional_sequence_rnn(ctx: LoweringContext) -> None:
    """BidirectionalSequenceRNN: a forward and a backward :func:`rnn_sequence`,
    with Android's linking modes (see BIDIRECTIONAL_SEQUENCE_LSTM)."""
    act = ctx.scalar(12)
    time_major, merge = bool(ctx.scalar(13)), bool(ctx.scalar(14))
    xs = time_major_input(ctx, ctx.input(0), time_major)
    aux = _aux_sequence(ctx, 9, time_major)
    cross = aux is not None and ctx.has_input(10)
    bw_xs = aux if aux is not None and not cross else xs
    fw_size = ctx.shape(ctx.input(4))[1]
    directions = _bidi_directions(ctx, xs, bw_xs, fw_size, merge, 1)
    for first, aux_w, d in zip(_BIDI_RNN_CELLS, _BIDI_RNN_AUX_WEIGHTS, directions):
        weights = [ctx.input(first + k) for k in range(3)]
        h0 = ctx.input(first + 3)
        aux_pair = (aux, ctx.input(aux_w)) if cross and aux is not None else None

        def run(
            ys: Value, state: Callable[[int, Value], Value], d=d, weights=weights, h0=h0, aux_pair=aux_pair
        ) -> None:
            rnn_sequence(ctx, d.xs, weights, h0, ys, state(0, h0), act, d.reverse, aux_pair)

        _run_direction(ctx, d, ctx.shape(h0)[1], time_major, run)


# -- RNN -------------------------------------------------------------------------------------


@lowering(Op.RNN)
def rnn(ctx: LoweringContext) -> None:
    """RNN::RNNStep: output = act(bias + W x + R h); hidden_state_out = output."""
    x, w, r, bias, h = (ctx.input(i) for i in range(5))
    hidden_out, out = ctx.output(0), ctx.output(1)
    rnn_step(ctx, x, w, r, bias, h, out, ctx.scalar(5))
    ctx.copy(out, hidden_out)


# -- SVDF ------------------------------------------------------------------------------------


@lowering(Op.SVDF)
def svdf(ctx: LoweringContext) -> None:
    """SVDF::EvalFloat32, with Android's state layout [batch, num_filters, memory]:
    the newest activation enters at memory - 1 and the state shifts left."""
    x, wf, wt, state_in = ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(4)
    bias = ctx.input(3) if ctx.has_input(3) else None
    rank = ctx.scalar(5)
    act = ctx.scalar(6)
    state_out, out = ctx.output(0), ctx.output(1)
    batch = ctx.shape(x)[0]
    filters, memory = ctx.shape(wt)
    units = filters // rank

    # activation[b, f] = W_feature[f] . x[b]
    feat = ctx.alloc([batch, filters], f32)
    ctx.fill(feat, 0.0)
    matvec_acc(ctx, Slab(feat), wf, x)

    # state[b, f, m]: the old state with the newest column replaced.
    state = ctx.alloc([batch, filters, memory], f32)
    old = ctx.reshaped(state_in, [batch, filters, memory])
    last = memory - 1
    ctx.generic(
        (batch, filters, memory),
        [(old, affine_map(3, lambda b, f, m: (b, f, m))), (feat, affine_map(3, lambda b, f, m: (b, f)))],
        [(state, affine_map(3, lambda b, f, m: (b, f, m)))],
        lambda e, a, idx: [e.select(e.cmp("eq", idx[2], e.index(last)), a[1], a[0])],
    )

    # scratch[b, f] = W_time[f] . state[b, f]
    scr = ctx.alloc([batch, filters], f32)
    ctx.fill(scr, 0.0)
    ctx.generic(
        (batch, filters, memory),
        [(state, affine_map(3, lambda b, f, m: (b, f, m))), (wt, affine_map(3, lambda b, f, m: (f, m)))],
        [(scr, affine_map(3, lambda b, f, m: (b, f)))],
        lambda e, a, idx: [e.add(a[2], e.mul(a[1], a[0]))],
        reduction_dims=(2,),
    )

    # output[b, u] = act(bias[u] + sum_r scratch[b, u * rank + r])
    acc = ctx.alloc([batch, units], f32)
    assign_rows(ctx, Slab(acc), bias)
    scr3 = ctx.reshaped(scr, [batch, units, rank])
    ctx.generic(
        (batch, units, rank),
        [(scr3, affine_map(3, lambda b, u, r: (b, u, r)))],
        [(acc, affine_map(3, lambda b, u, r: (b, u)))],
        lambda e, a, idx: [e.add(a[1], a[0])],
        reduction_dims=(2,),
    )
    ctx.elementwise(out, [acc], lambda e, a: tflite_activation(e, a[0], act))

    # state_out: shift left by one, zero at the newest position.
    new = ctx.reshaped(state_out, [batch, filters, memory])

    def shift(e: Emitter, a: Sequence[Value], idx: Sequence[Value]) -> list[Value]:
        b, f, m = idx
        nxt = e.op(arith.MinSIOp(e.add(m, e.index(1)), e.index(last)))
        v = e.load(state, [b, f, nxt])
        return [e.select(e.cmp("eq", m, e.index(last)), e.f32(0.0), v)]

    ctx.generic((batch, filters, memory), [], [(new, affine_map(3, lambda b, f, m: (b, f, m)))], shift)
