"""Rule for DETECTION_POSTPROCESSING, the post-processing of SSD-style
detectors: anchors and box deltas become boxes, then one NMS per class
("regular") or one over every anchor's best class ("fast").

Validation follows Android's ``detection_postprocess::validate`` and
``prepare``: scores [batches, anchors, classes], deltas [batches, anchors,
>= 4], anchors [anchors, 4]; the four scales are > 0, the score and IoU
thresholds >= 0 (float scalars of the input's float type), classes > 1
(class 0 is the background), max_num_detections > 0, and the count the
chosen NMS reads (max_detections_per_class for regular NMS,
max_classes_per_detection for fast NMS) > 0.  The output shapes are static:
[batches, D] scores and classes, [batches, D, 4] boxes and [batches]
detection counts, with D = max_num_detections, times
max_classes_per_detection for fast NMS (each kept anchor reports its best
classes in consecutive slots).
"""

from __future__ import annotations

from dataclasses import replace

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
from nnc.dialects.rules.operands import bool_param, dim, int_param, scalar_param
from nnc.enums import OperationType as Op

#: input indexes (Android's kScoreTensor ... kIsBGInLabelScalar)
SCORES, DELTAS, ANCHORS = 0, 1, 2
SCALE_Y, SCALE_X, SCALE_H, SCALE_W = 3, 4, 5, 6
USE_REGULAR_NMS, MAX_DETECTIONS, MAX_CLASSES_PER_DETECTION, MAX_DETECTIONS_PER_CLASS = 7, 8, 9, 10
SCORE_THRESHOLD, IOU_THRESHOLD, INCLUDE_BACKGROUND = 11, 12, 13


def detections_per_batch(call: OpCall) -> int:
    """D, the second output dimension: max_num_detections, times
    max_classes_per_detection for fast NMS (Android's ``numOutDetections``)."""
    n = int_param(call, MAX_DETECTIONS)
    if bool_param(call, USE_REGULAR_NMS):
        return n
    return n * int_param(call, MAX_CLASSES_PER_DETECTION)


@rule(Op.DETECTION_POSTPROCESSING)
def detection_postprocessing(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (14,))
    scores = expect_primary(call)
    for i in (DELTAS, ANCHORS):
        expect_type(call, i, (scores.type,))
    ftype = T.FLOAT16 if scores.type == T.TENSOR_FLOAT16 else T.FLOAT32
    for i, what in ((SCALE_Y, "scale_y"), (SCALE_X, "scale_x"), (SCALE_H, "scale_h"), (SCALE_W, "scale_w")):
        v = scalar_param(call, i, (ftype,))
        if not v > 0:
            raise RuleError(f"{what} must be > 0, got {v}")
    for i, what in ((SCORE_THRESHOLD, "score_threshold"), (IOU_THRESHOLD, "iou_threshold")):
        v = scalar_param(call, i, (ftype,))
        if not v >= 0:
            raise RuleError(f"{what} must be >= 0, got {v}")
    regular = bool_param(call, USE_REGULAR_NMS)
    bool_param(call, INCLUDE_BACKGROUND)
    max_det = int_param(call, MAX_DETECTIONS)
    per_detection = int_param(call, MAX_CLASSES_PER_DETECTION)
    per_class = int_param(call, MAX_DETECTIONS_PER_CLASS)
    if max_det <= 0:
        raise RuleError(f"max_num_detections must be > 0, got {max_det}")
    if regular and per_class <= 0:
        raise RuleError(f"max_detections_per_class must be > 0 with regular NMS, got {per_class}")
    if not regular and per_detection <= 0:
        raise RuleError(f"max_classes_per_detection must be > 0 with fast NMS, got {per_detection}")
    expect_rank(call, SCORES, 3)
    expect_rank(call, DELTAS, 3)
    expect_rank(call, ANCHORS, 2)
    deltas, anchors = call.input(DELTAS), call.input(ANCHORS)
    batches = same_dim(dim(scores, 0), dim(deltas, 0), "deltas' batches vs the scores'")
    num_anchors = same_dim(dim(scores, 1), dim(deltas, 1), "deltas' anchors vs the scores'")
    num_anchors = same_dim(num_anchors, dim(anchors, 0), "anchors vs the scores' anchors")
    same_dim(dim(anchors, 1), 4, "anchors' second dimension")
    classes, box_len = dim(scores, 2), dim(deltas, 2)
    if scores.dims is not None and classes and classes <= 1:
        raise RuleError(f"scores must have more than 1 class (class 0 is the background), got {classes}")
    if deltas.dims is not None and box_len and box_len < 4:
        raise RuleError(f"deltas must have at least 4 values per box, got {box_len}")
    n = detections_per_batch(call)
    counts = replace(like(scores, (batches,), T.TENSOR_INT32), scale=0.0, zero_point=0, channel_quant=None)
    return [like(scores, (batches, n)), like(scores, (batches, n, 4)), counts.with_dims((batches, n)), counts]
