"""Rules of the box-proposal operations (Android's ``GenerateProposals.cpp``):
AXIS_ALIGNED_BBOX_TRANSFORM (refine boxes by per-class deltas, clip them to
their image) and GENERATE_PROPOSALS (anchors + deltas -> boxes, the best
ones kept by a score limit, a size filter and hard NMS).

Box coordinates are ``[x1, y1, x2, y2]``; with quantised data they are
TENSOR_QUANT16_ASYMM (GENERATE_PROPOSALS' anchors TENSOR_QUANT16_SYMM) of
scale 0.125 and zero point 0, which the reference's ``prepare`` checks
exactly and writes into the box outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nnc.dialects.rules.base import (
    OpCall,
    OperandInfo,
    RuleError,
    T,
    Unsupported,
    expect_count,
    expect_primary,
    expect_rank,
    expect_type,
    like,
    rule,
    same_dim,
)
from nnc.dialects.rules.operands import bool_param, int_param, scalar_param
from nnc.enums import OperationType as Op
from nnc.operand_types import NEW_COUNT, DynamicDim

#: scale of quantised box coordinates (zero point 0)
BOX_SCALE = 0.125
_FLOATS = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16)


def check_box_quant(call: OpCall, i: int) -> None:
    """A quantised box tensor must have scale 0.125 and zero point 0 (the
    reference's ``NN_RET_CHECK_EQ``, exact)."""
    info = call.input(i)
    if info.type in _FLOATS:
        return
    if info.scale != BOX_SCALE or info.zero_point != 0:
        raise RuleError(f"input {i} ({info.type.name} boxes) must have scale 0.125 and zeroPoint 0, "
                        f"got {info.scale} and {info.zero_point}")  # fmt: skip


def box_output(info: OperandInfo, dims: tuple[int, ...] | None, t: T) -> OperandInfo:
    """A box output of type ``t``: TENSOR_QUANT16_ASYMM gets scale 0.125, as
    the reference's ``prepare`` sets it whatever the model declared."""
    out = like(info, dims, t)
    if t in _FLOATS:
        return replace(out, scale=0.0, zero_point=0)
    return replace(out, scale=BOX_SCALE, zero_point=0)


def _dims(call: OpCall, i: int) -> tuple[int, ...] | None:
    return call.input(i).dims


@rule(Op.AXIS_ALIGNED_BBOX_TRANSFORM)
def axis_aligned_bbox_transform(call: OpCall) -> list[OperandInfo]:
    """rois [n, 4], deltas [n, 4 * classes], batch_index [n] (INT32),
    image_info [batches, 2] -> [n, 4 * classes] of the rois' type.  Float
    rois take deltas and image_info of the same type; TENSOR_QUANT16_ASYMM
    rois take TENSOR_QUANT8_ASYMM(_SIGNED) deltas and QUANT16_ASYMM
    image_info (Android's ``axis_aligned_bbox_transform::validate``)."""
    expect_count(call, (4,))
    rois = expect_primary(call)
    quant = rois.type == T.TENSOR_QUANT16_ASYMM
    deltas = expect_type(call, 1, (T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED) if quant else (rois.type,))
    expect_type(call, 2, (T.TENSOR_INT32,))
    expect_type(call, 3, (rois.type,))
    for i, rank in enumerate((2, 2, 1, 2)):
        expect_rank(call, i, rank)
    check_box_quant(call, 0)
    check_box_quant(call, 3)
    n = 0
    if rois.dims is not None:
        same_dim(rois.dims[1], 4, "rois must have 4 coordinates per box")
        n = rois.dims[0]
    width = 0
    if deltas.dims is not None:
        n = same_dim(n, deltas.dims[0], "deltas and rois disagree on the number of boxes")
        width = deltas.dims[1]
        if width and width % 4:
            raise RuleError(f"deltas must have 4 values per class, got {width}")
    if (batch := _dims(call, 2)) is not None:
        n = same_dim(n, batch[0], "batch_index and rois disagree on the number of boxes")
    if (info := _dims(call, 3)) is not None:
        same_dim(info[1], 2, "image_info must hold [height, width] per image")
    if rois.dims is None or deltas.dims is None:
        return [box_output(rois, None, rois.type)]
    return [box_output(rois, (n, width), rois.type)]


@dataclass(frozen=True)
class ProposalsParams:
    """GENERATE_PROPOSALS' compile-time scalars (inputs 4 to 10)."""

    height_stride: float
    width_stride: float
    pre_nms_max: int
    post_nms_max: int
    iou_threshold: float
    min_size: float
    nchw: bool


def proposals_params(call: OpCall) -> ProposalsParams:
    fs = T.FLOAT16 if call.input(0).type == T.TENSOR_FLOAT16 else T.FLOAT32
    return ProposalsParams(
        height_stride=scalar_param(call, 4, (fs,)),
        width_stride=scalar_param(call, 5, (fs,)),
        pre_nms_max=int_param(call, 6),
        post_nms_max=int_param(call, 7),
        iou_threshold=scalar_param(call, 8, (fs,)),
        min_size=scalar_param(call, 9, (fs,)),
        nchw=bool_param(call, 10),
    )


def proposals_per_batch(boxes: int, p: ProposalsParams) -> int:
    """The most boxes one image can keep: every anchor at every position, at
    most ``pre_nms_max`` when that limits the sort (``0 < pre < boxes``) and
    at most ``post_nms_max`` when it is not negative (the reference's hard
    NMS keeps none for 0, although the NDK calls it unlimited)."""
    n = boxes
    if 0 < p.pre_nms_max < n:
        n = p.pre_nms_max
    if p.post_nms_max >= 0:
        n = min(n, p.post_nms_max)
    return n


@rule(Op.GENERATE_PROPOSALS)
def generate_proposals(call: OpCall) -> list[OperandInfo]:
    """scores [batches, height, width, anchors] (NCHW: [batches, anchors,
    height, width]), deltas with 4 values per anchor, anchors [anchors, 4],
    image_info [batches, 2], the scalars of :class:`ProposalsParams` ->
    output_scores [k], output_rois [k, 4], output_batch_index [k], where k,
    the number of boxes kept, is known only at run time: the outputs'
    leading dimension is its bound (:func:`proposals_per_batch` per image),
    marked with a :class:`~nnc.operand_types.DynamicDim`.  Types as
    Android's ``generate_proposals::validate``: float tensors all of the
    scores' type; quantised scores and deltas of one type with
    TENSOR_QUANT16_SYMM anchors and TENSOR_QUANT16_ASYMM image_info (both of
    scale 0.125), giving TENSOR_QUANT16_ASYMM boxes."""
    expect_count(call, (11,))
    scores = expect_primary(call)
    quant = scores.type not in _FLOATS
    expect_type(call, 1, (scores.type,))
    expect_type(call, 2, (T.TENSOR_QUANT16_SYMM,) if quant else (scores.type,))
    image_type = T.TENSOR_QUANT16_ASYMM if quant else scores.type
    image = expect_type(call, 3, (image_type,))
    for i, rank in enumerate((4, 4, 2, 2)):
        expect_rank(call, i, rank)
    check_box_quant(call, 2)
    check_box_quant(call, 3)
    p = proposals_params(call)
    sd, dd, ad = _dims(call, 0), _dims(call, 1), _dims(call, 2)
    # scores' batches, height, width, anchors, whatever the layout
    bhwa = [0, 0, 0, 0] if sd is None else ([sd[0], sd[2], sd[3], sd[1]] if p.nchw else list(sd))
    if dd is not None:
        dhwc = [dd[0], dd[2], dd[3], dd[1]] if p.nchw else list(dd)
        for k, what in enumerate(("batches", "height", "width")):
            bhwa[k] = same_dim(bhwa[k], dhwc[k], f"deltas and scores disagree on the {what}")
        if bhwa[3]:
            same_dim(4 * bhwa[3], dhwc[3], "deltas must have 4 values per anchor")
    if ad is not None:
        bhwa[3] = same_dim(bhwa[3], ad[0], "anchors and scores disagree on the number of anchors")
        same_dim(ad[1], 4, "anchors must have 4 coordinates")
    if image.dims is not None:
        bhwa[0] = same_dim(bhwa[0], image.dims[0], "image_info and scores disagree on the batches")
        same_dim(image.dims[1], 2, "image_info must hold [height, width] per image")
    out_scores = replace(like(scores, (0,)), scale=scores.scale, zero_point=scores.zero_point)
    out_rois = box_output(image, (0, 4), image_type)
    out_batches = OperandInfo(T.TENSOR_INT32, (0,))
    if 0 in bhwa:  # not known yet (Model.finish)
        return [out_scores, out_rois, out_batches]
    for i, info in enumerate(call.inputs[:4]):
        if info.dynamic is not None:
            raise Unsupported(f"input {i} has a data-dependent dimension, which GENERATE_PROPOSALS cannot take")
    b, h, w, a = bhwa
    # At least one row: a static size 0 means "unknown" in nnc's types; the
    # count says 0 (post_nms_max 0 keeps nothing).
    bound = max(b * proposals_per_batch(h * w * a, p), 1)
    dyn = DynamicDim(0, NEW_COUNT)
    outs = (out_scores.with_dims((bound,)), out_rois.with_dims((bound, 4)), out_batches.with_dims((bound,)))
    return [replace(o, dynamic=dyn) for o in outs]
