"""Convolutions and FULLY_CONNECTED (float32, and quantised 8-bit): the
lowerings of the conv family, one module per operation (``conv_2d``,
``depthwise``, ``grouped``, ``transpose``, ``fully_connected``) around the
shared geometry (``geometry``) and the paths the operations share
(``common``).  Their records name the family ``conv.<module>``.

Float32 CONV_2D and DEPTHWISE_CONV_2D in NHWC (depth multiplier 1) and
float32 FULLY_CONNECTED use the register-blocked vector kernels of
:mod:`nnc.passes.kernels.f32`, blocked by the compilation's tile policy
(``ctx.tiles``): a GEMM over output pixels x output channels whose
reduction reads the (padded) input windows directly
(:func:`~nnc.passes.lowering.conv.conv_2d.conv_2d_nhwc`), a depthwise kernel
applied to runs of output pixels split into interior and border runs instead
of padding (:mod:`~nnc.passes.lowering.conv.depthwise`), and dot products
for a FULLY_CONNECTED of few rows
(:func:`~nnc.passes.lowering.conv.fully_connected.fully_connected_f32`).
They start from the bias, apply the fused activation in registers and write
each output once.

Quantised (8-bit) NHWC CONV_2D and FULLY_CONNECTED with a filter known at
compile time, and NHWC DEPTHWISE_CONV_2D with depth multiplier 1, use the
int8 kernels of :mod:`nnc.passes.kernels.q8` (int32 accumulators in vector
registers, the filter packed with numpy, the requantisation in the kernel's
epilogue; bit-identical to the generic path below).

Every other case (NCHW, depth multiplier > 1, a quantised filter given at
run time) is lowered to three to five ``linalg.generic`` ops:

1. (only when some window reaches outside the input) the input is copied into
   the interior of a zero-filled temporary, so that the hot loop needs no
   bounds checks: a window tap becomes a plain affine index into the padded
   buffer (``geometry.padded_input``, ``ConvGeometry.window_index_of``);
2. the output is initialised with the bias, broadcast along the channels;
3. (CONV_2D in NHWC with enough output pixels, FULLY_CONNECTED with enough
   batches) the weights are transposed into a temporary, see
   ``common.TRANSPOSE_MIN_ROWS``;
4. one reduction generic accumulates into the output, with the output-pixel
   loops outermost and the reduction loops inside them;
5. (only with a fused activation) an in-place clamp of the output.

The geometry (layout, explicit padding computed like Android's
``calculateExplicitPadding``, strides, dilations, multiplier) lives in
:class:`~nnc.passes.lowering.conv.geometry.ConvGeometry`; together with
``padded_input`` and ``common.named_generic`` it is shared by the float and
the quantised variants, which differ only in the accumulator, the body and
the epilogue: for quantised inputs those come from
:class:`~nnc.passes.lowering.conv_q8.QuantConv` (int32 accumulation with the
zero points subtracted, then requantisation like Android's reference CPU
path; see :mod:`nnc.passes.lowering.conv_q8`).
"""
