"""The target description: what the code is compiled for, as the lowering
needs to know it.

A compilation targets an LLVM triple, CPU name and feature string (the
runtime's :class:`nnc.runtime.jit.Target`, from the host or ``--target-cpu``).
The vector kernels need a few facts derived from them: how wide a vector
register is (lanes per element type), how many there are, whether a fused
multiply-add exists and which int8 dot-product instruction the CPU has.
:class:`TargetDescription` holds the triple, CPU and the set of enabled
features, and derives those facts from the features alone, so that two
compilations with the same features get the same kernels whatever machine
compiles them.

The features come in LLVM's spelling (``+avx512f,+avx2,+fma,-avxvnni,...``).
The host's list from LLVM names every feature, so it is read as it is; a
CPU name alone (``--target-cpu skylake-avx512``) has an empty list, and the
features that CPU implies are found by :func:`nnc.runtime.cpu_probe.implied_features`
(LLVM compiles a probe for that CPU; this module cannot, being pure Python
below llvmlite).  :func:`TargetDescription.parse` closes a partial list under
the implications that matter here (``+avx512f`` implies AVX2 and FMA, ...),
so a hand-written list such as ``+avx2,+fma`` describes what it says.

This module imports nothing from nnc: the tile policy
(:mod:`nnc.passes.kernels.tiles`) and the lowering pass's option read it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum

#: element type -> bits, for :meth:`TargetDescription.lanes`
ELEMENT_BITS = {"f32": 32, "i32": 32, "f16": 16, "i16": 16, "i8": 8}

#: feature -> features it implies (LLVM's x86 and AArch64 hierarchy, the part
#: the kernels care about)
_IMPLIES: dict[str, tuple[str, ...]] = {
    "avx512vnni": ("avx512f",),
    "avx512bw": ("avx512f",),
    "avx512vl": ("avx512f",),
    "avx512f": ("avx2", "fma", "f16c"),
    "avxvnni": ("avx2",),
    "fma": ("avx",),
    "f16c": ("avx",),
    "avx2": ("avx",),
    "avx": ("sse4.2",),
    "sse4.2": ("sse4.1",),
    "sse4.1": ("ssse3",),
    "ssse3": ("sse3",),
    "sse3": ("sse2",),
    "dotprod": ("neon",),
    "i8mm": ("neon",),
}

#: features every CPU of an architecture has (x86-64's SSE2, AArch64's NEON)
_BASELINE = {"x86_64": ("sse2",), "aarch64": ("neon",)}


class Int8Dot(Enum):
    """The best instruction for an int8 dot product with int32 accumulation."""

    #: AVX512-VNNI ``vpdpbusd`` on zmm (u8 x s8, 4 products per i32 lane)
    AVX512_VNNI = "avx512vnni"
    #: AVX-VNNI ``vpdpbusd`` on ymm (VEX encoded, Alder Lake and later)
    AVX_VNNI = "avxvnni"
    #: ``vpmaddubsw`` + ``vpmaddwd`` (AVX2 on ymm, SSSE3 on xmm)
    PMADDUBSW = "pmaddubsw"
    #: AArch64 ``sdot``/``udot`` (FEAT_DotProd)
    SDOT = "sdot"
    #: widening multiplies and adds only
    NONE = "none"


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


def parse_features(features: str) -> frozenset[str]:
    """The enabled features of an LLVM feature string (``+a,-b,+c``), later
    entries overriding earlier ones, as LLVM reads it."""
    enabled: dict[str, bool] = {}
    for item in features.split(","):
        item = item.strip()
        if len(item) > 1 and item[0] in "+-":
            enabled[item[1:]] = item[0] == "+"
    return frozenset(f for f, on in enabled.items() if on)


def architecture(triple: str) -> str:
    """``x86_64``, ``aarch64`` or the triple's first component."""
    arch = triple.split("-", 1)[0]
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)


def _closure(arch: str, features: frozenset[str]) -> frozenset[str]:
    todo = [*features, *_BASELINE.get(arch, ())]
    seen: set[str] = set()
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo.extend(_IMPLIES.get(f, ()))
    return frozenset(seen)


