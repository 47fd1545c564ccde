"""The compilation cache (``ANeuralNetworksCompilation_setCaching``).

With caching set, :meth:`nnc.Compilation.finish` computes a cache key and
first tries to load the prepared model (a :class:`NativeCode`: object code,
constant pool, arena size, operand types, target) from the cache directory;
only if that fails for any reason does it run the xDSL passes and LLVM, and
then it writes a fresh entry.  Loading or saving never makes a compilation
fail and never changes its results: any problem with the files is a miss.

What is cached: the variant ``finish()`` compiles (all input shapes known),
and variants compiled at execution for input shapes given only then, one
entry per input-shape signature.  Variants specialised to input *values*
(scalar or shape-operand inputs) are not cached: one entry per value would
grow without bound.  Unlike AOSP, which writes the cache only in ``finish``,
nnc also saves those execution-time variants.

Key
---
The key is a SHA-256 (64 hex digits in the file names) over everything that
changes the compiled result or that NNAPI requires to separate entries:

* the application's 32-byte token;
* a fingerprint of the model (:func:`model_fingerprint`): every operand's
  type, dimensions, scale, zero point, per-channel parameters, lifetime and
  value, the operations (type, inputs, outputs) in order, the model inputs
  and outputs, the relaxed-float16 flag, and the fingerprints of referenced
  subgraphs (IF/WHILE bodies), recursively;
* the execution preference and the priority (NNAPI's key includes both);
* the name and version string of each device compiled for (NNAPI's key
  includes both; nnc has no partitioning, so the whole model is the one
  partition and the model fingerprint covers it);
* the compiler (:func:`compiler_id`): ``nnc.__version__`` (from
  :mod:`nnc.version`), a digest of nnc's own sources (Python modules and
  templates, each by path, size and modification time) (so a changed lowering never loads code an older nnc
  built, even without a version bump), and the xDSL, llvmlite and LLVM
  versions;
* the input signature: per model input its type, dimensions, quantisation
  parameters and whether it is omitted;
* the target: LLVM triple, CPU name and CPU feature string;
* whether the code is compiled for profiling (``Compilation.set_profiling``:
  it records per-operation timestamps, so it is other code).

So a changed model under the same token gets another key: it misses and never
loads the old entry.  Entries are never deleted by nnc; the cache directory
belongs to the application.

Files
-----
An entry is two files in the cache directory, as the NNAPI HAL's model cache
and data cache::

    nnc-<key>.model   model cache: native code and everything needed to run it
    nnc-<key>.data    data cache: the constant pool (weights)

All integers are little-endian.  Model file (format version
:data:`FORMAT_VERSION`)::

    offset    size  field
    0         8     magic b"NNCMODL\\0"
    8         4     format version (u32)
    12        32    entry key (raw bytes)
    44        4     header length H (u32)
    48        H     header: UTF-8 JSON object, see below
    48+H      8     object code length N (u64)
    56+H      N     object code: ELF relocatable exporting ``nnc_run``
    56+H+N    8     thread pool object code length P (u64)
    64+H+N    P     the thread pool for the target (ELF relocatable,
                    :func:`nnc.runtime.threadpool.in_process_object`)
    64+H+N+P  16    XXH3-128 of every preceding byte of the file

    header = {"nnc_version": str, "compiler": str (compiler_id),
              "target": {"triple", "cpu", "features"},
              "arena_size": int,
              "inputs": [operand], "outputs": [operand],
              "data_size": int, "data_xxh3_128": hex XXH3-128 of the data file}
    operand = {"type": int, "dims": [int] | null, "scale": float,
               "zero_point": int, "channel_quant": [[float], int] | null,
               "omitted": bool,
               "value": null | {"dtype": str, "shape": [int], "hex": str},
               "dynamic": null | [axis, count, factor]}  (a data-dependent
               dimension, ``OperandInfo.dynamic``; format version 3)

Data file (same format version)::

    0       8     magic b"NNCDATA\\0"
    8       4     format version (u32)
    12      32    entry key (raw bytes)
    44      8     constant pool length W (u64)
    52      W     constant pool, as passed to ``nnc_run``
    52+W    16    XXH3-128 of every preceding byte of the file

Source index (same format version), one small file per model file read::

    nnc-src-<first 32 hex digits of N>.source
    0       8     magic b"NNCSRCI\0"
    8       4     format version (u32)
    12      32    N: SHA-256 of the compiler id and the model's source key
    44      32    the model's fingerprint
    76      16    XXH3-128 of every preceding byte of the file

A model read from a file (``Model.load``, ``import_tflite``) carries the
file's identity (device, inode, size, modification and status-change times;
:attr:`nnc.Model.source_key`).  Fingerprinting it hashes every weight
(MobileNetV2: 14 MB, about 6 ms on two cores here), which is a third of a
hit in a new process; the index records the fingerprint under the
identity, so a new process that reads the same unchanged file finds it
instead.  Any write to the file changes its identity (another name, so
another index file); a bad index file is ignored, and rewritten once the
model has been hashed.

Why the thread pool is in the entry: every process needs the pool before
it loads its first model (:mod:`nnc.runtime.threadpool`), and compiling it
from its IR costs about 0.1 s, more than the rest of a hit; a process whose
first model comes from the cache loads the entry's copy instead (the key
covers nnc's sources and the target, so it is the pool this nnc compiles).

Integrity
---------
Loading reads each file once into private memory and rejects it unless its
length is exactly what its length fields say, its trailing checksum
matches, its magic, format version and key are the expected ones, and (for
the data file) its checksum is the one the model file records.  Only then is
the object code handed to MCJIT.

Why XXH3-128 for the files and SHA-256 for the key: the checksums only
detect corruption and mix-ups (a file of another entry, a half-written
file); whoever can write the cache directory can forge any checksum,
SHA-256 or not, so the directory must be private to the application, as
NNAPI requires.  XXH3 runs at memory speed (14 MB, MobileNetV2's weights,
in about 2 ms here, where SHA-256 with the CPU's SHA extensions takes 12 ms,
more than the whole hit may).  The key, in contrast, is computed from a
model the application may have from anywhere, and two models whose keys
collided would share an entry; so it stays a cryptographic hash.

A hit costs one read and one checksum pass over each file and nothing more:
the data file is read straight into a buffer placed so that its constant pool
(at offset 52) is 64-byte aligned, so the executable runs from the bytes that
were read (:func:`nnc.runtime.executable.aligned_bytes` keeps them in place),
and the whole-file checksum the model file records is derived from the state
of the trailing-checksum pass (``copy()`` plus the last 16 bytes, not a
second pass).  Why read rather than map: a mapping shows later writes to
the file (on Linux a ``MAP_PRIVATE`` one too, for every page the process has
not written itself), so what was verified need not be what runs (a file
rewritten in place between the check and the use gave another model's
weights), and a file truncated in place while mapped faults (SIGBUS).
Reading costs about 2.5 ms of a MobileNetV2 hit (14 MB).  So a
truncated, extended, bit-flipped, zero-length, foreign or unreadable file, or
a model or data file swapped in from another entry, is a miss: nnc compiles
and rewrites the entry.

Writes are atomic: each file is written to a temporary file in the same
directory, flushed and fsync'ed, then renamed over the entry's name with
``os.replace`` (data file first, then model file).  A crash mid-write leaves at
most a stray ``.nnc-*.tmp`` file and either no entry or a whole one; two
processes saving the same entry both write whole files with the same content.
A reader that sees the model file of one save and the data file of another
checks the data digest, so a mismatched pair is a miss, never wrong code.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import json
import os
import stat
import struct
import tempfile
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import xxhash

import nnc.version as version  # the bottom module holding __version__ (read at call time)
from nnc.enums import OperandType
from nnc.operand_types import DynamicDim, OperandInfo, is_int
from nnc.runtime import threadpool
from nnc.runtime.chunks import release_pages
from nnc.runtime.executable import NativeCode, aligned_bytes
from nnc.runtime.jit import Target

#: Bumped whenever the layout of either file changes (2: XXH3-128 checksums
#: and the thread pool's object; 3: operands' "dynamic").
FORMAT_VERSION = 3
MODEL_MAGIC = b"NNCMODL\0"
DATA_MAGIC = b"NNCDATA\0"
MODEL_SUFFIX = ".model"
DATA_SUFFIX = ".data"
_DIGEST = 16  # XXH3-128
_checksum = xxhash.xxh3_128
_MODEL_FIXED = 8 + 4 + 32 + 4  # magic, version, key, header length
_DATA_FIXED = 8 + 4 + 32 + 8  # magic, version, key, pool length
_ALIGN = 64  # where the constant pool is placed in memory (as aligned_bytes places it)
#: A model file's JSON header is small; anything bigger is not ours.
_MAX_HEADER = 64 << 20
#: Object code beyond this is not something nnc wrote.
_MAX_OBJECT = 1 << 30


class CacheMiss(Exception):
    """No usable entry: the files are absent or failed verification."""


class CacheCorrupt(CacheMiss):
    """The entry's files exist but failed verification."""


