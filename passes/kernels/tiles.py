"""Tile policy of the vector kernels: how large a block of outputs each kernel
keeps in vector registers.

Policy apart from mechanism, as IREE keeps its tile-size selection apart from
code generation: :mod:`nnc.passes.kernels.f32` builds a kernel for whatever
block shape it is asked for, and this module decides the block shapes from
what the target's vector unit offers.  :func:`tile_policy` is a pure function
of a :class:`VectorTarget`; its result, a :class:`TilePolicy`, travels in the
lowering context (``LoweringContext.tiles``), so one compilation uses one
policy throughout and two compilations never share one.

Today every compilation uses :data:`AVX512` (16 float lanes, 32 registers),
the values the kernels were tuned with; the speed issue (issue 11) derives
the target from the host or ``--target-cpu`` and validates the other targets.
The register budget of each kernel is spelt out in :func:`live_vectors`, so
that a policy can be checked against the register file without compiling.

This module imports nothing from the lowerings: it is a leaf, below both the
lowering context and the kernels.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VectorTarget:
    """What the tile policy needs to know about the target's vector unit."""

    #: width of the widest vector register the kernels may use, in bits
    vector_bits: int
    #: number of vector registers (x86-64: 16 with SSE/AVX2, 32 with AVX-512)
    registers: int
    #: whether a fused multiply-add exists (the kernels emit a contractable
    #: multiply and add either way; the blocking does not depend on it yet)
    fma: bool

    @property
    def f32_lanes(self) -> int:
        """float32 lanes of the widest vector."""
        return self.vector_bits // 32


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

    def gemm_rows(self, vectors: int) -> int:
        """Output pixels per GEMM block whose columns are ``vectors`` vectors."""
        return max(1, min(self.max_rows, self.accumulators // vectors))


def tile_policy(target: VectorTarget) -> TilePolicy:
    """The blocking for ``target``: three quarters of the registers hold
    accumulators, the rest the weight vectors and broadcasts of a step.

    For :data:`AVX512` this is exactly the blocking nnc was tuned with
    (16 lanes, 24 accumulators, blocks of up to 4 vectors x 12 pixels, 8
    depthwise pixels, dot products below 4 rows in blocks of 4 units).  Other
    targets get the same proportions; they are not used yet (issue 11)."""
    regs = target.registers
    return TilePolicy(
        lanes=target.f32_lanes,
        accumulators=regs * 3 // 4,
        max_col_vectors=max(1, regs // 8),
        max_rows=12,
        dw_pixels=max(1, regs // 4),
        dot_max_rows=4,
        dot_units=max(1, regs // 8),
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
    * dot products: ``(dot_max_rows - 1) x dot_units`` accumulators, one
      input vector per row and one weight vector per unit.
    * depthwise: one accumulator per pixel, one weight and one input vector.
    * transposition: a ``lanes x lanes`` block in registers plus the two
      results of a shuffle round.
    """
    full = policy.max_col_vectors
    tail = max(1, policy.lanes.bit_length() - 1)
    dot_rows = policy.dot_max_rows - 1
    return {
        "gemm": policy.gemm_rows(full) * full + full + 1,
        "gemm_tail": policy.gemm_rows(tail) * tail + tail + tail,
        "dot": dot_rows * policy.dot_units + dot_rows + policy.dot_units,
        "depthwise": policy.dw_pixels + 2,
        "transpose": policy.lanes + 2,
    }
