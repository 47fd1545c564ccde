"""Rules for the recurrent operations: LSTM, RNN, SVDF, the sequence forms
UNIDIRECTIONAL_SEQUENCE_LSTM/RNN and BIDIRECTIONAL_SEQUENCE_LSTM/RNN, and
the integer cells QUANTIZED_16BIT_LSTM and QUANTIZED_LSTM
(EMBEDDING_LOOKUP and HASHTABLE_LOOKUP are in lookup, LSH_PROJECTION in
hashing: the families of their lowerings).

Optional inputs (LSTM's CIFG/peephole/projection/layer-norm tensors, SVDF's bias,
the bidirectional ops' auxiliary input and weights) may
be omitted (``OperandInfo.omitted``).  One LSTM cell's operands are described by
a :class:`CellLayout` (where its 17 tensors, states, layer-norm and aux weights
sit), shared by the four LSTM operations and their lowerings.  Shapes follow
Android's reference implementation (``LSTM.cpp``, ``RNN.cpp``, ``SVDF.cpp``,
``UnidirectionalSequence*.cpp``,
``BidirectionalSequence*.cpp``), which the conformance tests agree with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    expect_count,
    expect_primary,
    expect_rank,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.elementwise import check_fuse_code
from nnc.dialects.rules.operands import bool_param, dim, int_param, scalar_param
from nnc.enums import OperationType as Op

# -- LSTM -----------------------------------------------------------------------------

# Input indexes (ANEURALNETWORKS_LSTM).
IN, I2I, I2F, I2C, I2O, R2I, R2F, R2C, R2O = range(9)
C2I, C2F, C2O, B_I, B_F, B_C, B_O, PROJ_W, PROJ_B = range(9, 18)
STATE_OUT_IN, CELL_IN, ACTIVATION, CELL_CLIP, PROJ_CLIP = range(18, 23)
LN_I, LN_F, LN_C, LN_O = range(23, 27)

#: Activation codes LSTM accepts: none, relu, relu6, tanh, sigmoid.
LSTM_ACTIVATIONS = (0, 1, 3, 4, 6)


class _Dims:
    """Unifies named sizes across operands (0 = unknown)."""

    def __init__(self, call: OpCall):
        self.call = call
        self.sizes: dict[str, int] = {}

    def get(self, name: str) -> int:
        return self.sizes.get(name, 0)

    def expect(self, i: int, *names: str) -> None:
        """Input ``i`` is present with rank len(names) and these named sizes."""
        expect_rank(self.call, i, len(names))
        info = self.call.input(i)
        for k, name in enumerate(names):
            self.sizes[name] = same_dim(
                self.get(name), dim(info, k), f"input {i} dimension {k} ({name})"
            )


@dataclass(frozen=True)
class CellLayout:
    """Where one LSTM cell's operands sit among an operation's inputs.

    ``weights`` is the index of input_to_input_weights, the first of the 17
    tensors input-to-gate weights (4), recurrent weights (4), peephole weights
    (3), gate biases (4), projection weights and bias, which every LSTM
    signature keeps in that order; ``states`` the indexes of output_state_in
    and cell_state_in; ``layer_norm`` the first of the four layer-norm weights
    (None when the signature has none); ``aux`` the first of the four
    aux_input-to-gate weights (BIDIRECTIONAL_SEQUENCE_LSTM only)."""

    weights: int
    states: tuple[int, int]
    layer_norm: int | None = None
    aux: int | None = None

    def w(self, k: int) -> int:
        """Input index of tensor ``k`` (0..16) of the 17 cell tensors."""
        return self.weights + k

    @property
    def optional(self) -> tuple[int, ...]:
        """Tensor inputs of this cell that may be omitted."""
        # LSTM's own indexes, shifted to where this cell's tensors start.
        opt = [self.w(i - I2I) for i in (I2I, R2I, C2I, C2F, C2O, B_I, PROJ_W, PROJ_B)]
        if self.layer_norm is not None:
            opt += range(self.layer_norm, self.layer_norm + 4)
        if self.aux is not None:
            opt += range(self.aux, self.aux + 4)
        return tuple(opt)


#: The cell of LSTM (23 inputs, or 27 with layer normalisation).
LSTM_CELL = CellLayout(weights=I2I, states=(STATE_OUT_IN, CELL_IN), layer_norm=LN_I)
LSTM_OPTIONAL = LSTM_CELL.optional


def check_lstm_params(call: OpCall, activation: int, clips: tuple[int, int], x: OperandInfo) -> None:
    """The activation code and the two clipping thresholds (>= 0, of the
    input's float scalar type)."""
    act = int_param(call, activation)
    if act not in LSTM_ACTIVATIONS:
        raise RuleError(f"invalid LSTM activation {act}")
    clip_type = T.FLOAT16 if x.type == T.TENSOR_FLOAT16 else T.FLOAT32
    for i, what in zip(clips, ("cell_clip", "proj_clip")):
        v = scalar_param(call, i, (clip_type,))
        if not v >= 0:
            raise RuleError(f"{what} must be >= 0, got {v}")


def _check_presence(
    has: Callable[[int], bool], cifg: bool, optional: tuple[int, ...], ln: tuple[int, ...]
) -> None:
    """Android's rules on which optional LSTM tensors go together (CIFG,
    peephole, projection, layer normalisation)."""
    i2i, r2i, c2i, c2f, c2o, b_i, proj_w, proj_b = optional
    if has(i2i) != has(r2i):
        raise RuleError(
            "input-to-input and recurrent-to-input weights must both be given or omitted"
        )
    if cifg and has(b_i):
        raise RuleError("input gate bias must be omitted with CIFG (no input-to-input weights)")
    if not cifg and not has(b_i):
        raise RuleError("input gate bias is required without CIFG")
    peephole = [has(c2i), has(c2f), has(c2o)]
    if not (not any(peephole) or (has(c2f) and has(c2o) and (has(c2i) or cifg))):
        raise RuleError("peephole weights must be all given or all omitted")
    if cifg and has(c2i):
        raise RuleError("cell-to-input weights must be omitted with CIFG")
    if has(proj_b) and not has(proj_w):
        raise RuleError("projection bias given without projection weights")
    if ln:
        norms = [has(i) for i in ln]
        if cifg:
            if norms[0]:
                raise RuleError("input layer norm weights must be omitted with CIFG")
            if any(norms[1:]) and not all(norms[1:]):
                raise RuleError("layer norm weights must be all given or all omitted")
        elif any(norms) and not all(norms):
            raise RuleError("layer norm weights must be all given or all omitted")


def check_lstm_cell(call: OpCall, cell: CellLayout, d: _Dims, x: OperandInfo, with_layer_norm: bool) -> bool:
    """Types, presence rules and sizes of one LSTM cell's tensors (Android's
    LSTMCell::CheckInputTensorDimensions).  Sizes unify into ``d`` as "batch",
    "input", "cell" and "output" (the caller sets "batch" and "input" from the
    input tensor first).  Returns whether the cell uses CIFG."""
    w = cell.w
    i2i, i2f, i2c, i2o, r2i, r2f, r2c, r2o = (w(k) for k in range(8))
    c2i, c2f, c2o, b_i, b_f, b_c, b_o, proj_w, proj_b = (w(k) for k in range(8, 17))
    h_in, c_in = cell.states
    ln = tuple(range(cell.layer_norm, cell.layer_norm + 4)) if with_layer_norm and cell.layer_norm else ()
    aux = tuple(range(cell.aux, cell.aux + 4)) if cell.aux is not None else ()
    for i in (*range(i2i, proj_b + 1), h_in, c_in, *ln, *aux):
        expect_type(call, i, (x.type,))

    def has(i: int) -> bool:
        return call.has_input(i) and not undetermined(call, i)

    cifg = not has(i2i)
    # A shapeless optional model input may still be omitted at execution:
    # the presence rules wait for the shapes the execution gives.
    if not any(call.has_input(i) and undetermined(call, i) for i in cell.optional):
        _check_presence(has, cifg, (i2i, r2i, c2i, c2f, c2o, b_i, proj_w, proj_b), ln)

    d.expect(i2o, "cell", "input")
    d.expect(r2o, "cell", "output")
    for i in (i2i, i2f, i2c):
        if has(i):
            d.expect(i, "cell", "input")
    for i in (r2i, r2f, r2c):
        if has(i):
            d.expect(i, "cell", "output")
    for i in (c2i, c2f, c2o, b_i, b_f, b_c, b_o, *ln):
        if has(i):
            d.expect(i, "cell")
    for i in aux:
        if has(i):
            d.expect(i, "cell", "aux_input")
    if has(proj_w):
        d.expect(proj_w, "output", "cell")
    elif not call.has_input(proj_w):
        # Without a projection the output is the cell output itself.
        d.sizes["output"] = same_dim(
            d.get("output"), d.get("cell"), "output_size differs from num_units without projection"
        )
    if has(proj_b):
        d.expect(proj_b, "output")
    d.expect(h_in, "batch", "output")
    d.expect(c_in, "batch", "cell")
    return cifg


@rule(Op.LSTM)
def lstm(call: OpCall) -> list[OperandInfo]:
    """One LSTM time step (23 inputs, or 27 with layer normalization)."""
    n = expect_count(call, (23, 27), LSTM_OPTIONAL)
    x = expect_primary(call)
    check_lstm_params(call, ACTIVATION, (CELL_CLIP, PROJ_CLIP), x)
    d = _Dims(call)
    d.expect(IN, "batch", "input")
    cifg = check_lstm_cell(call, LSTM_CELL, d, x, with_layer_norm=n == 27)

    batch, cell, output = d.get("batch"), d.get("cell"), d.get("output")
    scratch = cell * (3 if cifg else 4)
    # CIFG is decided when the operation runs: input-to-input weights that are
    # a model input (or any non-constant) may be omitted at execution, which
    # Android's Prepare then sizes as CIFG.  Accept a declared scratch buffer
    # of either width for them (the scratch's contents are unspecified).
    declared = call.outputs[0].dims if call.outputs else None
    if call.has_input(I2I) and call.input(I2I).value is None and declared and len(declared) == 2:
        if cell and declared[1] in (cell * 3, cell * 4):
            scratch = declared[1]
    return [
        like(x, (batch, scratch)),
        like(x, (batch, output)),
        like(x, (batch, cell)),
        like(x, (batch, output)),
    ]


# -- UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM ------------------------------------

#: UNIDIRECTIONAL_SEQUENCE_LSTM: LSTM's first 23 inputs, time_major, then the
#: four layer-normalisation weights (Android requires all 28 inputs).
SEQ_TIME_MAJOR = 23
SEQ_LSTM_CELL = CellLayout(weights=I2I, states=(STATE_OUT_IN, CELL_IN), layer_norm=24)


def sequence_dims(call: OpCall, i: int, time_major: bool, d: _Dims) -> None:
    """Input ``i`` is a 3-D sequence: [time, batch, size] or [batch, time, size]."""
    if time_major:
        d.expect(i, "time", "batch", "input")
    else:
        d.expect(i, "batch", "time", "input")


def sequence_shape(d: _Dims, time_major: bool, size: int) -> tuple[int, int, int]:
    t, b = d.get("time"), d.get("batch")
    return (t, b, size) if time_major else (b, t, size)


@rule(Op.UNIDIRECTIONAL_SEQUENCE_LSTM)
def unidirectional_sequence_lstm(call: OpCall) -> list[OperandInfo]:
    """LSTM over every step of a 3-D input; outputs: the output sequence and,
    since feature level 4 (1 or 3 outputs), the last output and cell states."""
    n = expect_count(call, (28,), SEQ_LSTM_CELL.optional)
    x = expect_primary(call)
    check_lstm_params(call, ACTIVATION, (CELL_CLIP, PROJ_CLIP), x)
    time_major = bool_param(call, SEQ_TIME_MAJOR)
    d = _Dims(call)
    sequence_dims(call, IN, time_major, d)
    check_lstm_cell(call, SEQ_LSTM_CELL, d, x, with_layer_norm=n == 28)
    out = [like(x, sequence_shape(d, time_major, d.get("output")))]
    if len(call.outputs) == 3:
        out += [like(x, (d.get("batch"), d.get("output"))), like(x, (d.get("batch"), d.get("cell")))]
    return out


# -- RNN, SVDF ------------------------------------------------------------------------


@rule(Op.RNN)
def rnn(call: OpCall) -> list[OperandInfo]:
    """Inputs: input, weights, recurrent_weights, bias, hidden_state_in, activation."""
    expect_count(call, (6,))
    x = expect_primary(call)
    for i in range(1, 5):
        expect_type(call, i, (x.type,))
    expect_type(call, 5, (T.INT32,))
    check_fuse_code(call, 5)
    d = _Dims(call)
    d.expect(0, "batch", "input")
    d.expect(1, "units", "input")
    d.expect(2, "units", "units")
    d.expect(3, "units")
    d.expect(4, "batch", "units")
    out = (d.get("batch"), d.get("units"))
    return [like(x, out), like(x, out)]


@rule(Op.SVDF)
def svdf(call: OpCall) -> list[OperandInfo]:
    """Inputs: input, weights_feature, weights_time, bias (optional), state_in,
    rank, activation.  Outputs: state [batch, memory_size * num_filters] and
    output [batch, num_units] with num_filters = num_units * rank (the layout of
    Android's implementation and of the conformance tests)."""
    expect_count(call, (7,), optional=(3,))
    x = expect_primary(call)
    for i in range(1, 5):
        expect_type(call, i, (x.type,))
    rank = int_param(call, 5)
    if rank <= 0:
        raise RuleError(f"rank must be > 0, got {rank}")
    expect_type(call, 6, (T.INT32,))
    check_fuse_code(call, 6)
    d = _Dims(call)
    d.expect(0, "batch", "input")
    d.expect(1, "filters", "input")
    d.expect(2, "filters", "memory")
    filters = d.get("filters")
    if filters and filters % rank:
        raise RuleError(f"num_filters {filters} is not a multiple of rank {rank}")
    units = filters // rank
    if call.has_input(3):
        expect_rank(call, 3, 1)
        units = same_dim(units, dim(call.input(3), 0), "bias size differs from num_units")
    memory = d.get("memory")
    expect_rank(call, 4, 2)
    batch = same_dim(d.get("batch"), dim(call.input(4), 0), "state batch")
    same_dim(memory * filters, dim(call.input(4), 1), "state size (memory_size * num_filters)")
    return [like(x, (batch, memory * filters)), like(x, (batch, units))]


# -- UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN -------------------------------------


def check_rnn_cell(call: OpCall, first: int, d: _Dims, x: OperandInfo, prefix: str = "") -> None:
    """weights [units, input], recurrent_weights [units, units], bias [units]
    and hidden_state_in [batch, units] at ``first``..``first + 3``; sizes
    unify into ``d`` as "<prefix>units", "input" and "batch"."""
    units = f"{prefix}units"
    for i in range(first, first + 4):
        expect_type(call, i, (x.type,))
    d.expect(first, units, "input")
    d.expect(first + 1, units, units)
    d.expect(first + 2, units)
    d.expect(first + 3, "batch", units)


@rule(Op.UNIDIRECTIONAL_SEQUENCE_RNN)
def unidirectional_sequence_rnn(call: OpCall) -> list[OperandInfo]:
    """Inputs: input (3-D), weights, recurrent_weights, bias, hidden_state_in,
    activation (FuseCode), time_major (INT32 0 or 1); outputs: the output
    sequence and, since feature level 4, the last hidden state."""
    expect_count(call, (7,))
    x = expect_primary(call)
    expect_type(call, 5, (T.INT32,))
    check_fuse_code(call, 5)
    time_major = int_param(call, 6)
    if time_major not in (0, 1):
        raise RuleError(f"time_major must be 0 or 1, got {time_major}")
    d = _Dims(call)
    sequence_dims(call, 0, bool(time_major), d)
    check_rnn_cell(call, 1, d, x)
    units = d.get("units")
    out = [like(x, sequence_shape(d, bool(time_major), units))]
    if len(call.outputs) == 2:
        out.append(like(x, (d.get("batch"), units)))
    return out


def _bidi_outputs(call: OpCall, merge: bool) -> bool:
    """Whether a bidirectional op has its state outputs: it has 1 (merged) or
    2 sequence outputs, followed by the states (feature level 4) or not."""
    base = 1 if merge else 2
    extra = len(call.outputs) - base
    if call.outputs and extra not in (0, _STATE_OUTPUTS[call.type]):
        raise RuleError(
            f"{len(call.outputs)} outputs with merge_outputs={merge}: expected {base} "
            f"or {base + _STATE_OUTPUTS[call.type]}"
        )
    return extra > 0


#: state outputs a bidirectional op adds: hidden (RNN) or output and cell (LSTM) per direction
_STATE_OUTPUTS = {Op.BIDIRECTIONAL_SEQUENCE_RNN: 2, Op.BIDIRECTIONAL_SEQUENCE_LSTM: 4}


def undetermined(call: OpCall, i: int) -> bool:
    """Input ``i`` is a present but still shapeless model input (every
    dimension unknown): it may yet be omitted at execution, so checks that
    depend on its presence wait for the shape-inference pass, which sees what
    the execution gave."""
    info = call.input(i)
    return not info.omitted and info.value is None and (info.dims is None or not any(info.dims))


def _linking(call: OpCall, aux_input: int, aux_weights: tuple[int, ...]) -> str:
    """Android's linking mode from the auxiliary operands: "none" (no aux
    input), "parallel" (aux input, no aux weights: the backward direction
    reads the aux input instead of the input) or "cross" (aux input times
    the aux weights is added to both directions' gates); "unknown" while
    shapeless aux operands may still be omitted at execution."""
    if any(call.has_input(i) and undetermined(call, i) for i in (aux_input, *aux_weights)):
        return "unknown"
    has_aux = call.has_input(aux_input)
    has_w = [call.has_input(i) for i in aux_weights]
    if any(has_w) and not has_aux:
        raise RuleError("auxiliary weights given without an auxiliary input")
    if not has_aux:
        return "none"
    return "cross" if any(has_w) else "parallel"


def _aux_dims(call: OpCall, aux_input: int, time_major: bool, d: _Dims) -> int:
    """The aux input is a sequence with the input's time and batch sizes;
    returns its feature size."""
    expect_rank(call, aux_input, 3)
    info = call.input(aux_input)
    names = ("time", "batch") if time_major else ("batch", "time")
    for k, name in enumerate(names):
        d.sizes[name] = same_dim(d.get(name), dim(info, k), f"aux input dimension {k} ({name})")
    return dim(info, 2)


@rule(Op.BIDIRECTIONAL_SEQUENCE_RNN)
def bidirectional_sequence_rnn(call: OpCall) -> list[OperandInfo]:
    """Inputs: input, fw (weights, recurrent, bias, hidden), bw (same), aux
    input and fw/bw aux weights (optional), activation, time_major and
    merge_outputs (BOOL).  Outputs: fw and bw sequences (one merged sequence
    with merge_outputs), then optionally the fw and bw final hidden states."""
    expect_count(call, (15,), (9, 10, 11))
    x = expect_primary(call)
    expect_type(call, 12, (T.INT32,))
    check_fuse_code(call, 12)
    time_major = bool_param(call, 13)
    merge = bool_param(call, 14)
    states = _bidi_outputs(call, merge)
    mode = _linking(call, 9, (10, 11))
    if mode == "cross" and not (call.has_input(10) and call.has_input(11)):
        raise RuleError("forward and backward auxiliary weights must both be given or omitted")
    d = _Dims(call)
    sequence_dims(call, 0, time_major, d)
    for i in (9, 10, 11):
        if call.has_input(i):
            expect_type(call, i, (x.type,))
    aux = _aux_dims(call, 9, time_major, d) if mode in ("parallel", "cross") else 0
    check_rnn_cell(call, 1, d, x, "fw_")
    bw = _Dims(call)
    bw.sizes = {k: v for k, v in d.sizes.items() if k in ("time", "batch")}
    bw.sizes["input"] = aux if mode == "parallel" else 0 if mode == "unknown" else d.get("input")
    check_rnn_cell(call, 5, bw, x, "bw_")
    d.sizes["batch"] = bw.get("batch")
    if mode == "cross":
        d.sizes["aux"] = aux
        d.expect(10, "fw_units", "aux")
        bw.sizes["aux"] = aux
        bw.expect(11, "bw_units", "aux")
    fw_units, bw_units, batch = d.get("fw_units"), bw.get("bw_units"), d.get("batch")
    if merge:
        out = [like(x, sequence_shape(d, time_major, fw_units + bw_units if fw_units and bw_units else 0))]
    else:
        out = [like(x, sequence_shape(d, time_major, fw_units)), like(x, sequence_shape(d, time_major, bw_units))]
    if states:
        out += [like(x, (batch, fw_units)), like(x, (batch, bw_units))]
    return out


#: BIDIRECTIONAL_SEQUENCE_LSTM's 61 inputs: the two cells, the aux input (39),
#: activation (48), clips (49, 50), merge_outputs (51), time_major (52).
BIDI_FW_CELL = CellLayout(weights=1, states=(35, 36), layer_norm=53, aux=40)
BIDI_BW_CELL = CellLayout(weights=18, states=(37, 38), layer_norm=57, aux=44)
BIDI_AUX_INPUT, BIDI_ACTIVATION, BIDI_MERGE, BIDI_TIME_MAJOR = 39, 48, 51, 52


@rule(Op.BIDIRECTIONAL_SEQUENCE_LSTM)
def bidirectional_sequence_lstm(call: OpCall) -> list[OperandInfo]:
    """Two LSTMs over a 3-D input, the backward one from the last step to the
    first.  Outputs: fw and bw sequences (one merged sequence with
    merge_outputs), then optionally fw output/cell and bw output/cell states."""
    expect_count(call, (61,), (*BIDI_FW_CELL.optional, *BIDI_BW_CELL.optional, BIDI_AUX_INPUT))
    x = expect_primary(call)
    check_lstm_params(call, BIDI_ACTIVATION, (BIDI_ACTIVATION + 1, BIDI_ACTIVATION + 2), x)
    merge = bool_param(call, BIDI_MERGE)
    time_major = bool_param(call, BIDI_TIME_MAJOR)
    states = _bidi_outputs(call, merge)
    fw_first, bw_first = BIDI_FW_CELL.aux, BIDI_BW_CELL.aux
    assert fw_first is not None and bw_first is not None
    fw_aux = range(fw_first, fw_first + 4)
    bw_aux = range(bw_first, bw_first + 4)
    mode = _linking(call, BIDI_AUX_INPUT, (*fw_aux, *bw_aux))
    if call.has_input(fw_first + 1) != call.has_input(bw_first + 1):
        raise RuleError("forward and backward auxiliary weights must both be given or omitted")
    d = _Dims(call)
    sequence_dims(call, 0, time_major, d)
    if call.has_input(BIDI_AUX_INPUT):
        expect_type(call, BIDI_AUX_INPUT, (x.type,))
    aux = _aux_dims(call, BIDI_AUX_INPUT, time_major, d) if mode in ("parallel", "cross") else 0
    d.sizes["aux_input"] = aux
    check_lstm_cell(call, BIDI_FW_CELL, d, x, with_layer_norm=True)
    bw = _Dims(call)
    bw.sizes = {k: v for k, v in d.sizes.items() if k in ("time", "batch", "aux_input")}
    bw.sizes["input"] = aux if mode == "parallel" else 0 if mode == "unknown" else d.get("input")
    check_lstm_cell(call, BIDI_BW_CELL, bw, x, with_layer_norm=True)
    batch = same_dim(d.get("batch"), bw.get("batch"), "backward state batch")
    fw_out, bw_out = d.get("output"), bw.get("output")
    if merge:
        out = [like(x, sequence_shape(d, time_major, fw_out + bw_out if fw_out and bw_out else 0))]
    else:
        out = [like(x, sequence_shape(d, time_major, fw_out)), like(x, sequence_shape(d, time_major, bw_out))]
    if states:
        out += [like(x, (batch, fw_out)), like(x, (batch, d.get("cell")))]
        out += [like(x, (batch, bw_out)), like(x, (batch, bw.get("cell")))]
    return out


# -- QUANTIZED_16BIT_LSTM, QUANTIZED_LSTM -------------------------------------------------


def checked_log2(x: float) -> int | None:
    """Android's ``CheckedLog2`` of a float32 scale: the rounded base-2
    logarithm, or None when ``x`` is not within 1e-3 (in the exponent) of a
    power of two.  Computed in float32, as the C++ does."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_log2 = np.float32(1.0) / np.float32(np.log(np.float32(2.0)))
        x_log2 = np.float32(np.log(np.float32(x))) * inv_log2
    if not np.isfinite(x_log2):
        return None
    v = float(x_log2)
    rounded = math.copysign(math.floor(abs(v) + 0.5), v)  # std::round: half away from zero
    return int(rounded) if abs(float(x_log2 - np.float32(rounded))) < 1e-3 else None


def _same_quant(call: OpCall, i: int, ref: OperandInfo, what: str) -> None:
    info = call.input(i)
    if np.float32(info.scale) != np.float32(ref.scale) or info.zero_point != ref.zero_point:
        raise RuleError(f"input {i}: {what} must share the quantisation of input 1")


#: QUANTIZED_16BIT_LSTM's fixed quantisation of its input and output (1/128, 128).
Q16_LSTM_IO = (1.0 / 128.0, 128)


@rule(Op.QUANTIZED_16BIT_LSTM)
def quantized_16bit_lstm(call: OpCall) -> list[OperandInfo]:
    """One LSTM step in 8-bit weights and a 16-bit cell state (inputs: input,
    8 weights, 4 biases, cell_state_in, output_state_in; outputs: cell state,
    output), with the quantisations Android's QuantizedLSTMCell::prepare
    requires."""
    expect_count(call, (15,))
    x = expect_primary(call)
    for i in range(1, 9):
        expect_type(call, i, (T.TENSOR_QUANT8_ASYMM,))
    for i in range(9, 13):
        expect_type(call, i, (T.TENSOR_INT32,))
    c_in = expect_type(call, 13, (T.TENSOR_QUANT16_SYMM,))
    h_in = expect_type(call, 14, (T.TENSOR_QUANT8_ASYMM,))
    d = _Dims(call)
    d.expect(0, "batch", "input")
    d.expect(14, "batch", "output")
    for i in range(1, 5):
        d.expect(i, "output", "input")
    for i in range(5, 9):
        d.expect(i, "output", "output")
    for i in range(9, 13):
        d.expect(i, "output")
    d.expect(13, "batch", "output")
    for i, info in ((0, x), (14, h_in)):
        if (float(np.float32(info.scale)), info.zero_point) != Q16_LSTM_IO:
            raise RuleError(f"input {i} must have scale 1/128 and zero point 128")
    w = call.input(1)
    if w.scale == 0:
        raise RuleError("weights scale must not be 0")
    for i in range(2, 9):
        _same_quant(call, i, w, "weights")
    b = call.input(9)
    if np.float32(b.scale) != np.float32(np.float32(w.scale) / np.float32(128.0)) or b.zero_point != 0:
        raise RuleError("bias scale must be the weights scale / 128, zero point 0")
    for i in range(10, 13):
        info = call.input(i)
        if np.float32(info.scale) != np.float32(b.scale) or info.zero_point != 0:
            raise RuleError(f"input {i}: biases must share the quantisation of input 9")
    if c_in.zero_point != 0 or checked_log2(c_in.scale) != -11:
        raise RuleError("cell state must have scale 2^-11 (4 integer bits) and zero point 0")
    batch, output = d.get("batch"), d.get("output")
    return [like(c_in, (batch, output)), like(h_in, (batch, output))]


#: QUANTIZED_LSTM's 32 inputs: the cell tensors from 1, the states at 18/19,
#: layer-norm weights from 20, then clips (24, 25), the four intermediate
#: scales (26..29), the hidden state's zero point (30) and scale (31).
QLSTM_CELL = CellLayout(weights=1, states=(18, 19), layer_norm=20)
QLSTM_CELL_CLIP, QLSTM_PROJ_CLIP, QLSTM_INTERMEDIATE, QLSTM_HIDDEN_ZP, QLSTM_HIDDEN_SCALE = 24, 25, 26, 30, 31
_QLSTM_TYPES = (
    (T.TENSOR_QUANT8_SYMM, (*range(1, 9), 16)),
    (T.TENSOR_QUANT16_SYMM, (9, 10, 11, 19, 20, 21, 22, 23)),
    (T.TENSOR_INT32, (12, 13, 14, 15, 17)),
    (T.TENSOR_QUANT8_ASYMM_SIGNED, (18,)),
)


@rule(Op.QUANTIZED_LSTM)
def quantized_lstm(call: OpCall) -> list[OperandInfo]:
    """One LSTM step in integers (Android's QLSTM: int8 weights, int16 gates
    and cell state, optional CIFG, peephole, projection and layer norm).
    The cell state's scale must be a power of two of at most 2^-9."""
    expect_count(call, (32,), QLSTM_CELL.optional)
    expect_primary(call)
    for t, indexes in _QLSTM_TYPES:
        for i in indexes:
            if call.has_input(i):
                expect_type(call, i, (t,))
    for i in (QLSTM_CELL_CLIP, QLSTM_PROJ_CLIP):
        v = scalar_param(call, i, (T.FLOAT32,), 0.0)
        if not v >= 0:
            raise RuleError(f"input {i}: clip must be >= 0, got {v}")
    for i in (*range(QLSTM_INTERMEDIATE, QLSTM_INTERMEDIATE + 4), QLSTM_HIDDEN_SCALE):
        scalar_param(call, i, (T.FLOAT32,))
    int_param(call, QLSTM_HIDDEN_ZP)

    w = QLSTM_CELL.w
    has = call.has_input
    i2i, r2i, c2i, c2f, c2o, b_i, proj_w, proj_b = (w(k) for k in (0, 4, 8, 9, 10, 11, 15, 16))
    ln = tuple(range(20, 24))
    _check_presence(has, not has(i2i), (i2i, r2i, c2i, c2f, c2o, b_i, proj_w, proj_b), ln)
    d = _Dims(call)
    d.expect(0, "batch", "input")
    for k in range(4):
        if has(w(k)):
            d.expect(w(k), "cell", "input")
        if has(w(4 + k)):
            d.expect(w(4 + k), "cell", "output")
    for i in (c2i, c2f, c2o, *range(w(11), w(15)), *ln):
        if has(i):
            d.expect(i, "cell")
    if has(proj_w):
        d.expect(proj_w, "output", "cell")
    else:
        d.sizes["output"] = same_dim(
            d.get("output"), d.get("cell"), "output_size differs from num_units without projection"
        )
    if has(proj_b):
        d.expect(proj_b, "output")
    h_in, c_in = (call.input(i) for i in QLSTM_CELL.states)
    d.expect(QLSTM_CELL.states[0], "batch", "output")
    d.expect(QLSTM_CELL.states[1], "batch", "cell")
    shift = checked_log2(c_in.scale)
    if shift is None or shift > -9:
        raise RuleError(f"cell state scale {c_in.scale} must be a power of two of at most 2^-9")
    batch, output = d.get("batch"), d.get("output")
    return [like(h_in, (batch, output)), like(c_in, (batch, d.get("cell"))), like(h_in, (batch, output))]