# -- key ------------------------------------------------------------------------------------------


class _Hasher:
    """SHA-256 over a canonical, type-tagged, length-prefixed encoding."""

    def __init__(self, domain: bytes):
        self.h = hashlib.sha256()
        self.bytes(domain)

    def bytes(self, b) -> None:
        b = memoryview(b).cast("B")
        self.h.update(b"B" + struct.pack("<Q", len(b)))
        self.h.update(b)

    def put(self, x) -> None:
        h = self.h
        if x is None:
            h.update(b"N")
        elif isinstance(x, bool | np.bool_):
            h.update(b"T" if x else b"F")
        elif isinstance(x, int | np.integer):
            s = str(int(x)).encode()
            h.update(b"I" + struct.pack("<I", len(s)) + s)
        elif isinstance(x, float | np.floating):
            h.update(b"D" + struct.pack("<d", float(x)))
        elif isinstance(x, str):
            h.update(b"S")
            self.bytes(x.encode())
        elif isinstance(x, bytes | bytearray | memoryview):
            self.bytes(x)
        elif isinstance(x, np.ndarray):
            h.update(b"A")
            self.put(f"{x.dtype.str}{x.shape}")
            self.bytes(np.ascontiguousarray(x).reshape(-1).view(np.uint8))  # the same bytes as tobytes(), no copy
        elif isinstance(x, list | tuple):
            h.update(b"L" + struct.pack("<Q", len(x)))
            for y in x:
                self.put(y)
        else:
            raise TypeError(f"cannot fingerprint {type(x).__name__}")

    def digest(self) -> builtins.bytes:  # (``bytes`` is the method above in this class)
        return self.h.digest()


_FINGERPRINTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_FP_LOCK = threading.Lock()
#: Fingerprints by the models' ``source_key`` (what they were read from): a
#: model read again from an unchanged file is not hashed again.  Bounded:
#: past the limit the oldest half is forgotten (a miss only costs a hash).
_SOURCE_FINGERPRINTS: dict[tuple, bytes] = {}
_SOURCE_LIMIT = 256


def model_fingerprint(model, index_dir: str | os.PathLike | None = None) -> bytes:
    """SHA-256 of everything in a finished model that affects its compilation
    (memoised per model object: a finished model cannot change; and per
    ``model.source_key``, the identity of the file a reader built it from
    (:func:`nnc.modelfile.read_regular_file`), so a model read again from an
    unchanged file is not hashed again either: only a new process, or a
    model built through the API or read from a changed file, pays for it).

    Encoding: the SHA-256 of each operand value's bytes (all values are
    arrays; :func:`_value_digests`), in operand order, then one ``repr`` of
    the scalars of all operands and operations -- each operand's type,
    dimensions, quantisation, lifetime, referenced subgraph's fingerprint and
    its value's dtype, shape and byte count (their types are fixed per field:
    ints, floats, strings, None, tuples of them; a float's repr round-trips,
    so it is exact) -- then that text's length.  The digests have a fixed
    size and the length at the end fixes where the text starts, so two
    different models never encode alike.  Hashing the weights is most of the
    time (MobileNetV2: 14 MB, 10.5 ms for SHA-256 with this CPU's SHA
    extensions on one core), which is why the values are digested one by
    one: :func:`_start_value_digests` spreads them over threads, which
    run while this thread encodes the scalars.

    ``index_dir`` (a cache directory): a model read from a file is looked up
    in, and once hashed recorded in, that directory's source index
    (:func:`_recall_source`), so a new process reading an unchanged file does
    not hash its weights either."""
    source = getattr(model, "source_key", None) if model.finished else None
    with _FP_LOCK:
        fp = _FINGERPRINTS.get(model)
        if fp is None and source is not None:
            fp = _SOURCE_FINGERPRINTS.get(source)
    if fp is None and source is not None and index_dir is not None:
        fp = _recall_source(index_dir, source)
    if fp is not None:
        _memoise(model, source, fp)
        return fp
    h = hashlib.sha256(b"nnc-model-fingerprint-4\0")
    arrays = [None if o.value is None else _contiguous(o.value) for o in model.operands]
    digests = _start_value_digests([v for v in arrays if v is not None])
    # The scalars are encoded while other threads hash the values.
    meta = []
    for o, v in zip(model.operands, arrays):
        sub = None if o.subgraph is None else model_fingerprint(o.subgraph).hex()
        value = None if v is None else (v.dtype.str, v.shape, v.nbytes)
        meta.append((int(o.type), o.dims, o.scale, o.zero_point, o.channel_quant, o.lifetime._value_, sub, value))
    ops = [(int(op.type), tuple(op.inputs), tuple(op.outputs)) for op in model.operations]
    text = repr((meta, ops, tuple(model.inputs), tuple(model.outputs), bool(model.relaxed))).encode()
    for d in digests():
        h.update(d)
    h.update(text)
    h.update(struct.pack("<Q", len(text)))
    fp = h.digest()
    if model.finished:
        _memoise(model, source, fp)
        if source is not None and index_dir is not None:
            _remember_source(index_dir, source, fp)
    return fp


