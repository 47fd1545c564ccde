"""Which targets LLVM can generate code for, checked in a child process.

``nnc compile --target TRIPLE --target-cpu NAME --target-features +a,-b``
needs to know, before the slow part, that LLVM knows the triple, NAME for it
and the features (:func:`target_for`).  LLVM reports an unknown CPU or
feature only as a warning on stderr and aborts the whole process on some
names (a 32-bit-only CPU for a 64-bit triple), so the probe runs in a child
Python process, with every back end LLVM was built for.
Separate from :mod:`nnc.runtime.artifact`, which links and documents code
once the target is chosen.

It also finds the features a CPU name implies (:func:`implied_features`):
LLVM has no API that lists them, but it knows them when it generates code, so
a child process compiles a few probe functions for the CPU and the features
are read off the instructions chosen (zmm/ymm/xmm registers, ``vfmadd``,
``vpdpbusd``, ``pcmpgtq``, ``vcvtph2ps``, AArch64 ``sdot``).  This works for any CPU LLVM
knows, including ones newer than this code; the result, in LLVM's spelling,
feeds the target description (:mod:`nnc.passes.target`) the lowering uses.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import subprocess
import sys

from nnc.runtime.artifact import ArtifactError, ArtifactUsageError
from nnc.runtime.jit import Target, host_triple, initialize, normalize_triple

_PROBE = r"""
import json, os, sys, tempfile
import llvmlite.binding as llvm
llvm.initialize_native_target(); llvm.initialize_native_asmprinter()
llvm.initialize_all_targets(); llvm.initialize_all_asmprinters()  # any triple LLVM was built for
triple, mode, cpu, features = sys.argv[1:5]
try:
    t = llvm.Target.from_triple(triple)
except RuntimeError as e:
    print(json.dumps({"bad_triple": str(e).strip()}))
    sys.exit(0)
def machine(cpu, features):
    sys.stderr.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(2); os.dup2(f.fileno(), 2)
        try:
            tm = t.create_target_machine(cpu=cpu, features=features, opt=3, reloc="pic")
        finally:
            os.dup2(saved, 2); os.close(saved)
        f.seek(0)
        return tm, f.read().decode(errors="replace")
if mode == "features":
    tm = t.create_target_machine(cpu=cpu, features=features, opt=3, reloc="pic")
    m = llvm.parse_assembly(sys.stdin.read())
    m.triple = triple
    m.data_layout = str(tm.target_data)
    print(json.dumps({"asm": tm.emit_assembly(m)}))
    sys.exit(0)
if mode == "help":
    print(json.dumps({"listing": machine("help", "")[1]}))
    sys.exit(0)
tm, warnings = machine(cpu, features)
if "not a recognized processor" in warnings:
    print(json.dumps({"unknown_cpu": True, "listing": machine("help", "")[1]}))
    sys.exit(0)
bad = [line.strip() for line in warnings.splitlines() if "not a recognized feature" in line]
if bad:
    print(json.dumps({"bad_features": bad}))
    sys.exit(0)
