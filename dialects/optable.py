"""The NNAPI operation table: one record per OperationType.

Everything that is true of an operation *type* regardless of its operands lives
here, once, so that nothing else has to agree with it by hand:

* the dialect generates one xDSL op class per record, and ``Model`` checks
  input/output counts against it;
* ``family`` names the module that holds the operation's rule
  (``dialects/rules/<family>.py``: validation and shape inference, keyed by
  OperationType) and its lowering (``passes/lowering/<family>.py``); a
  dotted family (``detection.nms``) names a module of a subpackage;
* ``types`` are the operand types NNAPI declares for the operation's primary
  operand, with the feature level that added each, as the NDK header lists
  them; ``implemented`` is the subset nnc compiles (empty: nnc does not
  implement the operation, and there is no lowering).  The lowering pass,
  ``unsupported_reason`` and so the device's supported-operations query read it;
* ``tflite`` names the TFLite builtins the importer maps onto the operation.

``tests/test_op_records.py`` checks every record against the registries and
against ``NeuralNetworksTypes.h``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from nnc.enums import FeatureLevel, OperandType, OperationType
from nnc.operand_types import QUANT8_ASYMM_TYPES

L1, L2, L3, L4, L5, L6, L7, L8 = (
    FeatureLevel.LEVEL_1,
    FeatureLevel.LEVEL_2,
    FeatureLevel.LEVEL_3,
    FeatureLevel.LEVEL_4,
    FeatureLevel.LEVEL_5,
    FeatureLevel.LEVEL_6,
    FeatureLevel.LEVEL_7,
    FeatureLevel.LEVEL_8,
)


@dataclass(frozen=True)
class OpSpec:
    """Static facts about one NNAPI operation type.

    ``inputs`` names the inputs of the longest signature, in order (for docs and
    error messages).  ``input_counts`` lists every number of inputs that some
    signature of the op accepts (e.g. CONV_2D: 7, 8, 10, 11, 13).  Variadic ops
    (CONCATENATION, PACK, ...) set ``input_counts=()`` and ``min_inputs``.
    ``shape_inputs`` are indexes of tensor inputs whose *values* (not just
    shapes) decide the output shape, e.g. RESHAPE's target shape; such inputs
    must be known when the model is compiled (constants, or specialised on the
    value given at execution).

    Conventions used by the table (source: the NDK reference, cross-checked
    with the input/output counts Android's runtime validates):

    * A name starting with ``*`` stands for a variadic group, e.g. CONCATENATION
      is ``("*inputs", "axis")``; ``outputs=("*outputs",)`` with
      ``output_counts=()`` means any number >= 1 (SPLIT, IF, WHILE, OEM).
    * An input the reference calls "Optional" without adding it in a later
      feature level (LSTM weights, SQUEEZE axes, TRANSPOSE perm, RNN/SVDF
      activation, BATCH_MATMUL adj_x/adj_y) keeps its slot and is omitted with
      a no-value operand; it does not add an input count.  Trailing inputs added
      by a later feature level (layout, dilation, axis, align_corners, ...) can
      be left off, so each adds a count.
    * ``inputs``/``outputs`` name the longest signature; where an op has two
      forms (explicit/implicit padding, resize by shape/by scale) the names are
      those of the first form in the reference.
    """

    type: OperationType
    since: FeatureLevel
    inputs: tuple[str, ...]
    input_counts: tuple[int, ...]
    outputs: tuple[str, ...] = ("output",)
    output_counts: tuple[int, ...] = (1,)
    min_inputs: int = 0
    shape_inputs: tuple[int, ...] = ()
    #: module name of the rule and the lowering (``rules/<family>.py``, ``lowering/<family>.py``);
    #: for an operation nnc does not implement, the family it will join (it may not exist yet)
    family: str = ""
    #: NNAPI's operand types of the primary operand -> the feature level that added each
    types: Mapping[OperandType, FeatureLevel] = field(default_factory=dict, compare=False)
    #: the subset of ``types`` nnc implements (empty: not implemented, no lowering)
    implemented: frozenset[OperandType] = frozenset()
    #: name (in ``inputs``/``outputs``) of the operand ``types`` describes; "" is input 0
    primary: str = ""
    #: TFLite builtin operators the importer maps onto this operation
    tflite: tuple[str, ...] = ()

    @property
    def supported(self) -> bool:
        """nnc implements the operation for at least one operand type."""
        return bool(self.implemented)

    def primary_operand(self, inputs: Sequence[_Operand], outputs: Sequence[_Operand]) -> _Operand | None:
        """The operand whose type ``types`` describes (None if the call lacks it).

        Usually input 0; EMBEDDING_LOOKUP/HASHTABLE_LOOKUP name their values,
        SELECT its first data input, PACK its first tensor, FILL its output,
        because that is the operand the NDK reference lists types for."""
        if self.primary in self.outputs:
            k, operands = self.outputs.index(self.primary), outputs
        else:
            k, operands = (self.inputs.index(self.primary) if self.primary else 0), inputs
        return operands[k] if k < len(operands) else None

    @property
    def mnemonic(self) -> str:
        """The xDSL op name without the dialect prefix, e.g. ``conv_2d``."""
        return self.type.name.lower()

    def accepts_input_count(self, n: int) -> bool:
        if self.input_counts:
            return n in self.input_counts
        return n >= self.min_inputs

    def accepts_output_count(self, n: int) -> bool:
        if self.output_counts:
            return n in self.output_counts
        return n >= 1


_Operand = TypeVar("_Operand")


def _spec(*args, implemented: Sequence[OperandType] = (), **kwargs) -> OpSpec:
    kwargs["implemented"] = frozenset(implemented)
    return OpSpec(*args, **kwargs)


def _at(level: FeatureLevel, *types: OperandType) -> dict[OperandType, FeatureLevel]:
    """``types`` declared since ``level`` (combine rows with ``|``)."""
    return dict.fromkeys(types, level)


_O = OperandType
F16, F32, I32, BOOL8, MODEL = _O.TENSOR_FLOAT16, _O.TENSOR_FLOAT32, _O.TENSOR_INT32, _O.TENSOR_BOOL8, _O.MODEL
Q8, Q8S = _O.TENSOR_QUANT8_ASYMM, _O.TENSOR_QUANT8_ASYMM_SIGNED
Q8SYMM, Q8CH = _O.TENSOR_QUANT8_SYMM, _O.TENSOR_QUANT8_SYMM_PER_CHANNEL
Q16, Q16SYMM = _O.TENSOR_QUANT16_ASYMM, _O.TENSOR_QUANT16_SYMM

QUANT8 = QUANT8_ASYMM_TYPES

# Declared type sets shared by many records: float32 and 8-bit asymmetric
# quantised since the op's first level (1, 2 or 3), float16 since level 3 and
# signed quantised since level 4, as NNAPI 1.2/1.3 widened most operations.
_FQ1 = _at(L1, F32, Q8) | _at(L3, F16) | _at(L4, Q8S)
_FQ2 = _at(L2, F32, Q8) | _at(L3, F16) | _at(L4, Q8S)
_F1 = _at(L1, F32) | _at(L3, F16)
_F3 = _at(L3, F16, F32)
_FQ3 = _at(L3, F16, F32, Q8) | _at(L4, Q8S)
_FIQ3 = _at(L3, F16, F32, I32, Q8) | _at(L4, Q8S)
_FIQ7 = _at(L7, F16, F32, I32, Q8, Q8S)
# What nnc implements, most often.
_IMPL_F = (F16, F32)
_IMPL_FQ = (F16, F32, *QUANT8)
_IMPL_FIQ = (F16, F32, I32, *QUANT8)


# Input-name groups shared by several rows.
_EXPLICIT_PAD = ("padding_left", "padding_right", "padding_top", "padding_bottom")
_STRIDES = ("stride_width", "stride_height")
_DILATION = ("dilation_width", "dilation_height")
#: Explicit-padding pooling signature (AVERAGE/L2/MAX_POOL_2D); the implicit one is
#: input, padding_scheme, strides, filter size, activation[, nchw].
_POOL = ("input", *_EXPLICIT_PAD, *_STRIDES, "filter_width", "filter_height", "activation", "nchw")
_GATES = ("input", "forget", "cell", "output")
_LSTM_WEIGHTS = (
    *(f"input_to_{g}_weights" for g in _GATES),
    *(f"recurrent_to_{g}_weights" for g in _GATES),
    *(f"cell_to_{g}_weights" for g in ("input", "forget", "output")),
    "input_gate_bias", "forget_gate_bias", "cell_bias", "output_gate_bias",
    "projection_weights", "projection_bias",
)  # inputs 1..17 of LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and QUANTIZED_LSTM
_LAYER_NORM = tuple(f"{g}_layer_norm_weights" for g in _GATES)
_LSTM = (
    "input", *_LSTM_WEIGHTS, "output_state_in", "cell_state_in",
    "activation", "cell_clip", "proj_clip",
)  # the 23 inputs of LSTM at feature level 1
_BIDI_LSTM = (
    "input",
    *(f"fw_{n}" for n in _LSTM_WEIGHTS),
    *(f"bw_{n}" for n in _LSTM_WEIGHTS),
    "fw_activation_state_in", "fw_cell_state_in", "bw_activation_state_in", "bw_cell_state_in",
    "aux_input",
    *(f"fw_aux_input_to_{g}_weights" for g in _GATES),
    *(f"bw_aux_input_to_{g}_weights" for g in _GATES),
    "activation", "cell_clip", "proj_clip", "merge_outputs", "time_major",
    *(f"fw_{n}" for n in _LAYER_NORM),
    *(f"bw_{n}" for n in _LAYER_NORM),
)  # 61 inputs
_QLSTM = (
    "input", *_LSTM_WEIGHTS, "output_state_in", "cell_state_in", *_LAYER_NORM,
    "cell_clip", "proj_clip",
    *(f"{g}_intermediate_scale" for g in _GATES),
    "hidden_state_zero_point", "hidden_state_scale",
)  # 32 inputs
_BINARY = ("input0", "input1")
_BINARY_ACT = ("input0", "input1", "activation")
_UNARY = ("input",)
_REDUCE = ("input", "axes", "keep_dims")
_RESIZE = ("input", "output_width", "output_height", "nchw", "align_corners", "half_pixel_centers")


_T = OperationType

# fmt: off
OPS: tuple[OpSpec, ...] = (
    # -- Feature level 1 (NNAPI 1.0, Android 8.1, API 27) ------------------------
    _spec(_T.ADD, L1, _BINARY_ACT, (3,),
          family="elementwise", types=_FQ1 | _at(L4, I32), implemented=_IMPL_FIQ, tflite=("ADD",)),
    _spec(_T.AVERAGE_POOL_2D, L1, _POOL, (7, 8, 10, 11),
          family="pool", types=_FQ1, implemented=_IMPL_FQ, tflite=("AVERAGE_POOL_2D",)),
    _spec(_T.CONCATENATION, L1, ("*inputs", "axis"), (), min_inputs=2,
          family="concat", types=_FQ1, implemented=_IMPL_FQ, tflite=("CONCATENATION",)),
    _spec(_T.CONV_2D, L1, ("input", "filter", "bias", *_EXPLICIT_PAD, *_STRIDES, "activation", "nchw", *_DILATION), (7, 8, 10, 11, 13),
          family="conv.conv_2d", types=_FQ1, implemented=_IMPL_FQ, tflite=("CONV_2D",)),
    _spec(_T.DEPTHWISE_CONV_2D, L1, ("input", "filter", "bias", *_EXPLICIT_PAD, *_STRIDES, "depth_multiplier", "activation", "nchw", *_DILATION), (8, 9, 11, 12, 14),
          family="conv.depthwise", types=_FQ1, implemented=_IMPL_FQ, tflite=("DEPTHWISE_CONV_2D",)),
    _spec(_T.DEPTH_TO_SPACE, L1, ("input", "block_size", "nchw"), (2, 3),
          family="rearrange", types=_FQ1, implemented=_IMPL_FQ, tflite=("DEPTH_TO_SPACE",)),
    _spec(_T.DEQUANTIZE, L1, _UNARY, (1,),
          family="elementwise", types=_at(L1, Q8) | _at(L3, Q8SYMM, Q8CH) | _at(L4, Q8S), implemented=(Q8, Q8S, Q8SYMM, Q8CH), tflite=("DEQUANTIZE",)),
    _spec(_T.EMBEDDING_LOOKUP, L1, ("lookups", "values"), (2,),
          family="lookup", types=_at(L1, F32) | _at(L3, I32, Q8) | _at(L4, F16, Q8S), implemented=_IMPL_FIQ, primary="values", tflite=("EMBEDDING_LOOKUP",)),
    _spec(_T.FLOOR, L1, _UNARY, (1,),
          family="elementwise", types=_F1, implemented=_IMPL_F, tflite=("FLOOR",)),
    _spec(_T.FULLY_CONNECTED, L1, ("input", "weights", "bias", "activation"), (4,),
          family="conv.fully_connected", types=_FQ1, implemented=_IMPL_FQ, tflite=("FULLY_CONNECTED",)),
    _spec(_T.HASHTABLE_LOOKUP, L1, ("lookups", "keys", "values"), (3,), ("output", "hits"), (2,),
          family="lookup", types=_at(L1, F32, I32, Q8), implemented=(F32, I32, Q8), primary="values", tflite=("HASHTABLE_LOOKUP",)),
    _spec(_T.L2_NORMALIZATION, L1, ("input", "axis"), (1, 2),
          family="normalization", types=_F1 | _at(L3, Q8) | _at(L4, Q8S), implemented=_IMPL_FQ, tflite=("L2_NORMALIZATION",)),
    _spec(_T.L2_POOL_2D, L1, _POOL, (7, 8, 10, 11),
          family="pool", types=_F1, implemented=_IMPL_F, tflite=("L2_POOL_2D",)),
    _spec(_T.LOCAL_RESPONSE_NORMALIZATION, L1, ("input", "radius", "bias", "alpha", "beta", "axis"), (5, 6),
          family="normalization", types=_F1, implemented=_IMPL_F, tflite=("LOCAL_RESPONSE_NORMALIZATION",)),
    _spec(_T.LOGISTIC, L1, _UNARY, (1,),
          family="elementwise", types=_FQ1, implemented=_IMPL_FQ, tflite=("LOGISTIC",)),
    _spec(_T.LSH_PROJECTION, L1, ("hash", "input", "weight", "type"), (4,),
          family="hashing", types=_at(L1, F32, I32, Q8) | _at(L3, F16), implemented=(F32, I32, Q8, F16), primary="input", tflite=("LSH_PROJECTION",)),
    _spec(_T.LSTM, L1, (*_LSTM, *_LAYER_NORM), (23, 27), ("scratch_buffer", "output_state_out", "cell_state_out", "output"), (4,),
          family="recurrent", types=_F1, implemented=_IMPL_F, tflite=("LSTM",)),
    _spec(_T.MAX_POOL_2D, L1, _POOL, (7, 8, 10, 11),
          family="pool", types=_FQ1, implemented=_IMPL_FQ, tflite=("MAX_POOL_2D",)),
    _spec(_T.MUL, L1, _BINARY_ACT, (3,),
          family="elementwise", types=_FQ1 | _at(L4, I32), implemented=_IMPL_FIQ, tflite=("MUL",)),
    _spec(_T.RELU, L1, _UNARY, (1,),
          family="elementwise", types=_FQ1, implemented=_IMPL_FQ, tflite=("RELU",)),
    _spec(_T.RELU1, L1, _UNARY, (1,),
          family="elementwise", types=_FQ1, implemented=_IMPL_FQ, tflite=("RELU_N1_TO_1",)),
    _spec(_T.RELU6, L1, _UNARY, (1,),
          family="elementwise", types=_FQ1, implemented=_IMPL_FQ, tflite=("RELU6",)),
    _spec(_T.RESHAPE, L1, ("input", "shape"), (2,), shape_inputs=(1,),
          family="reshape", types=_FQ1 | _at(L6, I32), implemented=_IMPL_FIQ, tflite=("RESHAPE",)),
    _spec(_T.RESIZE_BILINEAR, L1, _RESIZE, (3, 4, 5, 6),
          family="resize", types=_F1 | _at(L3, Q8) | _at(L4, Q8S), implemented=_IMPL_FQ, tflite=("RESIZE_BILINEAR",)),
    _spec(_T.RNN, L1, ("input", "weights", "recurrent_weights", "bias", "hidden_state_in", "activation"), (6,), ("hidden_state_out", "output"), (2,),
          family="recurrent", types=_F1, implemented=_IMPL_F, tflite=("RNN",)),
    _spec(_T.SOFTMAX, L1, ("input", "beta", "axis"), (2, 3),
          family="normalization", types=_FQ1, implemented=_IMPL_FQ, tflite=("SOFTMAX",)),
    _spec(_T.SPACE_TO_DEPTH, L1, ("input", "block_size", "nchw"), (2, 3),
          family="rearrange", types=_FQ1, implemented=_IMPL_FQ, tflite=("SPACE_TO_DEPTH",)),
    _spec(_T.SVDF, L1, ("input", "weights_feature", "weights_time", "bias", "state_in", "rank", "activation"), (7,), ("state_out", "output"), (2,),
          family="recurrent", types=_F1, implemented=_IMPL_F, tflite=("SVDF",)),
    _spec(_T.TANH, L1, _UNARY, (1,),
          family="elementwise", types=_F1 | _at(L3, Q8) | _at(L4, Q8S), implemented=_IMPL_FQ, tflite=("TANH",)),
    # -- Feature level 2 (NNAPI 1.1, Android 9, API 28) --------------------------
    _spec(_T.BATCH_TO_SPACE_ND, L2, ("input", "block_shape", "nchw"), (2, 3), shape_inputs=(1,),
          family="rearrange", types=_FQ2, implemented=_IMPL_FQ, tflite=("BATCH_TO_SPACE_ND",)),
    _spec(_T.DIV, L2, _BINARY_ACT, (3,),
          family="elementwise", types=_at(L2, F32) | _at(L3, F16) | _at(L4, I32), implemented=(F16, F32, I32), tflite=("DIV",)),
    _spec(_T.MEAN, L2, _REDUCE, (3,), shape_inputs=(1,),
          family="reduce", types=_FQ2, implemented=_IMPL_FQ, tflite=("MEAN",)),
    _spec(_T.PAD, L2, ("input", "paddings"), (2,), shape_inputs=(1,),
          family="pad", types=_FQ2, implemented=_IMPL_FQ, tflite=("PAD",)),
    _spec(_T.SPACE_TO_BATCH_ND, L2, ("input", "block_shape", "paddings", "nchw"), (3, 4), shape_inputs=(1, 2),
          family="rearrange", types=_FQ2, implemented=_IMPL_FQ, tflite=("SPACE_TO_BATCH_ND",)),
    _spec(_T.SQUEEZE, L2, ("input", "axes"), (2,), shape_inputs=(1,),
          family="reshape", types=_FQ2, implemented=_IMPL_FQ, tflite=("SQUEEZE",)),
    _spec(_T.STRIDED_SLICE, L2, ("input", "begin", "end", "strides", "begin_mask", "end_mask", "shrink_axis_mask"), (7,), shape_inputs=(1, 2, 3),
          family="slice", types=_FQ2, implemented=_IMPL_FQ, tflite=("STRIDED_SLICE",)),
    _spec(_T.SUB, L2, _BINARY_ACT, (3,),
          family="elementwise", types=_at(L2, F32) | _at(L3, F16, Q8) | _at(L4, I32, Q8S), implemented=_IMPL_FIQ, tflite=("SUB",)),
    _spec(_T.TRANSPOSE, L2, ("input", "perm"), (2,), shape_inputs=(1,),
          family="rearrange", types=_FQ2, implemented=_IMPL_FQ, tflite=("TRANSPOSE",)),
    # -- Feature level 3 (NNAPI 1.2, Android 10, API 29) -------------------------
    _spec(_T.ABS, L3, _UNARY, (1,),
          family="elementwise", types=_at(L3, F16, F32) | _at(L4, I32), implemented=(F16, F32, I32), tflite=("ABS",)),
    _spec(_T.ARGMAX, L3, ("input", "axis"), (2,),
          family="reduce", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("ARG_MAX",)),
    _spec(_T.ARGMIN, L3, ("input", "axis"), (2,),
          family="reduce", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("ARG_MIN",)),
    _spec(_T.AXIS_ALIGNED_BBOX_TRANSFORM, L3, ("rois", "deltas", "batch_index", "image_info"), (4,),
          family="detection.proposals", types=_at(L3, F16, F32, Q16), implemented=(F16, F32, Q16)),
    _spec(_T.BIDIRECTIONAL_SEQUENCE_LSTM, L3, _BIDI_LSTM, (61,), ("fw_output", "bw_output", "fw_activation_state_out", "fw_cell_state_out", "bw_activation_state_out", "bw_cell_state_out"), (1, 2, 5, 6),
          family="recurrent", types=_F3, implemented=_IMPL_F, tflite=("BIDIRECTIONAL_SEQUENCE_LSTM",)),
    _spec(_T.BIDIRECTIONAL_SEQUENCE_RNN, L3, ("input", "fw_weights", "fw_recurrent_weights", "fw_bias", "fw_hidden_state_in", "bw_weights", "bw_recurrent_weights", "bw_bias", "bw_hidden_state_in", "aux_input", "fw_aux_weights", "bw_aux_weights", "activation", "time_major", "merge_outputs"), (15,), ("fw_output", "bw_output", "fw_hidden_state_out", "bw_hidden_state_out"), (1, 2, 3, 4),
          family="recurrent", types=_F3, implemented=_IMPL_F, tflite=("BIDIRECTIONAL_SEQUENCE_RNN",)),
    _spec(_T.BOX_WITH_NMS_LIMIT, L3, ("scores", "rois", "batch_index", "score_threshold", "max_num_detections", "nms_kernel", "iou_threshold", "sigma", "nms_score_threshold"), (9,), ("output_scores", "output_rois", "output_classes", "output_batch_index"), (4,),
          family="detection.nms", types=_FQ3, implemented=_IMPL_FQ),
    _spec(_T.CAST, L3, _UNARY, (1,),
          family="elementwise", types=_at(L3, F16, F32, I32, Q8) | _at(L4, Q8S, BOOL8, Q8SYMM, Q16, Q16SYMM), implemented=(F16, F32, I32, Q8, Q8S, BOOL8, Q8SYMM, Q16, Q16SYMM), tflite=("CAST",)),
    _spec(_T.CHANNEL_SHUFFLE, L3, ("input", "num_groups", "axis"), (3,),
          family="rearrange", types=_FQ3, implemented=_IMPL_FQ),
    _spec(_T.DETECTION_POSTPROCESSING, L3, ("scores", "deltas", "anchors", "scale_y", "scale_x", "scale_h", "scale_w", "use_regular_nms", "max_num_detections", "max_classes_per_detection", "max_detections_per_class", "score_threshold", "iou_threshold", "include_background"), (14,), ("output_scores", "output_boxes", "output_classes", "num_detections"), (4,),
          family="detection.ssd", types=_F3, implemented=_IMPL_F, tflite=("CUSTOM:TFLite_Detection_PostProcess",)),
    _spec(_T.EQUAL, L3, _BINARY, (2,),
          family="elementwise", types=_FIQ3 | _at(L3, BOOL8), implemented=(F16, F32, I32, Q8, Q8S, BOOL8), tflite=("EQUAL",)),
    _spec(_T.EXP, L3, _UNARY, (1,),
          family="elementwise", types=_F3, implemented=_IMPL_F, tflite=("EXP",)),
    _spec(_T.EXPAND_DIMS, L3, ("input", "axis"), (2,),
          family="reshape", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("EXPAND_DIMS",)),
    _spec(_T.GATHER, L3, ("input", "axis", "indices"), (3,),
          family="lookup", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("GATHER",)),
    _spec(_T.GENERATE_PROPOSALS, L3, ("scores", "deltas", "anchors", "image_info", "height_stride", "width_stride", "pre_nms_max", "post_nms_max", "iou_threshold", "min_size", "nchw"), (11,), ("output_scores", "output_rois", "output_batch_index"), (3,),
          family="detection.proposals", types=_FQ3, implemented=_IMPL_FQ),
    _spec(_T.GREATER, L3, _BINARY, (2,),
          family="elementwise", types=_FIQ3 | _at(L3, BOOL8), implemented=(F16, F32, I32, Q8, Q8S, BOOL8), tflite=("GREATER",)),
    _spec(_T.GREATER_EQUAL, L3, _BINARY, (2,),
          family="elementwise", types=_FIQ3 | _at(L3, BOOL8), implemented=(F16, F32, I32, Q8, Q8S, BOOL8), tflite=("GREATER_EQUAL",)),
    _spec(_T.GROUPED_CONV_2D, L3, ("input", "filter", "bias", *_EXPLICIT_PAD, *_STRIDES, "num_groups", "activation", "nchw"), (9, 12),
          family="conv.grouped", types=_FQ3, implemented=_IMPL_FQ),
    _spec(_T.HEATMAP_MAX_KEYPOINT, L3, ("heatmap", "boxes", "nchw"), (3,), ("keypoint_scores", "keypoint_locations"), (2,),
          family="detection.roi", types=_FQ3, implemented=_IMPL_FQ),
    _spec(_T.INSTANCE_NORMALIZATION, L3, ("input", "gamma", "beta", "epsilon", "nchw"), (5,),
          family="normalization", types=_F3, implemented=_IMPL_F),
    _spec(_T.LESS, L3, _BINARY, (2,),
          family="elementwise", types=_FIQ3 | _at(L3, BOOL8), implemented=(F16, F32, I32, Q8, Q8S, BOOL8), tflite=("LESS",)),
    _spec(_T.LESS_EQUAL, L3, _BINARY, (2,),
          family="elementwise", types=_FIQ3 | _at(L3, BOOL8), implemented=(F16, F32, I32, Q8, Q8S, BOOL8), tflite=("LESS_EQUAL",)),
    _spec(_T.LOG, L3, _UNARY, (1,),
          family="elementwise", types=_F3, implemented=_IMPL_F, tflite=("LOG",)),
    _spec(_T.LOGICAL_AND, L3, _BINARY, (2,),
          family="elementwise", types=_at(L3, BOOL8), implemented=(BOOL8,), tflite=("LOGICAL_AND",)),
    _spec(_T.LOGICAL_NOT, L3, _UNARY, (1,),
          family="elementwise", types=_at(L3, BOOL8), implemented=(BOOL8,), tflite=("LOGICAL_NOT",)),
    _spec(_T.LOGICAL_OR, L3, _BINARY, (2,),
          family="elementwise", types=_at(L3, BOOL8), implemented=(BOOL8,), tflite=("LOGICAL_OR",)),
    _spec(_T.LOG_SOFTMAX, L3, ("input", "beta", "axis"), (3,),
          family="normalization", types=_F3, implemented=_IMPL_F, tflite=("LOG_SOFTMAX",)),
    _spec(_T.MAXIMUM, L3, _BINARY, (2,),
          family="elementwise", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("MAXIMUM",)),
    _spec(_T.MINIMUM, L3, _BINARY, (2,),
          family="elementwise", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("MINIMUM",)),
    _spec(_T.NEG, L3, _UNARY, (1,),
          family="elementwise", types=_at(L3, F16, F32, I32), implemented=(F16, F32, I32), tflite=("NEG",)),
    _spec(_T.NOT_EQUAL, L3, _BINARY, (2,),
          family="elementwise", types=_FIQ3 | _at(L3, BOOL8), implemented=(F16, F32, I32, Q8, Q8S, BOOL8), tflite=("NOT_EQUAL",)),
    _spec(_T.PAD_V2, L3, ("input", "paddings", "pad_value"), (3,), shape_inputs=(1,),
          family="pad", types=_FQ3, implemented=_IMPL_FQ, tflite=("PADV2",)),
    _spec(_T.POW, L3, ("base", "exponent"), (2,),
          family="elementwise", types=_F3, implemented=_IMPL_F, tflite=("POW",)),
    _spec(_T.PRELU, L3, ("input", "alpha"), (2,),
          family="elementwise", types=_FQ3, implemented=_IMPL_FQ, tflite=("PRELU", "LEAKY_RELU")),
    _spec(_T.QUANTIZE, L3, _UNARY, (1,),
          family="elementwise", types=_F3, implemented=_IMPL_F, tflite=("QUANTIZE",)),
    _spec(_T.QUANTIZED_16BIT_LSTM, L3, ("input", *_LSTM_WEIGHTS[:8], "input_gate_bias", "forget_gate_bias", "cell_bias", "output_gate_bias", "cell_state_in", "output_state_in"), (15,), ("cell_state_out", "output"), (2,),
          family="recurrent", types=_at(L3, Q8), implemented=(Q8,)),
    _spec(_T.RANDOM_MULTINOMIAL, L3, ("input", "num_samples", "seeds"), (3,),
          family="generate", types=_F3, implemented=_IMPL_F),
    _spec(_T.REDUCE_ALL, L3, _REDUCE, (3,), shape_inputs=(1,),
          family="reduce", types=_at(L3, BOOL8), implemented=(BOOL8,)),
    _spec(_T.REDUCE_ANY, L3, _REDUCE, (3,), shape_inputs=(1,),
          family="reduce", types=_at(L3, BOOL8), implemented=(BOOL8,), tflite=("REDUCE_ANY",)),
    _spec(_T.REDUCE_MAX, L3, _REDUCE, (3,), shape_inputs=(1,),
          family="reduce", types=_FQ3, implemented=_IMPL_FQ, tflite=("REDUCE_MAX",)),
    _spec(_T.REDUCE_MIN, L3, _REDUCE, (3,), shape_inputs=(1,),
          family="reduce", types=_FQ3, implemented=_IMPL_FQ, tflite=("REDUCE_MIN",)),
    _spec(_T.REDUCE_PROD, L3, _REDUCE, (3,), shape_inputs=(1,),
          family="reduce", types=_F3, implemented=_IMPL_F, tflite=("REDUCE_PROD",)),
    _spec(_T.REDUCE_SUM, L3, _REDUCE, (3,), shape_inputs=(1,),
          family="reduce", types=_F3, implemented=_IMPL_F, tflite=("SUM",)),
    _spec(_T.ROI_ALIGN, L3, ("input", "rois", "batch_index", "output_height", "output_width", "height_ratio", "width_ratio", "sampling_points_height", "sampling_points_width", "nchw"), (10,),
          family="detection.roi", types=_FQ3, implemented=_IMPL_FQ),
    _spec(_T.ROI_POOLING, L3, ("input", "rois", "batch_index", "output_height", "output_width", "height_ratio", "width_ratio", "nchw"), (8,),
          family="detection.roi", types=_FQ3, implemented=_IMPL_FQ),
    _spec(_T.RSQRT, L3, _UNARY, (1,),
          family="elementwise", types=_at(L3, F16, F32) | _at(L7, Q8, Q8S), implemented=_IMPL_FQ, tflite=("RSQRT",)),
    _spec(_T.SELECT, L3, ("condition", "input_true", "input_false"), (3,),
          family="elementwise", types=_FIQ3, implemented=_IMPL_FIQ, primary="input_true", tflite=("SELECT", "SELECT_V2")),
    _spec(_T.SIN, L3, _UNARY, (1,),
          family="elementwise", types=_F3, implemented=_IMPL_F, tflite=("SIN",)),
    _spec(_T.SLICE, L3, ("input", "begin", "size"), (3,), shape_inputs=(1, 2),
          family="slice", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("SLICE",)),
    _spec(_T.SPLIT, L3, ("input", "axis", "num_splits"), (3,), ("*outputs",), (),
          family="slice", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("SPLIT",)),
    _spec(_T.SQRT, L3, _UNARY, (1,),
          family="elementwise", types=_F3, implemented=_IMPL_F, tflite=("SQRT",)),
    _spec(_T.TILE, L3, ("input", "multiples"), (2,), shape_inputs=(1,),
          family="concat", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("TILE",)),
    _spec(_T.TOPK_V2, L3, ("input", "k"), (2,), ("values", "indices"), (2,),
          family="reduce", types=_FIQ3, implemented=_IMPL_FIQ, tflite=("TOPK_V2",)),
    # Names are the explicit-padding signature (11).  The implicit one (9) is input,
    # filter, bias, output_shape, padding_scheme, strides, activation, nchw; its
    # input 3 is the output-shape TENSOR_INT32, hence shape_inputs=(3,) (in the
    # 11-input form input 3 is a scalar, which is compile-time anyway).
    _spec(_T.TRANSPOSE_CONV_2D, L3, ("input", "filter", "bias", *_EXPLICIT_PAD, *_STRIDES, "activation", "nchw"), (9, 11), shape_inputs=(3,),
          family="conv.transpose", types=_FQ3, implemented=_IMPL_FQ, tflite=("TRANSPOSE_CONV",)),
    _spec(_T.UNIDIRECTIONAL_SEQUENCE_LSTM, L3, (*_LSTM, "time_major", *_LAYER_NORM), (28,), ("output", "output_state_out", "cell_state_out"), (1, 3),
          family="recurrent", types=_F3, implemented=_IMPL_F, tflite=("UNIDIRECTIONAL_SEQUENCE_LSTM",)),
    _spec(_T.UNIDIRECTIONAL_SEQUENCE_RNN, L3, ("input", "weights", "recurrent_weights", "bias", "hidden_state_in", "activation", "time_major"), (7,), ("output", "hidden_state_out"), (1, 2),
          family="recurrent", types=_F3, implemented=_IMPL_F, tflite=("UNIDIRECTIONAL_SEQUENCE_RNN",)),
    _spec(_T.RESIZE_NEAREST_NEIGHBOR, L3, _RESIZE, (4, 5, 6),
          family="resize", types=_FQ3, implemented=_IMPL_FQ, tflite=("RESIZE_NEAREST_NEIGHBOR",)),
    # -- Feature level 4 (NNAPI 1.3, Android 11, API 30) -------------------------
    _spec(_T.QUANTIZED_LSTM, L4, _QLSTM, (32,), ("output_state_out", "cell_state_out", "output"), (3,),
          family="recurrent", types=_at(L4, Q8S), implemented=(Q8S,)),
    _spec(_T.IF, L4, ("condition", "then_model", "else_model", "*inputs"), (), ("*outputs",), (), min_inputs=3,
          family="control_flow", types=_at(L4, BOOL8), implemented=(BOOL8,), tflite=("IF",)),
    _spec(_T.WHILE, L4, ("condition_model", "body_model", "*inputs"), (), ("*outputs",), (), min_inputs=3,
          family="control_flow", types=_at(L4, MODEL), implemented=(MODEL,), tflite=("WHILE",)),
    _spec(_T.ELU, L4, ("input", "alpha"), (2,),
          family="elementwise", types=_at(L4, F16, F32), implemented=_IMPL_F, tflite=("ELU",)),
    _spec(_T.HARD_SWISH, L4, _UNARY, (1,),
          family="elementwise", types=_at(L4, F16, F32, Q8, Q8S), implemented=_IMPL_FQ, tflite=("HARD_SWISH",)),
    _spec(_T.FILL, L4, ("dims", "value"), (2,), shape_inputs=(0,),
          family="generate", types=_at(L4, F16, F32, I32), implemented=(F16, F32, I32), primary="output", tflite=("FILL",)),
    _spec(_T.RANK, L4, _UNARY, (1,),
          family="reshape", types=_at(L4, F16, F32, I32, Q8, Q8S, BOOL8, Q8SYMM, Q8CH, Q16, Q16SYMM),
          implemented=(F16, F32, I32, Q8, Q8S, BOOL8, Q8SYMM, Q8CH, Q16, Q16SYMM)),
    # -- Feature level 6 (Android 12 updatable NNAPI) ---------------------------
    _spec(_T.BATCH_MATMUL, L6, ("input0", "input1", "adj_x", "adj_y"), (4,),
          family="matmul", types=_at(L6, F16, F32, I32, Q8S), implemented=(F16, F32, I32, Q8S), tflite=("BATCH_MATMUL",)),
    _spec(_T.PACK, L6, ("axis", "*inputs"), (), min_inputs=2,
          family="concat", types=_at(L6, F16, F32, I32, Q8, Q8S), implemented=_IMPL_FIQ, primary="*inputs", tflite=("PACK",)),
    # -- Feature level 7 (Android 13 updatable NNAPI) ---------------------------
    _spec(_T.MIRROR_PAD, L7, ("input", "paddings", "mode"), (3,), shape_inputs=(1,),
          family="pad", types=_FIQ7, implemented=_IMPL_FIQ, tflite=("MIRROR_PAD",)),
    _spec(_T.REVERSE, L7, ("input", "axis"), (2,),
          family="rearrange", types=_FIQ7, implemented=_IMPL_FIQ, tflite=("REVERSE_V2",)),
    # -- OEM (code 10000; NNAPI 1.0) ---------------------------------------------
    _spec(_T.OEM_OPERATION, L1, ("*inputs",), (), ("*outputs",), (), min_inputs=0,
          family="oem", types={}),
)
# fmt: on

SPECS: dict[OperationType, OpSpec] = {s.type: s for s in OPS}

#: families whose operations have no rules module: IF and WHILE are validated
#: with the models they reference, by :mod:`nnc.model`
NO_RULES_MODULE = frozenset({"control_flow"})


def implemented_families() -> list[str]:
    """The families of the operations nnc implements, sorted: each names a
    lowering module (``passes/lowering/<family>.py``) and, but those of
    :data:`NO_RULES_MODULE`, a rules module (``dialects/rules/<family>.py``).
    Both packages import their modules from this list, so a family exists
    once, in the records."""
    return sorted({s.family for s in SPECS.values() if s.supported})


def complete_feature_level(specs: Mapping[OperationType, OpSpec] = SPECS) -> FeatureLevel:
    """The highest feature level nnc implements completely.

    NNAPI's device feature level means "every operation of this level and
    below, in every operand type those levels declare", so the device reports
    the last level before the first gap: an operation of level <= L with no
    lowering, or a type declared at level <= L missing from ``implemented``.
    Computed from the records, so adding an operation or a type raises the
    device's level by itself and nothing can claim more than is lowered.
    OEM_OPERATION has no defined semantics and is left out, as Android's CPU
    driver leaves it out."""
    complete = FeatureLevel.LEVEL_1
    for level in sorted(FeatureLevel):
        for spec in specs.values():
            if spec.type == OperationType.OEM_OPERATION or spec.since > level:
                continue
            declared = {t for t, since in spec.types.items() if since <= level}
            if not spec.supported or not declared <= spec.implemented:
                return complete if level > FeatureLevel.LEVEL_1 else level
        complete = level
    return complete