def _memoise(model, source: tuple | None, fp: bytes) -> None:
    """Remember a finished model's fingerprint, by object and by source."""
    with _FP_LOCK:
        _FINGERPRINTS[model] = fp
        if source is not None and _SOURCE_FINGERPRINTS.get(source) != fp:
            if len(_SOURCE_FINGERPRINTS) >= _SOURCE_LIMIT:
                for old in list(_SOURCE_FINGERPRINTS)[: _SOURCE_LIMIT // 2]:
                    del _SOURCE_FINGERPRINTS[old]
            _SOURCE_FINGERPRINTS[source] = fp


# -- source index ---------------------------------------------------------------------------------

INDEX_MAGIC = b"NNCSRCI\0"
INDEX_SUFFIX = ".source"
_INDEX_SIZE = 8 + 4 + 32 + 32 + _DIGEST  # magic, version, name digest, fingerprint, checksum


def _index_path(index_dir: str | os.PathLike, source: tuple) -> tuple[Path, str]:
    """(path, name digest as hex) of ``source``'s index file.  The name
    digest covers the compiler (:func:`compiler_id`: the readers that turn a
    file into a model are part of it) and the source key (reader, file
    identity, reader options); the file repeats it, so an index file copied
    or renamed to another source's name is refused."""
    digest = hashlib.sha256(b"nnc-source-index\0" + compiler_id().encode() + b"\0" + repr(source).encode())
    name = digest.hexdigest()
    return Path(index_dir) / f"nnc-src-{name[:32]}{INDEX_SUFFIX}", name


def _recall_source(index_dir: str | os.PathLike, source: tuple) -> bytes | None:
    """The fingerprint a source index file records for ``source``, or None
    when there is no such file or it fails verification (length, magic,
    version, name digest, checksum; then the model is hashed and the file
    rewritten).

    Why this is safe: the source key holds the file's identity, which any
    write to the file changes (:func:`nnc.modelfile.read_regular_file`), so
    an index file describes the bytes that were read; and whoever can write
    the cache directory can already forge whole entries (see Integrity), so
    trusting its index files adds nothing to trust."""
    path, name = _index_path(index_dir, source)
    try:
        blob = _read_private(path, INDEX_MAGIC, limit=_INDEX_SIZE)
        if len(blob) != _INDEX_SIZE:
            raise CacheCorrupt(f"{path.name}: {len(blob)} bytes, expected {_INDEX_SIZE}")
        _check_file(blob, INDEX_MAGIC, name, "source index")
    except CacheMiss:
        return None
    return bytes(blob[44:76])


def _remember_source(index_dir: str | os.PathLike, source: tuple, fp: bytes) -> None:
    """Write ``source``'s index file (atomically; best effort: an unwritable
    directory only means the next process hashes the model again)."""
    path, name = _index_path(index_dir, source)
    body = INDEX_MAGIC + struct.pack("<I", FORMAT_VERSION) + bytes.fromhex(name) + fp
    try:
        _write_atomic(path, body + _checksum(body).digest())
    except OSError:
        pass


#: Below this many bytes of weights one thread hashes them all (a thread's
#: start costs more than it saves).
_PARALLEL_HASH_BYTES = 1 << 20


def _contiguous(v) -> np.ndarray:
    return v if isinstance(v, np.ndarray) and v.flags.c_contiguous else np.ascontiguousarray(v)


def _value_digests(values: Sequence[np.ndarray]) -> list[bytes]:
    """The SHA-256 of each array's bytes, in order (:func:`_start_value_digests`)."""
    return _start_value_digests(values)()


def _digest(value: np.ndarray) -> bytes:
    """SHA-256 of a C-contiguous array's buffer (no copy).  The pages of a
    mapped model file are released once hashed: a process that only runs
    the model from the cache never needs them again, and a compilation
    reads them again from the page cache."""
    digest = hashlib.sha256(value.data).digest()
    release_pages(value)
    return digest


def _start_value_digests(values: Sequence[np.ndarray]) -> Callable[[], list[bytes]]:
    """Start hashing each array's bytes (SHA-256); the returned function
    waits for the digests, in order.  ``hashlib`` releases the GIL while it
    hashes a large buffer, so contiguous runs of the arrays, balanced by
    bytes, are hashed on up to ``os.cpu_count()`` threads at once while the
    caller goes on encoding the rest of the model (MobileNetV2's 14 MB of
    weights: 10.5 ms on one core here).  The digests are per array, so how
    the work was split never changes the result.  Below
    :data:`_PARALLEL_HASH_BYTES` the caller's thread hashes them all (a
    thread's start costs more than it saves)."""
    total = sum(v.nbytes for v in values)
    workers = min(os.cpu_count() or 1, 8, total // _PARALLEL_HASH_BYTES)
    if workers == 0:
        return lambda: [_digest(v) for v in values]
    bounds, acc, k = [0], 0, 1
    for i, v in enumerate(values):
        acc += v.nbytes
        if acc >= total * k / workers and k < workers:
            bounds.append(i + 1)
            k += 1
    bounds.append(len(values))
    out: list[bytes] = [b""] * len(values)

    def run(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            out[i] = _digest(values[i])

    threads = [threading.Thread(target=run, args=(lo, hi)) for lo, hi in zip(bounds, bounds[1:])]
    for t in threads:
        t.start()

    def wait() -> list[bytes]:
        for t in threads:
            t.join()
        return out

    return wait


def _source_roots() -> list[Path]:
    import importlib.util

    roots = []
    for name in ("nnc", "nnc.dialects", "nnc.passes", "nnc.runtime"):
        spec = importlib.util.find_spec(name)
        assert spec is not None  # nnc's own packages
        for loc in spec.submodule_search_locations or ():
            roots.append(Path(loc))
    return roots


#: What counts as nnc's source: its Python modules and the templates shipped as
#: package data (the C header of native artifacts, ``runtime/artifact_header.h.in``).
_SOURCE_SUFFIXES = (".py", ".in")


def _xdsl_version() -> str:
    """xDSL's installed version.  Read from the name of its ``.dist-info``
    directory beside the package (``xdsl-<version>.dist-info``, a name the
    wheel format fixes) when there is exactly one: ``importlib.metadata``
    scans every path entry and costs tens of milliseconds, which is most of
    the first cache hit of a process after the thread pool's compilation
    (importing ``importlib.metadata`` alone takes several)."""
    import importlib.util

    spec = importlib.util.find_spec("xdsl")  # where it is, without importing it (a cache hit never does)
    origin = spec.origin if spec is not None else None
    site = os.path.dirname(os.path.dirname(origin)) if origin else None
    # (a listing, not Path.glob: compiling the glob's regex costs a millisecond)
    found = [n for n in os.listdir(site) if n.startswith("xdsl-") and n.endswith(".dist-info")] if site else []
    if len(found) == 1:
        return found[0][len("xdsl-") : -len(".dist-info")]
    import importlib.metadata  # the slow, general way: only without a single dist-info

    try:
        return importlib.metadata.version("xdsl")
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _source_files(root: Path) -> list[str]:
    """The paths (relative to ``root``, sorted) of nnc's source files under
    it.  ``os.walk``, pruning ``__pycache__``: ``Path.rglob`` took a third
    of the first cache hit of a process."""
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d != "__pycache__"]
        rel = os.path.relpath(directory, root)
        found += [name if rel == "." else f"{rel}/{name}" for name in files if name.endswith(_SOURCE_SUFFIXES)]
    return sorted(found)


@functools.cache
def compiler_id() -> str:
    """Identifies the compiler that produces cached code: nnc's version, a
    digest of its sources (Python and templates), and the xDSL, llvmlite and LLVM versions.

    A source file counts by its path, size and modification time, the rule
    Python itself uses to decide whether a file's cached bytecode is still
    valid: any edit, reinstall or checkout gives another id, and the first
    hit of a process stats ~110 files instead of reading and hashing them
    (0.3 ms instead of 4)."""
    import llvmlite
    import llvmlite.binding as llvm

    h = hashlib.sha256()
    for root in _source_roots():
        top = root.name
        for name in _source_files(root):
            st = os.stat(os.path.join(root, name))
            h.update(f"{top}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    xdsl_version = _xdsl_version()
    llvm_version = ".".join(str(v) for v in llvm.llvm_version_info)
    return (
        f"nnc {version.__version__} src {h.hexdigest()[:16]} xdsl {xdsl_version} "
        f"llvmlite {llvmlite.__version__} llvm {llvm_version}"
    )


def input_signature(infos: Sequence[OperandInfo]) -> list:
    """What the key records of the inputs a variant is compiled for."""
    return [
        [int(i.type), i.dims, i.scale, i.zero_point, i.channel_quant, bool(i.omitted), i.value] for i in infos
    ]


def cache_key(
    token: bytes,
    model,
    infos: Sequence[OperandInfo],
    *,
    preference: int,
    priority: int,
    target: Target,
    devices: Sequence[tuple[str, str]] = (("nnc-cpu", ""),),
    profile: bool = False,
    index_dir: str | os.PathLike | None = None,
) -> str:
    """The entry's key (64 hex digits); see the module docstring.
    ``devices`` are the (name, version) of the devices compiled for
    (Compilation passes its own; the default stands for nnc-cpu);
    ``profile``: the code records per-operation timestamps (another entry
    than the same model's plain code); ``index_dir``: the cache directory,
    whose source index spares hashing a model read from an unchanged file
    (:func:`model_fingerprint`)."""
    token = bytes(token)
    if len(token) != 32:
        raise ValueError("the cache token must be 32 bytes")
    h = _Hasher(b"nnc-compilation-cache")
    h.put(FORMAT_VERSION)
    h.bytes(token)
    h.bytes(model_fingerprint(model, index_dir))
    h.put([int(preference), int(priority)])
    h.put([[str(name), str(version)] for name, version in devices])
    h.put(compiler_id())
    h.put(input_signature(infos))
    h.put([target.triple, target.cpu, target.features])
    if profile:  # (absent for plain code, so the keys of existing entries stay valid)
        h.put("profile")
    return h.digest().hex()


def entry_paths(cache_dir: str | os.PathLike, key: str) -> tuple[Path, Path]:
    """(model cache file, data cache file) of entry ``key``."""
    d = Path(cache_dir)
    return d / f"nnc-{key}{MODEL_SUFFIX}", d / f"nnc-{key}{DATA_SUFFIX}"


# -- encoding -------------------------------------------------------------------------------------


def _info_to_json(i: OperandInfo) -> dict:
    value = None
    if i.value is not None:
        v = np.ascontiguousarray(i.value)
        value = {"dtype": v.dtype.str, "shape": list(v.shape), "hex": v.tobytes().hex()}
    return {
        "type": int(i.type),
        "dims": None if i.dims is None else [int(d) for d in i.dims],
        "scale": float(i.scale),
        "zero_point": int(i.zero_point),
        "channel_quant": None
        if i.channel_quant is None
        else [[float(s) for s in i.channel_quant[0]], int(i.channel_quant[1])],
        "omitted": bool(i.omitted),
        "value": value,
        "dynamic": None if i.dynamic is None else [i.dynamic.axis, i.dynamic.count, i.dynamic.factor],
    }


def _want(cond: bool, what: str) -> None:
    if not cond:
        raise CacheCorrupt(f"bad header: {what}")


def _info_from_json(d) -> OperandInfo:
    _want(isinstance(d, dict), "operand is not an object")
    _want(is_int(d.get("type")), "operand type")
    dims = d.get("dims")
    _want(dims is None or (isinstance(dims, list) and all(is_int(x) and x >= 0 for x in dims)), "dims")
    _want(isinstance(d.get("scale"), int | float) and is_int(d.get("zero_point")), "quantisation")
    cq = d.get("channel_quant")
    if cq is not None:
        _want(isinstance(cq, list) and len(cq) == 2 and isinstance(cq[0], list) and is_int(cq[1]), "channel_quant")
        _want(all(isinstance(s, int | float) for s in cq[0]), "channel scales")
        cq = (tuple(float(s) for s in cq[0]), cq[1])
    _want(isinstance(d.get("omitted"), bool), "omitted")
    value = d.get("value")
    if value is not None:
        _want(isinstance(value, dict), "value")
        try:
            value = np.frombuffer(bytes.fromhex(value["hex"]), dtype=np.dtype(value["dtype"])).reshape(value["shape"])
        except (KeyError, TypeError, ValueError) as e:
            raise CacheCorrupt(f"bad header: value ({e})") from None
    dyn = d.get("dynamic")
    if dyn is not None:
        _want(isinstance(dyn, list) and len(dyn) == 3 and all(is_int(x) and x >= 0 for x in dyn), "dynamic")
        _want(dims is not None and dyn[0] < len(dims) and dyn[2] >= 1, "dynamic axis")
        dyn = DynamicDim(*dyn)
    try:
        t = OperandType(d["type"])
    except ValueError:
        raise CacheCorrupt(f"bad header: operand type {d['type']}") from None
    return OperandInfo(
        t,
        None if dims is None else tuple(dims),
        float(d["scale"]),
        d["zero_point"],
        cq,
        value,
        d["omitted"],
        dyn,
    )


def data_parts(key: str, weights) -> tuple[list, str]:
    """The data cache file of entry ``key`` as the parts to write one after
    the other (header, ``weights`` itself, trailing checksum: the constant
    pool is never joined into another copy), and the XXH3-128 of the whole
    file (for the model file), from the same pass as the trailing checksum."""
    view = memoryview(weights)
    if not view.c_contiguous:  # a strided view (nnc makes none): hashed and written as its bytes
        weights = view = memoryview(view.tobytes())
    body = DATA_MAGIC + struct.pack("<I", FORMAT_VERSION) + bytes.fromhex(key) + struct.pack("<Q", view.nbytes)
    h = _checksum(body)
    h.update(weights)
    tail = h.digest()
    whole = h.copy()
    whole.update(tail)
    return [body, weights, tail], whole.hexdigest()


def encode_model(key: str, code: NativeCode, data_digest: str, pool_object: bytes) -> bytes:
    """The model cache file of entry ``key``, bound to the data file whose
    XXH3-128 is ``data_digest`` (hex, :func:`data_parts`); ``pool_object``:
    the thread pool's object code for ``code.target``
    (:func:`nnc.runtime.threadpool.in_process_object`)."""
    header = {
        "nnc_version": version.__version__,
        "compiler": compiler_id(),
        "target": {"triple": code.target.triple, "cpu": code.target.cpu, "features": code.target.features},
        "arena_size": int(code.arena_size),
        "inputs": [_info_to_json(i) for i in code.inputs],
        "outputs": [_info_to_json(o) for o in code.outputs],
        "data_size": memoryview(code.weights).nbytes,
        "data_xxh3_128": data_digest,
    }
    hb = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    body = b"".join(
        (
            MODEL_MAGIC,
            struct.pack("<I", FORMAT_VERSION),
            bytes.fromhex(key),
            struct.pack("<I", len(hb)),
            hb,
            struct.pack("<Q", len(code.object_code)),
            code.object_code,
            struct.pack("<Q", len(pool_object)),
            pool_object,
        )
    )
    return body + _checksum(body).digest()


def _check_file(blob, magic: bytes, key: str, what: str):
    """Length, trailing checksum, magic, version and key of a cache file.
    Returns the XXH3-128 of the whole file, computed in the same single pass
    over its bytes as the trailing checksum (an ``xxhash`` object)."""
    if len(blob) < len(magic) + 4 + 32 + _DIGEST:
        raise CacheCorrupt(f"{what} file too short ({len(blob)} bytes)")
    if blob[: len(magic)] != magic:
        raise CacheCorrupt(f"{what} file is not an nnc {what} cache file")
    (version,) = struct.unpack_from("<I", blob, len(magic))
    if version != FORMAT_VERSION:
        raise CacheCorrupt(f"{what} file has format version {version}, expected {FORMAT_VERSION}")
    h = _checksum(memoryview(blob)[:-_DIGEST])
    tail = bytes(blob[-_DIGEST:])
    if h.digest() != tail:
        raise CacheCorrupt(f"{what} file checksum mismatch")
    if blob[len(magic) + 4 : len(magic) + 36] != bytes.fromhex(key):
        raise CacheCorrupt(f"{what} file belongs to another entry")
    whole = h.copy()
    whole.update(tail)
    return whole


def _section(blob, at: int, what: str) -> slice:
    """Where the length-prefixed (u64) section at ``at`` lies; it must end
    before the trailing checksum."""
    if at + 8 + _DIGEST > len(blob):
        raise CacheCorrupt(f"model file {what} length out of range")
    (n,) = struct.unpack_from("<Q", blob, at)
    if at + 8 + n + _DIGEST > len(blob):
        raise CacheCorrupt(f"model file {what} length out of range")
    return slice(at + 8, at + 8 + n)


def _parse_model(key: str, model_file, target: Target) -> tuple[dict, slice, slice]:
    """Verify a model file; its header and where its object code and the
    thread pool's object code are."""
    _check_file(model_file, MODEL_MAGIC, key, "model")
    (hlen,) = struct.unpack_from("<I", model_file, 44)
    if _MODEL_FIXED + hlen + 8 + _DIGEST > len(model_file):
        raise CacheCorrupt("model file header length out of range")
    obj = _section(model_file, _MODEL_FIXED + hlen, "object code")
    pool = _section(model_file, obj.stop, "thread pool")
    if pool.stop + _DIGEST != len(model_file):
        raise CacheCorrupt("model file length does not match its contents")
    try:
        header = json.loads(bytes(model_file[_MODEL_FIXED : _MODEL_FIXED + hlen]).decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise CacheCorrupt(f"bad header: {e}") from None
    _want(isinstance(header, dict), "not an object")
    _want(is_int(header.get("arena_size")) and header["arena_size"] >= 0, "arena_size")
    _want(is_int(header.get("data_size")) and header["data_size"] >= 0, "data_size")
    _want(isinstance(header.get("data_xxh3_128"), str), "data_xxh3_128")
    _want(isinstance(header.get("inputs"), list) and isinstance(header.get("outputs"), list), "operands")
    t = header.get("target")
    _want(isinstance(t, dict) and all(isinstance(t.get(k), str) for k in ("triple", "cpu", "features")), "target")
    if Target(t["triple"], t["cpu"], t["features"]) != target:
        raise CacheCorrupt(f"entry was compiled for {t}, not {target}")
    if header.get("compiler") != compiler_id():
        raise CacheCorrupt(f"entry was compiled by {header.get('compiler')!r}")
    return header, obj, pool


def _data_size(header: dict) -> int:
    return _DATA_FIXED + header["data_size"] + _DIGEST


def decode(key: str, model_file, data_file, target: Target) -> NativeCode:
    """Verify both files of entry ``key`` and rebuild its NativeCode
    (CacheCorrupt on any mismatch)."""
    return _decode(key, model_file, _parse_model(key, model_file, target), data_file, target)


def _decode(key: str, model_file, parsed: tuple[dict, slice, slice], data_file, target: Target) -> NativeCode:
    """The NativeCode of two verified files (bytes-like); its constant pool
    is a view of ``data_file`` (which :func:`_read_private` placed aligned)."""
    header, obj, _ = parsed
    if len(data_file) != _data_size(header):
        raise CacheCorrupt(f"data file has {len(data_file)} bytes, expected {_data_size(header)}")
    if _check_file(data_file, DATA_MAGIC, key, "data").hexdigest() != header["data_xxh3_128"]:
        raise CacheCorrupt("data file does not match the model file")
    (wlen,) = struct.unpack_from("<Q", data_file, 44)
    _want(wlen == header["data_size"], "data length")
    return NativeCode(
        object_code=bytes(model_file[obj]),
        # compares equal to the bytes it holds, like the bytes it replaces
        weights=aligned_bytes(memoryview(data_file)[_DATA_FIXED : _DATA_FIXED + wlen]).data,
        arena_size=header["arena_size"],
        inputs=[_info_from_json(d) for d in header["inputs"]],
        outputs=[_info_from_json(d) for d in header["outputs"]],
        target=target,
    )


# -- files ----------------------------------------------------------------------------------------


def _open_nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK)


def _read_private(path: Path, magic: bytes, limit: int, align_offset: int = 0) -> memoryview:
    """The whole file, read into private memory so that the byte at
    ``align_offset`` sits on a 64-byte boundary (CacheMiss if absent;
    CacheCorrupt if it is not a regular file, is unreadable, too big, shrinks
    while read, or does not start with ``magic`` and our format version: then
    the rest of a foreign file is never read).

    Why read rather than map: a mapping shows later writes to the file, so a
    file rewritten in place between the digest check and the copy of its
    constant pool gave another model's weights (seen in the suite), and a file
    truncated in place while mapped faults (SIGBUS) on the next access.  Bytes
    read once are what is verified and what runs, and reading is the single
    copy a hit makes anyway (the pool lands aligned, so
    :func:`~nnc.runtime.executable.aligned_bytes` keeps it in place)."""
    try:
        # O_NONBLOCK: a FIFO in the entry's place must not block the
        # open (waiting for a writer); it is then refused as not regular.
        with open(path, "rb", opener=_open_nonblocking) as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise CacheCorrupt(f"{path.name} is not a regular file")
            size = st.st_size
            if size > limit:
                raise CacheCorrupt(f"{path.name}: {size} bytes, expected {limit} at most")
            prefix = magic + struct.pack("<I", FORMAT_VERSION)
            raw = np.empty(size + _ALIGN, dtype=np.uint8)
            start = -(raw.ctypes.data + align_offset) % _ALIGN
            buf = raw[start : start + size].data
            if size < len(prefix) or f.readinto(buf[: len(prefix)]) != len(prefix) or buf[: len(prefix)] != prefix:
                raise CacheCorrupt(f"{path.name} is not an nnc cache file of format version {FORMAT_VERSION}")
            got = len(prefix)
            while got < size:
                n = f.readinto(buf[got:])
                if not n:
                    raise CacheCorrupt(f"{path.name} shrank to {got} bytes while read")
                got += n
    except (FileNotFoundError, NotADirectoryError):
        raise CacheMiss(f"{path.name} does not exist") from None
    except OSError as e:
        raise CacheCorrupt(f"cannot read {path.name}: {e.strerror or e}") from None
    return buf


def load(cache_dir: str | os.PathLike, key: str, target: Target) -> NativeCode:
    """The verified NativeCode of entry ``key``: CacheMiss if there is no
    entry, CacheCorrupt if its files fail verification (then recompile)."""
    model_path, data_path = entry_paths(cache_dir, key)
    model_file = _read_private(model_path, MODEL_MAGIC, limit=_MODEL_FIXED + _MAX_HEADER + 8 + _MAX_OBJECT + _DIGEST)
    parsed = _parse_model(key, model_file, target)
    try:
        # The verified model file says exactly how big the data file is.
        data_file = _read_private(data_path, DATA_MAGIC, limit=_data_size(parsed[0]), align_offset=_DATA_FIXED)
    except CacheMiss as e:
        if isinstance(e, CacheCorrupt):
            raise
        raise CacheCorrupt(f"{data_path.name} is missing but {model_path.name} exists") from None
    code = _decode(key, model_file, parsed, data_file, target)
    # A process whose first model comes from the cache loads the thread pool
    # the entry carries instead of compiling it (a no-op once one is loaded).
    threadpool.install(bytes(model_file[parsed[2]]))
    return code


def _write_atomic(path: Path, blob) -> None:
    """Write ``blob`` (bytes-like, or a list of them written in order) to
    ``path`` atomically."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            for part in blob if isinstance(blob, list) else [blob]:
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save(cache_dir: str | os.PathLike, key: str, code: NativeCode) -> None:
    """Write entry ``key`` atomically (raises OSError; callers ignore it)."""
    model_path, data_path = entry_paths(cache_dir, key)
    if code.target != Target.host():
        raise ValueError("only code for this host is cached")
    data_file, data_digest = data_parts(key, code.weights)
    model_file = encode_model(key, code, data_digest, threadpool.install().object_code)
    _write_atomic(data_path, data_file)
    _write_atomic(model_path, model_file)
    _fsync_dir(model_path.parent)