m = llvm.parse_assembly("define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}")
m.triple = triple
tm.emit_object(m)
print(json.dumps({"ok": True}))
"""

#: Architectures and operating systems nnc generates code for: the thread
#: pool and the artifact ABI assume 64-bit Linux (glibc or Android's bionic).
ARCHITECTURES = ("x86_64", "aarch64")

_NAME = re.compile(r"[A-Za-z0-9_.]+(-[A-Za-z0-9_.]+)*")
_FEATURES = re.compile(r"[+-][A-Za-z0-9_.]+(,[+-][A-Za-z0-9_.]+)*")


def _probe(triple: str, mode: str, cpu: str = "", features: str = "") -> dict:
    """Run the probe program in a child process; its JSON answer."""
    initialize()
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE, triple, mode, cpu, features],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ArtifactError(f"LLVM did not answer within 120 s for {triple} (CPU {cpu or 'generic'})") from None
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["LLVM aborted"])[-1]
        raise ArtifactUsageError(f"cannot generate code for {triple} with CPU {cpu or 'generic'!r}: {why}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cpu_names(listing: str) -> list[str]:
    return re.findall(r"^\s+(\S+)\s+- Select the", listing, re.M)


def check_triple(triple: str) -> str:
    """``triple`` if nnc can generate code for it: a 64-bit Linux or Android
    triple of an architecture in :data:`ARCHITECTURES` (``arm64`` is
    ``aarch64``); else ArtifactUsageError saying why."""
    if not _NAME.fullmatch(triple):
        raise ArtifactUsageError(f"--target {triple!r} is not a target triple (e.g. aarch64-linux-android29)")
    parts = normalize_triple(triple).split("-")
    if parts[0] not in ARCHITECTURES or len(parts) < 3 or parts[2] != "linux":
        raise ArtifactUsageError(
            f"--target {triple!r}: nnc generates code for 64-bit Linux and Android on "
            f"{' and '.join(ARCHITECTURES)} (e.g. aarch64-linux-gnu, aarch64-linux-android29, {host_triple()})"
        )
    return triple


def known_cpus(triple: str | None = None) -> list[str]:
    """The CPU names LLVM accepts for ``triple`` (default: this machine's)."""
    triple = triple or host_triple()
    result = _probe(triple, "help")
    if "bad_triple" in result:
        raise ArtifactUsageError(f"--target {triple!r}: {result['bad_triple']}")
    return _cpu_names(result["listing"])


def target_for(triple: str | None, cpu: str | None = None, features: str | None = None) -> Target:
    """The target of ``nnc compile --target TRIPLE --target-cpu CPU
    --target-features +a,-b``, checked in a child process first (LLVM
    aborts the process on some CPU names, a 32-bit-only CPU for a 64-bit
    triple, and only warns about unknown CPUs and features).

    No triple (or ``host``, or the host's) is this machine: no CPU and no
    features is :meth:`Target.host`, features alone modify the host's list.
    Another triple without a CPU is its architecture's ``generic`` CPU."""
    host = Target.host()
    if triple is None or triple in ("", "host", "native") or normalize_triple(check_triple(triple)) == normalize_triple(host.triple):
        triple = host.triple
    if cpu in ("host", "native"):
        if triple != host.triple:
            raise ArtifactUsageError(f"--target-cpu {cpu} names this machine's CPU, which cannot run {triple} code")
        cpu = None
    if features is not None and not _FEATURES.fullmatch(features):
        raise ArtifactUsageError(f"--target-features {features!r} is not a feature list like +dotprod,-fma")
    if cpu is not None and (not cpu or cpu == "help" or cpu.startswith("-") or not _NAME.fullmatch(cpu)):
        raise ArtifactUsageError(f"--target-cpu {cpu!r} is not a CPU name (--target-cpu help lists them)")
    if triple == host.triple and cpu is None:
        if features is None:
            return host
        target = Target(host.triple, host.cpu, f"{host.features},{features}")
    else:
        target = Target(triple, cpu or "generic", features or "")
    result = _probe(target.triple, "check", target.cpu, target.features)
    if "bad_triple" in result:
        raise ArtifactUsageError(f"--target {triple!r}: {result['bad_triple']}")
    if result.get("unknown_cpu"):
        near = difflib.get_close_matches(target.cpu, _cpu_names(result["listing"]), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else " (--target-cpu help lists them)"
        raise ArtifactUsageError(f"--target-cpu {target.cpu!r} is not a CPU LLVM knows for {triple}{hint}")
    if result.get("bad_features"):
        raise ArtifactUsageError(f"--target-features {features!r} for {triple}: {'; '.join(result['bad_features'])}")
    return target


#: Probe functions (target-independent IR) whose instruction selection shows
#: the vector features: register width for float32 (``fadd``) and int32
#: (``mul``, AVX2 on x86), FMA (``llvm.fma`` without it is a libcall), SSE4.2
#: (``pcmpgtq``), x86's float16 conversions (F16C: ``vcvtph2ps``, else a
#: libcall per half) and the int8 dot products LLVM matches from a reduction of
#: widened products (u8 x s8: x86 VNNI ``vpdpbusd``; s8 x s8: AArch64 ``sdot``).
_PROBE_IR = r"""
define void @nnc_probe_f32(ptr %p) {
  %q = getelementptr <16 x float>, ptr %p, i64 1
  %a = load <16 x float>, ptr %p
  %b = load <16 x float>, ptr %q
  %r = fadd <16 x float> %a, %b
  store <16 x float> %r, ptr %p
  ret void
}
define void @nnc_probe_i32(ptr %p) {
  %q = getelementptr <16 x i32>, ptr %p, i64 1
  %a = load <16 x i32>, ptr %p
  %b = load <16 x i32>, ptr %q
  %r = mul <16 x i32> %a, %b
  store <16 x i32> %r, ptr %p
  ret void
}
define void @nnc_probe_fma(ptr %p) {
  %q1 = getelementptr <4 x float>, ptr %p, i64 1
  %q2 = getelementptr <4 x float>, ptr %p, i64 2
  %a = load <4 x float>, ptr %p
  %b = load <4 x float>, ptr %q1
  %c = load <4 x float>, ptr %q2
  %r = call <4 x float> @llvm.fma.v4f32(<4 x float> %a, <4 x float> %b, <4 x float> %c)
  store <4 x float> %r, ptr %p
  ret void
}
define <2 x i64> @nnc_probe_cmp(<2 x i64> %a, <2 x i64> %b) {
  %c = icmp sgt <2 x i64> %a, %b
  %r = sext <2 x i1> %c to <2 x i64>
  ret <2 x i64> %r
}
define void @nnc_probe_half(ptr %p, ptr %q) {
  %a = load <8 x half>, ptr %p
  %b = fpext <8 x half> %a to <8 x float>
  store <8 x float> %b, ptr %q
  ret void
}
define i32 @nnc_probe_dot_us(ptr %x, ptr %w, i32 %acc) {
  %a = load <32 x i8>, ptr %x
  %b = load <32 x i8>, ptr %w
  %az = zext <32 x i8> %a to <32 x i32>
  %bs = sext <32 x i8> %b to <32 x i32>
  %m = mul <32 x i32> %az, %bs
  %s = call i32 @llvm.vector.reduce.add.v32i32(<32 x i32> %m)
  %r = add i32 %s, %acc
  ret i32 %r
}
define i32 @nnc_probe_dot_ss(ptr %x, ptr %w, i32 %acc) {
  %a = load <16 x i8>, ptr %x
  %b = load <16 x i8>, ptr %w
  %as = sext <16 x i8> %a to <16 x i32>
  %bs = sext <16 x i8> %b to <16 x i32>
  %m = mul <16 x i32> %as, %bs
  %s = call i32 @llvm.vector.reduce.add.v16i32(<16 x i32> %m)
  %r = add i32 %s, %acc
  ret i32 %r
}
declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)
declare i32 @llvm.vector.reduce.add.v32i32(<32 x i32>)
declare i32 @llvm.vector.reduce.add.v16i32(<16 x i32>)
"""


def _probe_bodies(asm: str) -> dict[str, str]:
    """Assembly text of each probe function."""
    bodies: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in asm.splitlines():
        m = re.match(r"^(nnc_probe_\w+):", line)
        if m:
            current = bodies.setdefault(m.group(1), [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in bodies.items()}


def features_from_probe(triple: str, asm: str) -> str:
    """The features (LLVM's spelling) the probe's assembly shows."""
    fn = _probe_bodies(asm)
    f32, i32 = fn.get("nnc_probe_f32", ""), fn.get("nnc_probe_i32", "")
    found: list[str] = []
    if triple.startswith(("x86_64", "amd64")):
        if "%zmm" in f32:
            found.append("avx512f")
        elif "%ymm" in f32:
            found.append("avx")
        if "%ymm" in i32 or "%zmm" in i32:
            found.append("avx2")
        if "vfmadd" in fn.get("nnc_probe_fma", ""):
            found.append("fma")
        if "pcmpgtq" in fn.get("nnc_probe_cmp", ""):
            found.append("sse4.2")
        if "pmulld" in i32:
            found.append("sse4.1")
        if "vcvtph2ps" in fn.get("nnc_probe_half", ""):
            found.append("f16c")
        if "vpdpbusd" in fn.get("nnc_probe_dot_us", ""):
            found.append("avx512vnni" if "avx512f" in found else "avxvnni")
    elif triple.startswith(("aarch64", "arm64")):
        found.append("neon")
        if "sdot" in fn.get("nnc_probe_dot_ss", ""):
            found.append("dotprod")
    return ",".join("+" + f for f in found)


@functools.lru_cache(maxsize=64)
def _implied(triple: str, cpu: str, features: str) -> str:
    initialize()
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, triple, "features", cpu, features],
        input=_PROBE_IR, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["LLVM aborted"])[-1]
        raise ArtifactUsageError(f"cannot generate code for CPU {cpu!r} on {triple}: {why}")
    return features_from_probe(triple, json.loads(proc.stdout.strip().splitlines()[-1])["asm"])


def _complete_list(target: Target) -> bool:
    """Whether ``target``'s feature list is the host's (which names every
    feature), possibly with overrides appended (:func:`target_for`)."""
    if target.triple != host_triple():
        return False
    host = Target.host()
    return bool(host.features) and target.cpu == host.cpu and target.features.startswith(host.features)


def implied_features(target: Target) -> str:
    """The target's features in LLVM's spelling: its own list when it is
    the host's (which names every feature), else what LLVM generates for
    its CPU and features, probed in a child process (LLVM aborts on some
    CPU names) once per (triple, CPU, features) in this process, followed
    by the explicit features (which the probe may not detect)."""
    if _complete_list(target):
        return target.features
    probed = _implied(target.triple, target.cpu, target.features)
    return ",".join(f for f in (probed, target.features) if f)
