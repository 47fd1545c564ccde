"""Rules for the region-of-interest operations: ROI_ALIGN and ROI_POOLING
(each box of a feature map resampled to a fixed-size output) and
HEATMAP_MAX_KEYPOINT (the best keypoint of each box's heatmap).

Operand types follow Android's ``validate`` of each operation: boxes have the
input's type for float inputs and are TENSOR_QUANT16_ASYMM (scale 0.125, zero
point 0, which Android checks in ``prepare``) for quantised ones; the scalar
ratios are FLOAT16 with a float16 input, FLOAT32 otherwise.  Shapes follow
``prepare``: ROI_ALIGN/ROI_POOLING give ``[num_rois, out_h, out_w, depth]``
(NCHW: ``[num_rois, depth, out_h, out_w]``); HEATMAP_MAX_KEYPOINT gives
``[num_boxes, num_keypoints]`` scores and ``[num_boxes, num_keypoints, 2]``
keypoints of the boxes' type.  What only the data can break (box
coordinates, batch indices) is checked at run time by the lowering.

Quantisation of the outputs: ROI_ALIGN's output and HEATMAP_MAX_KEYPOINT's
scores keep their own declared scale and zero point (``prepare`` sets only
the type); ROI_POOLING copies the input's (``Shape output = input``);
quantised keypoints are TENSOR_QUANT16_ASYMM with scale 0.125, zero point 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
)
from nnc.dialects.rules.elementwise import FLOAT_TYPES
from nnc.dialects.rules.operands import (
    bool_param,
    dim,
    int_param,
    int_tensor,
    join_layout,
    same_quant_output,
    scalar_param,
    split_layout,
)
from nnc.enums import OperationType as Op

#: the quantisation Android requires of TENSOR_QUANT16_ASYMM boxes
BOX_SCALE, BOX_ZERO_POINT = 0.125, 0


def box_type(x: OperandInfo) -> T:
    """The operand type of the boxes that go with feature map / heatmap ``x``."""
    return x.type if x.type in FLOAT_TYPES else T.TENSOR_QUANT16_ASYMM


def expect_boxes(call: OpCall, i: int, x: OperandInfo) -> OperandInfo:
    """Input ``i``: ``[n, 4]`` boxes of :func:`box_type`, quantised ones with
    scale 0.125 and zero point 0."""
    boxes = expect_type(call, i, (box_type(x),))
    expect_rank(call, i, 2)
    if dim(boxes, 1) not in (0, 4):
        raise RuleError(f"input {i} (boxes) must have 4 columns, got {dim(boxes, 1)}")
    if boxes.type == T.TENSOR_QUANT16_ASYMM and (
        not math.isclose(boxes.scale, BOX_SCALE) or boxes.zero_point != BOX_ZERO_POINT
    ):
        raise RuleError(
            f"input {i} (boxes) must have scale {BOX_SCALE} and zero point {BOX_ZERO_POINT}, "
            f"got {boxes.scale} and {boxes.zero_point}"
        )
    return boxes


@dataclass(frozen=True)
class RoiParams:
    """The scalar inputs of ROI_ALIGN / ROI_POOLING (sampling ratios: ROI_ALIGN
    only; 0 = adaptive)."""

    out_h: int
    out_w: int
    height_ratio: float
    width_ratio: float
    nchw: bool
    sampling_h: int = 0
    sampling_w: int = 0


def roi_params(call: OpCall) -> RoiParams:
    """Parse and check the scalars: input, rois, batch_index, out_h, out_w,
    h_ratio, w_ratio, [sampling_h, sampling_w,] nchw."""
    x = call.input(0)
    ratio = (T.FLOAT16,) if x.type == T.TENSOR_FLOAT16 else (T.FLOAT32,)
    align = call.type == Op.ROI_ALIGN
    p = RoiParams(
        out_h=int_param(call, 3),
        out_w=int_param(call, 4),
        height_ratio=scalar_param(call, 5, ratio),
        width_ratio=scalar_param(call, 6, ratio),
        sampling_h=int_param(call, 7) if align else 0,
        sampling_w=int_param(call, 8) if align else 0,
        nchw=bool_param(call, 9 if align else 7),
    )
    if p.out_h <= 0 or p.out_w <= 0:
        raise RuleError(f"output size must be positive, got {p.out_h}x{p.out_w}")
    if not (p.height_ratio > 0 and p.width_ratio > 0):
        raise RuleError(f"ratios must be positive, got {p.height_ratio} and {p.width_ratio}")
    if p.sampling_h < 0 or p.sampling_w < 0:
        raise RuleError(f"sampling ratios must be >= 0, got {p.sampling_h} and {p.sampling_w}")
    return p


@rule(Op.ROI_ALIGN, Op.ROI_POOLING)
def roi_align_pooling(call: OpCall) -> list[OperandInfo]:
    """input (rank 4), rois ``[R, 4]``, batch_index ``[R]`` (TENSOR_INT32),
    scalars (:func:`roi_params`) -> ``[R, out_h, out_w, depth]`` of the input's
    type (Android's ``roi_align::prepare`` / ``roi_pooling::prepare``)."""
    expect_count(call, (10,) if call.type == Op.ROI_ALIGN else (8,))
    x = expect_primary(call)
    expect_rank(call, 0, 4)
    rois = expect_boxes(call, 1, x)
    batch = int_tensor(call, 2, 1, "batch_index")
    p = roi_params(call)
    if call.type == Op.ROI_POOLING:
        same_quant_output(call, x)
    _, _, _, c = split_layout(x, p.nchw)
    num_rois = dim(rois, 0)
    if num_rois and dim(batch, 0) and dim(batch, 0) != num_rois:
        raise RuleError(f"batch_index has {dim(batch, 0)} entries for {num_rois} rois")
    num_rois = num_rois or dim(batch, 0)
    out = like(x, join_layout(num_rois, p.out_h, p.out_w, c, p.nchw))
    return [out]


@rule(Op.HEATMAP_MAX_KEYPOINT)
def heatmap_max_keypoint(call: OpCall) -> list[OperandInfo]:
    """heatmap ``[N, S, S, K]`` (NCHW ``[N, K, S, S]``, S >= 2), boxes
    ``[N, 4]``, nchw -> scores ``[N, K]`` (heatmap's type), keypoints
    ``[N, K, 2]`` (boxes' type), as Android's ``heatmap_max_keypoint::prepare``."""
    expect_count(call, (3,))
    x = expect_primary(call)
    expect_rank(call, 0, 4)
    boxes = expect_boxes(call, 1, x)
    nchw = bool_param(call, 2)
    n = dim(x, 0)
    size = dim(x, 2)
    keypoints = dim(x, 1 if nchw else 3)
    other = dim(x, 3 if nchw else 1)
    if size and other and size != other:
        raise RuleError(f"heatmap must be square, got {other}x{size}")
    size = size or other
    if size and size < 2:
        raise RuleError(f"heatmap size must be >= 2, got {size}")
    if n and dim(boxes, 0) and dim(boxes, 0) != n:
        raise RuleError(f"boxes has {dim(boxes, 0)} rows for {n} heatmaps")
    n = n or dim(boxes, 0)
    scores = like(x, (n, keypoints))
    points = like(boxes, (n, keypoints, 2))
    return [scores, points]
