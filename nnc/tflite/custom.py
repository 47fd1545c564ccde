"""Custom operators (named ``CUSTOM:<code>``, options in a flexbuffer
map): only SSD's ``TFLite_Detection_PostProcess`` maps, onto NNAPI's
DETECTION_POSTPROCESSING."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nnc.enums import FuseCode, OperandType, OperationType
from nnc.tflite.reader import _TFL_TYPE_NAMES
from nnc.tflite.state import Converter, _Call, _Unsupported

T = OperandType
Op = OperationType

#: "CUSTOM:<code>" -> its converter (merged into ``CONVERTERS``)
CUSTOM_OPS: dict[str, Converter] = {}


def custom_op(name: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        CUSTOM_OPS[name] = fn
        return fn

    return register


def _custom_options(c: _Call) -> dict[str, Any]:
    """The operator's ``custom_options``, a flexbuffer map, as a dict.  Read
    with the ``flatbuffers`` package's own flexbuffers module (it comes with
    ``tflite``'s accessors, from the same project as the format)."""
    from flatbuffers import flexbuffers  # with the tflite package: loaded only when a model needs it

    if c.op.CustomOptionsIsNone() or c.op.CustomOptionsLength() == 0:
        raise _Unsupported("custom_options (a flexbuffer map) missing")
    try:
        opts = flexbuffers.Loads(c.op.CustomOptionsAsNumpy().tobytes())
    except Exception as e:  # noqa: BLE001 - a corrupt flexbuffer fails anywhere in the reader
        raise _Unsupported(f"custom_options are not a valid flexbuffer: {type(e).__name__}: {e}") from None
    if not isinstance(opts, dict):
        raise _Unsupported("custom_options are not a flexbuffer map")
    return opts


def _option(opts: dict[str, Any], key: str, kind: type, default: Any = None) -> Any:
    """``opts[key]`` as ``kind`` (int, float or bool); ``default`` if absent
    (None: the option is required)."""
    v = opts.get(key, default)
    if v is None:
        raise _Unsupported(f"custom option {key} missing")
    if isinstance(v, bool | int | float) and not (kind is bool and isinstance(v, float)):
        return kind(v)
    raise _Unsupported(f"custom option {key} must be {kind.__name__}, got {v!r}")


def _as_float32(c: _Call, k: int) -> int:
    """Input ``k`` as a float32 operand: itself, a dequantised copy of a
    quantised constant (TFLite's ``(q - zero_point) * scale`` in float32,
    folded at import), or a DEQUANTIZE of a quantised tensor."""
    t = c.tensor(k)
    if t.tfl_type == 0:
        return c.input(k)
    if t.tfl_type not in (3, 9) or not t.quantized:
        name = _TFL_TYPE_NAMES.get(t.tfl_type, t.tfl_type)
        raise _Unsupported(f"input {k} is {name}; float32 or quantised 8-bit expected")
    if t.data is not None:
        zero_point = t.zero_points[0] if t.zero_points.size else 0
        real = (t.data.astype(np.float32) - np.float32(zero_point)) * np.float32(t.scales[0])
        return c.imp.const(real.astype(np.float32), T.TENSOR_FLOAT32)
    out = c.imp.model.add_operand(T.TENSOR_FLOAT32, t.shape)
    c.emit(Op.DEQUANTIZE, [c.input(k)], [out])
    return out


@custom_op("CUSTOM:TFLite_Detection_PostProcess")
def _detection_postprocess(c: _Call) -> None:
    """SSD post-processing, as TFLite's NNAPI delegates map it to
    DETECTION_POSTPROCESSING: inputs (box encodings, class predictions,
    anchors) become (scores, deltas, anchors), the options its scalars
    (include_background false: classes count from 0 without the background);
    outputs (boxes, classes, scores, num_detections) come from (scores,
    boxes, classes, count), the int32 classes and count through a CAST to
    TFLite's float32.  With fast NMS and several classes per box, NNAPI's
    count is of filled slots and TFLite's of boxes: the count is divided by
    the classes each box fills (LiteRT's num_detections).  Class predictions without a background column
    (``num_classes`` columns, TFLite's label offset 0) get a zero one by PAD:
    NNAPI always skips column 0.  Quantised inputs are dequantised first
    (TFLite's kernel does the same per element)."""
    if len(c.ins) != 3 or len(c.outs) != 4:
        raise _Unsupported(f"expected 3 inputs and 4 outputs, got {len(c.ins)} and {len(c.outs)}")
    o = _custom_options(c)
    max_det = _option(o, "max_detections", int)
    per_det = _option(o, "max_classes_per_detection", int)
    regular = _option(o, "use_regular_nms", bool, False)
    num_classes = _option(o, "num_classes", int)
    scores_t, boxes_t = c.tensor(1), c.tensor(0)
    if len(scores_t.shape) != 3 or len(boxes_t.shape) != 3:
        raise _Unsupported("box encodings and class predictions must have rank 3")
    batches, anchors, columns = scores_t.shape
    scores = _as_float32(c, 1)
    if columns == num_classes:  # no background column: prepend one NNAPI will skip
        padded = c.imp.model.add_operand(T.TENSOR_FLOAT32, (batches, anchors, columns + 1))
        c.emit(Op.PAD, [scores, c.imp.const(np.array([[0, 0], [0, 0], [1, 0]], np.int32))], [padded])
        scores = padded
    elif columns != num_classes + 1:
        raise _Unsupported(f"class predictions have {columns} columns for num_classes {num_classes}")
    n = max_det if regular else max_det * per_det
    if any(c.imp.tensors[c.outs[k]].tfl_type != 0 for k in (0, 2)):
        raise _Unsupported("boxes and scores outputs must be float32")
    tfl_shapes = [c.imp.tensors[k].shape for k in c.outs]
    want = [(batches, n, 4), (batches, n), (batches, n), (batches,)]
    for k, (got, expected) in enumerate(zip(tfl_shapes, want)):
        if got and tuple(got) != expected:
            raise _Unsupported(f"output {k} has shape {list(got)}; DETECTION_POSTPROCESSING gives {list(expected)}")
    f, i = c.imp.float32, c.imp.int32
    ins = [scores, _as_float32(c, 0), _as_float32(c, 2),
           *(f(_option(o, key, float)) for key in ("y_scale", "x_scale", "h_scale", "w_scale")),
           c.imp.bool8(regular), i(max_det), i(per_det), i(_option(o, "detections_per_class", int, 100)),
           f(_option(o, "nms_score_threshold", float)), f(_option(o, "nms_iou_threshold", float)),
           c.imp.bool8(False)]  # fmt: skip
    classes = c.imp.model.add_operand(T.TENSOR_INT32, (batches, n))
    count = c.imp.model.add_operand(T.TENSOR_INT32, (batches,))
    c.emit(Op.DETECTION_POSTPROCESSING, ins, [c.output(2), c.output(0), classes, count])
    c.emit(Op.CAST, [classes], [c.output(1)])
    per_anchor = 1 if regular else min(per_det, num_classes)
    if per_anchor == 1:
        c.emit(Op.CAST, [count], [c.output(3)])
        return
    # NNAPI counts the filled slots, TFLite the kept boxes (each fills per_anchor slots): exact division
    slots = c.imp.model.add_operand(T.TENSOR_FLOAT32, (batches,))
    c.emit(Op.CAST, [count], [slots])
    c.emit(Op.DIV, [slots, c.imp.const(np.array([per_anchor], np.float32), T.TENSOR_FLOAT32),
                    c.imp.int32(FuseCode.NONE)], [c.output(3)])  # fmt: skip

