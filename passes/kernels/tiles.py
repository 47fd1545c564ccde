"""Tile policy of the vector kernels: how large a block of outputs each kernel
keeps in vector registers.

Policy apart from mechanism, as IREE keeps its tile-size selection apart from
code generation: :mod:`nnc.passes.kernels.f32` builds a kernel for whatever
block shape it is asked for, and this module decides the block shapes from
what the target's vector unit offers.  :func:`tile_policy` is a pure function
of the target (its description, or just its :class:`VectorTarget`); its
result, a :class:`TilePolicy`, travels in the lowering context (``LoweringContext.tiles``), so one compilation uses one
policy throughout and two compilations never share one.

The policy is computed from the compilation's target description
(:class:`nnc.passes.target.TargetDescription`, an option of
``convert-nnapi-to-linalg``): the vector width sets the lanes, the number of
vector registers the register blocking.  The register budget of each kernel
is spelt out in :func:`live_vectors`, so that a policy can be checked against
the register file without compiling (and ``tests/test_kernels.py`` checks the
generated assembly for spills on AVX-512, AVX2, SSE4.2 and baseline x86-64).

This module imports nothing from the lowerings, only the target description:
it is a leaf, below both the lowering context and the kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from nnc.passes.target import Int8Dot, TargetDescription, VectorTarget

__all__ = ["AVX512", "FORM_ATTR", "STRIDES_ATTR", "DepthwiseForm", "DepthwiseStrides", "GemmForm", "TilePolicy", "VectorTarget", "depthwise_strides", "live_vectors", "target_depthwise_form", "target_form", "tile_policy"]


#: x86-64 with AVX-512F: 512-bit vectors, 32 registers, FMA
AVX512 = VectorTarget(vector_bits=512, registers=32, fma=True)


@dataclass(frozen=True)
class TilePolicy:
    """Blocking parameters of the float32 vector kernels (see
    :mod:`nnc.passes.kernels.f32` for the kernels that read each one)."""

    #: float32 lanes of the widest vector; narrower tails use halves of it
    lanes: int
    #: vector accumulators a GEMM block keeps in registers
    accumulators: int
    #: GEMM: at most this many vectors of output channels per block ...
    max_col_vectors: int
    #: ... and at most this many output pixels (rows) per block
    max_rows: int
    #: depthwise: output pixels along a row per block
    dw_pixels: int
    #: 1x1 convolutions / FULLY_CONNECTED with fewer rows than this use dot
    #: products over the original weight layout instead of transposing it
    dot_max_rows: int
    #: dot-product kernel: output channels per block
    dot_units: int
    #: vector registers of the target (default: AVX-512's 32, the register
    #: file the blocking was first tuned for)
    registers: int = 32

    @property
    def dw_q8_pixels(self) -> int:
        """The int8 depthwise kernel's pixels per block: one fewer than the
        float kernel's, as it keeps more vectors live besides the
        accumulators (the requantisation's per-channel parameters, and the
        second input of a tap pair); with 8 pixels LLVM spilled them on
        AVX-512, with 7 it does not."""
        return max(1, self.dw_pixels - 1)

    def dot_block_units(self, rows: int) -> int:
        """Output channels per dot-product block of ``rows`` input rows: the
        accumulators the most rows have (``(dot_max_rows - 1) x
        dot_units``), spent on more units when there are fewer rows.  Each
        accumulator is a chain of dependent multiply-adds, and one row's
        ``dot_units`` chains wait on their latency: on Zen 3 a 1280 x 1000
        FULLY_CONNECTED of one row took about 120 us with 2 units per block
        and 100 us with 6 (then reading the weights sets the pace)."""
        return self.dot_units * max(1, (self.dot_max_rows - 1) // rows)

    def gemm_rows(self, vectors: int) -> int:
        """Output pixels per GEMM block whose columns are ``vectors`` vectors:
        at most ``accumulators`` accumulators, and room left for the step's
        operands, one weight vector per column vector and, in the channel
        tail whose vectors all differ in width, one broadcast per vector
        (``rows x vectors + 2 x vectors <= registers``)."""
        room = self.registers // vectors - 2
        return max(1, min(self.max_rows, self.accumulators // vectors, room))


def tile_policy(target: VectorTarget | TargetDescription) -> TilePolicy:
    """The blocking for ``target`` (a description, or just its vector unit):
    three quarters of the registers hold accumulators, the rest the weight
    vectors and broadcasts of a step.

    * GEMM blocks of up to ``registers / 8`` vectors of output channels x
      ``accumulators / vectors`` pixels: 4 x 6 with 32 registers (AVX-512:
      64 x 6 floats; NEON: 16 x 6), 2 x 6 with 16 (AVX2: 16 x 6 floats,
      XNNPACK's shape; SSE: 8 x 6).
    * depthwise: up to 8 pixels (one weight vector serves 8 FMAs), as many
      as leave room for the inputs of a row of taps: when LLVM unrolls the
      taps of a row (the border kernel's tap loop) it loads each input once
      for the 3 taps, so ``p`` pixels keep ``p`` accumulators, ``p + 2``
      inputs and a weight live: 6 pixels with 16 registers, 8 with 32.
      (Measured on AVX2, MobileNet v2 layers: 8 pixels run up to a few
      percent faster than 6 in the interior, but the border kernel then
      spills; 4 is slower, 12 slower still.)
    * dot products: ``registers / 8`` units x 3 rows.

    For :data:`AVX512` this is exactly the blocking nnc was tuned with
    (16 lanes, 24 accumulators, blocks of up to 4 vectors x 12 pixels, 8
    depthwise pixels, dot products below 4 rows in blocks of 4 units)."""
    unit = target.vector if isinstance(target, TargetDescription) else target
    regs = unit.registers
    accumulators = regs * 3 // 4
    return TilePolicy(
        lanes=unit.f32_lanes,
        accumulators=accumulators,
        max_col_vectors=max(1, regs // 8),
        max_rows=12,
        dw_pixels=max(1, min(8, (regs - 3) // 2)),
        dot_max_rows=4,
        dot_units=max(1, regs // 8),
        registers=regs,
    )


def live_vectors(policy: TilePolicy) -> dict[str, int]:
    """The most vector registers each kernel keeps live at once under
    ``policy`` (accumulators + operands of one reduction step), worst block
    shape first.  Compare with :attr:`VectorTarget.registers`: above it,
    LLVM spills accumulators on every iteration.

    * GEMM: ``rows x vectors`` accumulators, one weight vector per column
      vector and one broadcast input per distinct vector width.  The widest
      full block has ``max_col_vectors`` vectors of one width; the channel
      tail (fewer than ``lanes`` channels) has one vector of each halving
      width (16 lanes: 8, 4, 2, 1), whatever ``max_col_vectors`` is.
    * dot products: ``rows x`` :meth:`TilePolicy.dot_block_units` accumulators,
      one input vector per row and one weight vector per unit, for the
      worst number of rows below ``dot_max_rows``.
    * depthwise: one accumulator per pixel, one weight and one input vector
      (when LLVM shares the inputs of a row of 3 taps, ``dw_pixels + 2``
      inputs instead of one: :func:`tile_policy` leaves room for that).
    * transposition: a ``lanes x lanes`` block in registers plus the two
      results of a shuffle round.
    """
    full = policy.max_col_vectors
    tail = max(1, policy.lanes.bit_length() - 1)
    dot = max(r * policy.dot_block_units(r) + r + policy.dot_block_units(r) for r in range(1, policy.dot_max_rows))
    return {
        "gemm": policy.gemm_rows(full) * full + full + 1,
        "gemm_tail": policy.gemm_rows(tail) * tail + tail + tail,
        "dot": dot,
        "depthwise": policy.dw_pixels + 2,
        "transpose": policy.lanes + 2,
    }


#: the operation attribute where ``nnc-choose-kernels`` records the kernel
#: form of a quantised operation, which the lowering applies: a
#: :class:`GemmForm` value for CONV_2D and FULLY_CONNECTED, a
#: :class:`DepthwiseForm` value for DEPTHWISE_CONV_2D
FORM_ATTR = "nnc.int8_form"


class DepthwiseForm(Enum):
    """How the int8 depthwise kernel multiplies (:func:`nnc.passes.kernels.q8.dw_kernel`)."""

    #: each tap's bytes widened to int32 and multiplied (``vpmulld``)
    WIDEN = "widen"
    #: two taps' bytes interleaved, widened to int16, one pair product per
    #: lane (``vpmaddwd`` and an add); any target
    PAIR = "pair"
    #: tap pairs with VNNI's ``vpdpwssd`` (the pair product and its sum in
    #: one instruction; AVX512-VNNI or AVX-VNNI)
    VPDPWSSD = "vpdpwssd"
    #: tap quads with VNNI's ``vpdpbusd``: four taps' bytes interleaved, no
    #: widening (one byte shuffle per pixel and four taps, where pairs take
    #: an interleave and a widening per two taps); int8 inputs have their
    #: top bit flipped (uint8 x int8 products), and the weights ``w -
    #: filter_zp`` must fit int8, else the layer takes ``vpdpwssd`` pairs
    VPDPBUSD = "vpdpbusd"

    @property
    def pairs(self) -> bool:
        return self in (DepthwiseForm.PAIR, DepthwiseForm.VPDPWSSD)

    @property
    def quads(self) -> bool:
        return self is DepthwiseForm.VPDPBUSD


#: the operation attribute where ``nnc-choose-kernels`` records how the
#: int8 depthwise interior kernel of a DEPTHWISE_CONV_2D gets the layer's
#: strides: a :class:`DepthwiseStrides` value
STRIDES_ATTR = "nnc.dw_strides"


class DepthwiseStrides(Enum):
    """How the interior int8 depthwise kernel (the whole window unrolled)
    gets the layer's strides (:func:`nnc.passes.kernels.q8.dw_kernel`'s
    ``geometry``)."""

    #: as constants: every load's address is a base register and a
    #: displacement; one kernel per layer shape
    CONSTANT = "constant"
    #: as parameters: one kernel per window shape and channel tail, shared
    #: by the layers that have them
    PARAMETERS = "parameters"


#: output pixels per image from which a depthwise layer's interior kernel
#: takes its strides as constants.  Measured on Zen 3 (AVX2, 16 vector
#: registers; MobileNetV2 int8): constant strides made the 64x64x16,
#: 32x32x48 and 32x32x96 layers 8-15% faster, the 16x16x96 layers 3-5%,
#: and the 8x8 and smaller ones no faster; each specialised kernel costs
#: 50-80 ms of LLVM at compile time, which a few microseconds per run do
#: not repay.
CONSTANT_STRIDES_MIN_PIXELS = 1024


def depthwise_strides(out_pixels: int) -> DepthwiseStrides:
    """The strides of the interior kernel of a depthwise layer with
    ``out_pixels`` output pixels per image (see
    :data:`CONSTANT_STRIDES_MIN_PIXELS`)."""
    return DepthwiseStrides.CONSTANT if out_pixels >= CONSTANT_STRIDES_MIN_PIXELS else DepthwiseStrides.PARAMETERS


def target_depthwise_form(dot: Int8Dot) -> DepthwiseForm:
    """Tap quads where VNNI has the byte dot product (``vpdpbusd``: four
    taps of a pixel per instruction after one byte shuffle, where
    ``vpdpwssd`` pairs take a shuffle and a widening per two taps; the
    shuffles set the pace: on Zen 4 the quads made MobileNetV1 and V2
    int8 7-9% faster than the pairs); elsewhere the interleaving costs
    what the pair product saves (measured on AVX2: the pair form 10-20%
    slower), so each tap is multiplied alone."""
    return DepthwiseForm.VPDPBUSD if dot in (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI) else DepthwiseForm.WIDEN


class GemmForm(Enum):
    """How the int8 GEMM multiplies (see :mod:`nnc.passes.kernels.q8`)."""

    #: int16 pairs from a widened copy of the input: ``vpmaddwd`` (SSE2,
    #: AVX2), ``vpdpwssd`` (VNNI); NEON's widening multiply-adds
    PAIR = "pair"
    #: uint8 x int8 quads, ``vpdpbusd`` (AVX512-VNNI, AVX-VNNI)
    VPDPBUSD = "vpdpbusd"
    #: int8 x int8 quads, ``sdot`` (AArch64 FEAT_DotProd)
    SDOT = "sdot"
    #: uint8 x int8 quads in widening arithmetic, on any target
    QUAD = "quad"

    @property
    def step(self) -> int:
        """Reduction steps per multiply: 2 (pairs) or 4 (quads)."""
        return 2 if self is GemmForm.PAIR else 4

    @property
    def unsigned_inputs(self) -> bool:
        """Whether a quad form's inputs are unsigned bytes."""
        return self is not GemmForm.SDOT


def target_form(dot: Int8Dot) -> GemmForm:
    """The fastest exact form with the target's dot instruction: the quads
    of VNNI and SDOT; else int16 pairs (AVX2's ``vpmaddubsw`` saturates its
    int16 pair sums, so it is not exact for arbitrary weights)."""
    if dot in (Int8Dot.AVX512_VNNI, Int8Dot.AVX_VNNI):
        return GemmForm.VPDPBUSD
    return GemmForm.SDOT if dot is Int8Dot.SDOT else GemmForm.PAIR
