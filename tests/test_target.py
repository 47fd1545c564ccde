"""The target description (nnc.passes.target) and where it comes from.

A description is a pure function of (triple, CPU, features): the host's
feature list is read as it is; a CPU name alone gets the features LLVM
implies for it, read off the code LLVM generates for that CPU
(nnc.runtime.cpu_probe.implied_features).  The driver hands it to the
lowering as an option of convert-nnapi-to-linalg.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from nnc import driver
from nnc.passes.choose_kernels import ChooseKernelsPass
from nnc.passes.convert_nnapi_to_linalg import ConvertNNAPIToLinalgPass
from nnc.passes.pipeline import default_pipeline, make_pass
from nnc.passes.target import DEFAULT_TARGET, Int8Dot, TargetDescription, parse_features
from nnc.runtime import cpu_probe
from nnc.runtime.jit import Target
from test_kernels import _kernel_model

X86 = "x86_64-unknown-linux-gnu"
ARM = "aarch64-unknown-linux-gnu"


def test_feature_string_is_read_as_llvm_reads_it() -> None:
    assert parse_features("+avx2,-avx512f,+fma,-fma,+sse4.2") == {"avx2", "sse4.2"}
    assert parse_features("") == frozenset()


@pytest.mark.parametrize(
    ("triple", "features", "bits", "registers", "fma", "dot"),
    [
        (X86, "+avx512f,+avx512vnni", 512, 32, True, Int8Dot.AVX512_VNNI),
        (X86, "+avx2,+fma,+avxvnni,-avx512f", 256, 16, True, Int8Dot.AVX_VNNI),
        (X86, "+avx2,+fma", 256, 16, True, Int8Dot.PMADDUBSW),
        (X86, "+avx", 256, 16, False, Int8Dot.PMADDUBSW),
        (X86, "+sse4.2", 128, 16, False, Int8Dot.PMADDUBSW),
        (X86, "", 128, 16, False, Int8Dot.NONE),
        (ARM, "+neon,+dotprod", 128, 32, True, Int8Dot.SDOT),
        (ARM, "", 128, 32, True, Int8Dot.NONE),
    ],
)
def test_description_from_features(triple, features, bits, registers, fma, dot) -> None:
    """Implied features count (+avx512f gives AVX2 and FMA; AArch64 always
    has NEON); lanes follow from the vector width."""
    d = TargetDescription.parse(triple, "cpu", features)
    assert (d.vector_bits, d.registers, d.fma, d.int8_dot) == (bits, registers, fma, dot)
    assert [d.lanes(t) for t in ("f32", "i32", "i16", "i8")] == [bits // 32, bits // 32, bits // 16, bits // 8]


def test_description_round_trips_through_the_pass_option() -> None:
    d = TargetDescription.parse(X86, "znver3", "+avx2,+fma,-avx512f")
    p = ConvertNNAPIToLinalgPass.for_target(d)
    assert p.target() == d
    spec = 'convert-nnapi-to-linalg{target-cpu="znver3" target-features="' + d.feature_string + '"}'
    assert make_pass(spec).target() == d
    assert ConvertNNAPIToLinalgPass().target() == DEFAULT_TARGET
    assert DEFAULT_TARGET.vector_bits == 512 and DEFAULT_TARGET.registers == 32
    assert [p for p in default_pipeline(d) if not isinstance(p, str)] == [ChooseKernelsPass.for_target(d), p]


@pytest.mark.parametrize(
    ("cpu", "present", "absent"),
    [
        ("skylake-avx512", {"avx512f", "avx2", "fma", "sse4.2", "f16c"}, {"avx512vnni", "avxvnni"}),
        ("cascadelake", {"avx512f", "avx512vnni"}, set()),
        ("alderlake", {"avx2", "fma", "avxvnni"}, {"avx512f"}),
        ("haswell", {"avx2", "fma", "sse4.2", "f16c"}, {"avx512f", "avxvnni"}),
        ("x86-64-v2", {"sse4.2"}, {"avx", "fma", "f16c"}),
        ("x86-64", {"sse2"}, {"sse4.1", "avx", "f16c"}),
    ],
)
def test_features_implied_by_a_cpu_name(cpu, present, absent) -> None:
    """What LLVM generates for the CPU shows its features (a child process
    compiles the probe, as LLVM aborts on some CPU names)."""
    target = Target.for_cpu(cpu)
    d = driver.target_description(target)
    assert present <= d.features and not absent & d.features, d.features


def test_features_implied_for_aarch64() -> None:
    """The probe works for any triple LLVM was built for (SDOT: FEAT_DotProd)."""
    assert cpu_probe._implied(ARM, "cortex-a76", "") == "+neon,+dotprod"
    assert cpu_probe._implied(ARM, "cortex-a53", "") == "+neon"


def test_host_features_are_taken_as_they_are() -> None:
    host = Target.host()
    assert cpu_probe.implied_features(host) == host.features
    d = driver.target_description(host)
    assert d == TargetDescription.parse(host.triple, host.cpu, host.features)


def test_a_narrower_target_computes_the_same() -> None:
    """Code blocked and generated for baseline x86-64 (4 lanes, no FMA) runs
    here and agrees with the host's (rounding aside: separate multiply and
    add, and dot products summing lanes in another order); the target is
    part of the in-process cache key, so each target gets its own code."""
    model = _kernel_model()
    infos = driver.static_input_infos(model)
    x = np.random.default_rng(1).uniform(-1, 1, infos[0].dims).astype(np.float32)

    def run(target: Target) -> tuple[object, np.ndarray]:
        exe = driver.compile_model(model, infos, target)
        out = np.empty(exe.output_shapes[0], np.float32)
        assert exe.run([x], [out]) == 0
        return exe, out

    host_exe, expected = run(Target.host())
    exe, out = run(Target.for_cpu("x86-64"))
    assert exe is not host_exe
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)


def test_native_artifacts_are_blocked_for_their_target() -> None:
    """``nnc compile --target-cpu`` (compile_artifact with a target): the
    kernels in the LLVM IR have the target's vector width."""
    model = _kernel_model()
    buf = io.StringIO()
    driver.compile_artifact(model, "-", emit="llvm", target=Target.for_cpu("x86-64-v2"), stdout=buf)
    ir = buf.getvalue()
    assert "<4 x float>" in ir and "<8 x float>" not in ir and "<16 x float>" not in ir
