"""Rules of the detection operations whose output size depends on the data.

BOX_WITH_NMS_LIMIT (Android's ``box_with_nms_limit::prepare``) keeps, per
batch, the boxes that survive a score threshold and non-maximum suppression:
how many is known only at run time.  Its rule returns the BOUND (every
non-background class of every box: ``num_rois * (num_classes - 1)``, at most
``num_rois * max_num_detections`` when that is set) as the outputs' leading
dimension, each output marked with a :class:`~nnc.operand_types.DynamicDim`
whose count is :data:`~nnc.operand_types.NEW_COUNT` (shape inference gives
the operation its own count, see :mod:`nnc.dialects.rules.dynamic`).
"""

from __future__ import annotations

import math
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
from nnc.enums import OperationType as Op
from nnc.operand_types import NEW_COUNT, DynamicDim

#: scale and zero point of TENSOR_QUANT16_ASYMM box coordinates (the NDK fixes them)
BOX_QUANT = (0.125, 0)
#: BOX_WITH_NMS_LIMIT's nms_kernel values: hard, linear, Gaussian
NMS_KERNELS = {0: "hard", 1: "linear", 2: "gaussian"}


def box_type(scores: OperandInfo) -> T:
    """The type of the box coordinates that go with ``scores``: the same float
    type, TENSOR_QUANT16_ASYMM with quantised scores."""
    return scores.type if scores.type in (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16) else T.TENSOR_QUANT16_ASYMM


def check_boxes_quant(call: OpCall, i: int) -> None:
    """TENSOR_QUANT16_ASYMM boxes must have scale 0.125 and zero point 0."""
    info = call.input(i)
    if info.type == T.TENSOR_QUANT16_ASYMM and not (
        math.isclose(info.scale, BOX_QUANT[0], rel_tol=1e-6) and info.zero_point == BOX_QUANT[1]
    ):
        raise RuleError(f"input {i} (TENSOR_QUANT16_ASYMM boxes) must have scale 0.125 and zeroPoint 0, "
                        f"got {info.scale} and {info.zero_point}")  # fmt: skip


def float_scalar_type(scores: OperandInfo) -> T:
    return T.FLOAT16 if scores.type == T.TENSOR_FLOAT16 else T.FLOAT32


@rule(Op.BOX_WITH_NMS_LIMIT)
def box_with_nms_limit(call: OpCall) -> list[OperandInfo]:
    expect_count(call, (9,))
    scores = expect_primary(call)
    rois = expect_type(call, 1, (box_type(scores),))
    batches = expect_type(call, 2, (T.TENSOR_INT32,))
    fs = float_scalar_type(scores)
    for i in (3, 6, 7, 8):
        expect_type(call, i, (fs,))
    for i in (4, 5):
        expect_type(call, i, (T.INT32,))
    expect_rank(call, 0, 2)
    expect_rank(call, 1, 2)
    expect_rank(call, 2, 1)
    check_boxes_quant(call, 1)
    num_rois, num_classes = scores.dims if scores.dims is not None else (0, 0)
    if rois.dims is not None:
        num_rois = same_dim(num_rois, rois.dims[0], "rois and scores disagree on the number of boxes")
        if num_classes:
            same_dim(4 * num_classes, rois.dims[1], "rois must have 4 coordinates per class")
    if batches.dims is not None:
        num_rois = same_dim(num_rois, batches.dims[0], "batch_index and scores disagree on the number of boxes")
    if scores.dims is not None and num_classes and num_classes < 2:
        raise RuleError(f"scores must have more than one class (class 0 is the background), got {num_classes}")
    kernel = call.scalar(5)
    if kernel not in NMS_KERNELS:
        raise RuleError(f"nms_kernel must be 0 (hard), 1 (linear) or 2 (gaussian), got {kernel}")
    max_detections = call.scalar(4)
    bound = num_rois * max(num_classes - 1, 0)
    if max_detections >= 0:
        bound = min(bound, num_rois * max_detections)
    dyn = DynamicDim(0, NEW_COUNT) if bound > 0 else None
    out_scores = like(scores, (bound,))
    out_rois = replace(like(rois, (bound, 4)), scale=rois.scale, zero_point=rois.zero_point)
    out_classes = OperandInfo(T.TENSOR_INT32, (bound,))
    out_batches = OperandInfo(T.TENSOR_INT32, (bound,))
    return [replace(o, dynamic=dyn) for o in (out_scores, out_rois, out_classes, out_batches)]