@dataclass(frozen=True)
class TargetDescription:
    """A compilation target: LLVM triple, CPU name and enabled features
    (closed under implication), and the vector facts derived from them."""

    triple: str
    cpu: str
    #: enabled features, LLVM names without the ``+``
    features: frozenset[str]

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def parse(triple: str, cpu: str, features: str) -> TargetDescription:
        """From LLVM's spelling: ``features`` as in a target machine's
        feature string (the complete list for the host; for a CPU name,
        the list :func:`nnc.runtime.cpu_probe.implied_features` derives).
        Parsed once per spelling (the lowering reads its target from its
        options at every compilation; a description is immutable)."""
        return TargetDescription(triple, cpu, _closure(architecture(triple), parse_features(features)))

    @property
    def arch(self) -> str:
        return architecture(self.triple)

    def has(self, feature: str) -> bool:
        return feature in self.features

    @property
    def vector_bits(self) -> int:
        """Width of the widest vector register the kernels use."""
        if self.arch == "x86_64":
            return 512 if self.has("avx512f") else 256 if self.has("avx") else 128
        return 128  # NEON, and a conservative width for other architectures

    @property
    def registers(self) -> int:
        """Number of vector registers (AVX-512 doubles x86-64's 16)."""
        if self.arch == "x86_64":
            return 32 if self.has("avx512f") else 16
        if self.arch == "aarch64":
            return 32
        return 16

    @property
    def fma(self) -> bool:
        if self.arch == "x86_64":
            return self.has("fma")
        return self.arch == "aarch64"

    @property
    def half_conversions(self) -> bool:
        """Whether float16 <-> float32 conversions are instructions (x86 F16C,
        AArch64's FCVT); elsewhere LLVM would call compiler-rt's
        ``__extendhfsf2``/``__truncsfhf2``, which a JIT-loaded object cannot
        count on, so the float16 lowering converts with integer arithmetic."""
        if self.arch == "x86_64":
            return self.has("f16c")
        return self.arch == "aarch64"

    @property
    def int8_dot(self) -> Int8Dot:
        if self.arch == "x86_64":
            if self.has("avx512vnni"):
                return Int8Dot.AVX512_VNNI
            if self.has("avxvnni"):
                return Int8Dot.AVX_VNNI
            return Int8Dot.PMADDUBSW if self.has("ssse3") else Int8Dot.NONE
        if self.arch == "aarch64" and self.has("dotprod"):
            return Int8Dot.SDOT
        return Int8Dot.NONE

    @property
    def byte_shuffle_bits(self) -> int:
        """Width in bits of the target's byte shuffle by a vector of
        indices (x86 ``pshufb``: SSSE3 128, AVX2 256, AVX512BW 512), the
        byte table lookups' vector form; 0 where there is none."""
        if self.arch != "x86_64":
            return 0
        if self.has("avx512bw"):
            return 512
        if self.has("avx2"):
            return 256
        return 128 if self.has("ssse3") else 0

    def lanes(self, element: str) -> int:
        """Lanes of ``element`` (``f32``, ``i32``, ``i16``, ``i8``) in the widest vector."""
        return self.vector_bits // ELEMENT_BITS[element]

    @property
    def vector(self) -> VectorTarget:
        """The vector unit, as the tile policy reads it."""
        return VectorTarget(self.vector_bits, self.registers, self.fma)

    @property
    def feature_string(self) -> str:
        """The enabled features in LLVM's spelling, sorted (a pass option)."""
        return ",".join("+" + f for f in sorted(self.features))

    def summary(self) -> str:
        """One line for reports: ``znver3 (x86_64): 256-bit x 16, FMA, int8 pmaddubsw``."""
        fma = ", FMA" if self.fma else ""
        return f"{self.cpu or 'generic'} ({self.arch}): {self.vector_bits}-bit x {self.registers}{fma}, int8 {self.int8_dot.value}"


#: What the lowering assumes when it is told nothing (``nnc-opt`` without
#: options, lit tests): x86-64 with AVX-512F (512-bit x 32 registers, FMA),
#: the target nnc's kernels were first tuned for.  The driver always passes
#: the compilation's real target.
DEFAULT_TARGET = TargetDescription.parse("x86_64-unknown-linux-gnu", "", "+avx512f")
