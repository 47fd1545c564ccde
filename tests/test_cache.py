"""Compilation caching (setCaching): hits, misses, keys, corrupt or unusable
cache files, atomic writes and concurrent writers (nnc.runtime.cache)."""

from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing
import os

import numpy as np
import pytest

import nnc
import nnc.driver as executable_mod  # the pipeline (compile_model, shaped_module, ...) is the driver's
from nnc import FuseCode, PaddingCode
from nnc import OperandType as T
from nnc import OperationType as Op
from nnc.runtime import cache

TOKEN = bytes(range(32))
OTHER_TOKEN = bytes(range(1, 33))


# -- a model with a real constant pool ---------------------------------------------------------------


def conv_model(seed: int = 0, spatial=(8, 8)) -> nnc.Model:
    """CONV_2D 3x3 SAME + RELU over 1xHxWx3 -> 1xHxWx4 (432 bytes of filter
    weights, so the data cache is not empty).  ``spatial=(0, 0)`` leaves the
    input's height and width to the execution."""
    rng = np.random.default_rng(seed)
    m = nnc.Model()
    h, w = spatial
    image = m.add_operand(T.TENSOR_FLOAT32, [1, h, w, 3])
    filt = m.add_operand(T.TENSOR_FLOAT32, [4, 3, 3, 3])
    m.set_operand_value(filt, rng.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32))
    bias = m.add_operand(T.TENSOR_FLOAT32, [4])
    m.set_operand_value(bias, rng.normal(0, 0.1, 4).astype(np.float32))
    scalars = []
    for v in (PaddingCode.SAME, 1, 1, FuseCode.RELU):
        s = m.add_operand(T.INT32)
        m.set_operand_value(s, int(v))
        scalars.append(s)
    out = m.add_operand(T.TENSOR_FLOAT32, [1, h, w, 4])
    m.add_operation(Op.CONV_2D, [image, filt, bias, *scalars], [out])
    m.identify_inputs_and_outputs([image], [out])
    m.finish()
    return m


def reference(model: nnc.Model, x: np.ndarray) -> np.ndarray:
    filt = model.operands[1].value
    bias = model.operands[2].value
    p = np.pad(x[0], ((1, 1), (1, 1), (0, 0)))
    h, w = x.shape[1:3]
    out = np.zeros((1, h, w, 4), np.float32)
    for i in range(h):
        for j in range(w):
            out[0, i, j] = np.tensordot(filt, p[i : i + 3, j : j + 3], axes=([1, 2, 3], [0, 1, 2])) + bias
    return np.maximum(out, 0)


def image(seed: int = 1, spatial=(8, 8)) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(1, *spatial, 3)).astype(np.float32)


def compile_cached(model, cache_dir, token=TOKEN, **settings) -> nnc.Compilation:
    c = nnc.Compilation(model)
    for name, value in settings.items():
        getattr(c, f"set_{name}")(value)
    c.set_caching(str(cache_dir), token)
    c.finish()
    return c


def run(c: nnc.Compilation, x: np.ndarray) -> np.ndarray:
    y = np.zeros((*x.shape[:3], 4), np.float32)
    ex = nnc.Execution(c)
    ex.set_input(0, x, list(x.shape))
    ex.set_output(0, y, list(y.shape))
    ex.compute()
    return y


def events(c: nnc.Compilation) -> list[str]:
    return [e for e, _, _ in c.cache_events]


def only_key(c: nnc.Compilation) -> str:
    keys = {k for _, k, _ in c.cache_events}
    assert len(keys) == 1, c.cache_events
    return keys.pop()


def check_correct(c: nnc.Compilation, model: nnc.Model) -> None:
    x = image()
    np.testing.assert_allclose(run(c, x), reference(model, x), rtol=1e-5, atol=1e-5)


@pytest.fixture
def no_compiler(monkeypatch):
    """Make any run of the xDSL passes or LLVM fail the test."""

    def boom(*a, **k):
        raise AssertionError("the compiler ran on a cache hit")

    for name in ("shaped_module", "lower_shaped", "generate_code", "lower_to_llvm"):
        monkeypatch.setattr(executable_mod, name, boom)


@pytest.fixture
def loaded_objects(monkeypatch):
    """Every object file handed to MCJIT during the test."""
    seen: list[bytes] = []
    real = executable_mod.Executable.__init__

    def spy(self, code):
        seen.append(code.object_code)
        real(self, code)

    monkeypatch.setattr(executable_mod.Executable, "__init__", spy)
    return seen


# -- hit and miss ----------------------------------------------------------------------------------


def test_miss_then_hit_without_compiling(tmp_path, request):
    model = conv_model()
    first = compile_cached(model, tmp_path)
    assert events(first) == ["miss", "saved"]
    key = only_key(first)
    model_path, data_path = cache.entry_paths(tmp_path, key)
    assert model_path.is_file() and data_path.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([model_path.name, data_path.name])
    check_correct(first, model)

    # A separately built, identical model hits, and nothing is compiled.
    request.getfixturevalue("no_compiler")
    stamp = (model_path.stat().st_mtime_ns, data_path.stat().st_mtime_ns)
    again = compile_cached(conv_model(), tmp_path)
    assert events(again) == ["hit"]
    assert only_key(again) == key
    check_correct(again, model)
    # A successful load does not rewrite the entry.
    assert (model_path.stat().st_mtime_ns, data_path.stat().st_mtime_ns) == stamp
    assert np.array_equal(run(again, image()), run(first, image()))


_HIT_IN_A_NEW_PROCESS = r"""
import json, sys
import numpy as np
import nnc
model = nnc.Model.load(sys.argv[1])
c = nnc.Compilation(model)
c.set_caching(sys.argv[2], bytes(range(32)))
c.finish()
x = np.random.default_rng(1).normal(size=(1, 8, 8, 3)).astype(np.float32)
y = np.zeros((1, 8, 8, 4), np.float32)
ex = nnc.Execution(c)
ex.set_input(0, x)
ex.set_output(0, y)
ex.compute()
heavy = sorted(m for m in sys.modules if m.split(".")[0] == "xdsl" or m == "nnc.driver" or m.startswith("nnc.passes"))
print(json.dumps({"events": [e for e, _, _ in c.cache_events], "heavy": heavy, "y": y.tolist()}))
"""


def test_hit_in_a_new_process_imports_no_compiler(tmp_path):
    """A process whose model comes from the cache never imports the compiler
    (xDSL, the passes, the driver: a second of CPU), and computes right."""
    import subprocess
    import sys

    path = tmp_path / "conv.nnc"
    conv_model().save(path)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    assert events(compile_cached(nnc.Model.load(path), cache_dir)) == ["miss", "saved"]
    proc = subprocess.run([sys.executable, "-c", _HIT_IN_A_NEW_PROCESS, str(path), str(cache_dir)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["events"] == ["hit"]
    assert out["heavy"] == []
    np.testing.assert_allclose(np.asarray(out["y"], np.float32), reference(conv_model(), image()), rtol=1e-5, atol=1e-5)


def test_thread_pool_comes_from_the_entry(tmp_path):
    """The model file carries the thread pool's object code, exactly the
    copy this process loaded (what a process starting from the cache loads
    instead of compiling the pool)."""
    from nnc.runtime import threadpool

    key = only_key(compile_cached(conv_model(), tmp_path))
    blob = cache.entry_paths(tmp_path, key)[0].read_bytes()
    _, _, pool = cache._parse_model(key, blob, _host())
    assert blob[pool] == threadpool.install().object_code and len(blob[pool]) > 0


def test_no_caching_touches_no_files(tmp_path):
    c = nnc.Compilation(conv_model())
    c.finish()
    assert c.cache_events == []
    assert list(tmp_path.iterdir()) == []


def test_changed_weights_same_token_never_load_stale_entry(tmp_path):
    old, new = conv_model(seed=0), conv_model(seed=5)
    k_old = only_key(compile_cached(old, tmp_path))
    c = compile_cached(new, tmp_path)
    assert events(c) == ["miss", "saved"]
    assert only_key(c) != k_old
    check_correct(c, new)
    # Both entries stay valid for their own model.
    assert events(compile_cached(conv_model(seed=0), tmp_path)) == ["hit"]
    assert events(compile_cached(conv_model(seed=5), tmp_path)) == ["hit"]


def test_key_covers_everything_that_changes_the_result(monkeypatch):
    from nnc.runtime.jit import Target

    target = Target.host()
    model = conv_model()
    infos = [model.operands[i].info(with_value=False) for i in model.inputs]

    def key(token=TOKEN, model=model, infos=infos, preference=1, priority=100, target=target):
        return cache.cache_key(token, model, infos, preference=preference, priority=priority, target=target)

    base = key()
    assert len(base) == 64 and int(base, 16) >= 0
    assert key() == key(model=conv_model())  # deterministic, independent of object identity
    variants = {
        "token": key(token=OTHER_TOKEN),
        "model weights": key(model=conv_model(seed=3)),
        "input shape": key(model=conv_model(spatial=(8, 9))),
        "signature": key(infos=[infos[0].with_dims((1, 9, 8, 3))]),
        "preference": key(preference=2),
        "priority": key(priority=110),
        "cpu": key(target=Target(target.triple, "generic", target.features)),
        "features": key(target=Target(target.triple, target.cpu, "")),
        "triple": key(target=Target("aarch64-unknown-linux-gnu", target.cpu, target.features)),
    }
    for what, k in variants.items():
        assert k != base, what
    assert len(set(variants.values())) == len(variants)

    # nnc's version is part of the key.
    monkeypatch.setattr(nnc.version, "__version__", "999.0")
    cache.compiler_id.cache_clear()
    try:
        assert cache.compiler_id().startswith("nnc 999.0 ")
        assert key() != base
    finally:
        monkeypatch.undo()
        cache.compiler_id.cache_clear()


def _add_model(relaxed=False, act=0, out_first=False, sub=None):
    m = nnc.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    b = m.add_operand(T.TENSOR_FLOAT32, [2])
    f = m.add_operand(T.INT32)
    m.set_operand_value(f, act)
    o = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.ADD, [a, b, f], [o])
    if sub is not None:
        s = m.add_operand(T.MODEL)
        m.set_operand_value_from_model(s, sub)
    m.identify_inputs_and_outputs([b, a] if out_first else [a, b], [o])
    m.relax_computation_float32_to_float16(relaxed)
    m.finish()
    return m


def test_model_fingerprint_covers_graph_flags_and_subgraphs():
    fp = cache.model_fingerprint
    base = fp(_add_model())
    assert fp(_add_model()) == base
    assert fp(_add_model(relaxed=True)) != base
    assert fp(_add_model(act=1)) != base
    assert fp(_add_model(out_first=True)) != base
    with_sub = fp(_add_model(sub=_add_model()))
    assert with_sub != base
    assert fp(_add_model(sub=_add_model(act=1))) != with_sub  # a changed subgraph changes the key


def test_value_digests_do_not_depend_on_the_thread_split(monkeypatch):
    """The weights are hashed on several threads when they are big: the
    fingerprint is the same however they were split (or not)."""
    rng = np.random.default_rng(0)
    values = [rng.integers(0, 255, n, dtype=np.uint8) for n in (5, 3000, 70000, 1, 250000, 40, 9000)]
    one_thread = [hashlib.sha256(v).digest() for v in values]
    monkeypatch.setattr(cache, "_PARALLEL_HASH_BYTES", 1000)
    for cpus in (2, 3, 8):
        monkeypatch.setattr(cache.os, "cpu_count", lambda cpus=cpus: cpus)
        assert cache._value_digests(values) == one_thread


def test_model_read_again_from_an_unchanged_file_is_not_hashed_again(tmp_path, monkeypatch):
    """A model read again from a file whose identity (device, inode, size,
    mtime, ctime) is unchanged gets the fingerprint of the first read without
    hashing its weights; a changed file is hashed again."""
    from nnc import modelfile

    monkeypatch.setattr(modelfile, "RACY_NS", 0)  # the file was just written: not racy for this test
    path = tmp_path / "conv.nnc"
    conv_model(seed=0).save(path)
    first = nnc.Model.load(path)
    assert first.source_key is not None
    fp = cache.model_fingerprint(first)
    again = nnc.Model.load(path)
    assert again is not first and again.source_key == first.source_key

    def no_hashing(values):
        raise AssertionError("the weights were hashed again")

    with monkeypatch.context() as m:
        m.setattr(cache, "_value_digests", no_hashing)
        assert cache.model_fingerprint(again) == fp
    conv_model(seed=5).save(path)  # other weights (saved by rename: another inode)
    changed = nnc.Model.load(path)
    assert changed.source_key != first.source_key
    assert cache.model_fingerprint(changed) != fp


def test_file_identity_sees_a_rewrite_with_a_forged_mtime(tmp_path, monkeypatch):
    """Rewriting a file in place with bytes of the same size and setting its
    modification time back still changes its identity (the status change
    time moves); a file changed just before it is read has none."""
    import time

    from nnc import modelfile

    path = tmp_path / "f.bin"
    path.write_bytes(b"a" * 64)
    assert modelfile.read_regular_file(str(path)) == (b"a" * 64, None)  # racily new
    monkeypatch.setattr(modelfile, "RACY_NS", 0)
    data, before = modelfile.read_regular_file(str(path))
    assert data == b"a" * 64 and before is not None
    mtime = os.stat(path).st_mtime_ns
    time.sleep(0.05)  # past the file system's timestamp granularity
    with open(path, "r+b") as f:
        f.write(b"b" * 64)
    os.utime(path, ns=(mtime, mtime))
    data, after = modelfile.read_regular_file(str(path))
    assert data == b"b" * 64 and after is not None and after != before


def test_tflite_model_read_twice_shares_its_fingerprint():
    """Importing the same (old, unchanged) .tflite file twice gives equal
    source keys, so the second model's fingerprint is the first's."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "models", "lstm_textcls_float32.tflite")
    a, b = nnc.import_tflite(path), nnc.import_tflite(path)
    assert a.source_key is not None and a.source_key == b.source_key
    assert nnc.import_tflite(path, feature_level=7).source_key != a.source_key
    assert cache.model_fingerprint(a) == cache.model_fingerprint(b)


def _forget_fingerprints(monkeypatch) -> None:
    """As in a new process: no fingerprint is remembered in memory."""
    import weakref

    monkeypatch.setattr(cache, "_FINGERPRINTS", weakref.WeakKeyDictionary())
    monkeypatch.setattr(cache, "_SOURCE_FINGERPRINTS", {})


def _saved_model(path, seed: int = 0) -> nnc.Model:
    conv_model(seed=seed).save(path)
    return nnc.Model.load(path)


def _index_files(cache_dir) -> list:
    return sorted(p for p in cache_dir.iterdir() if p.suffix == cache.INDEX_SUFFIX)


def test_source_index_spares_hashing_in_a_new_process(tmp_path, monkeypatch):
    """A compilation with caching of a model read from a file records its
    fingerprint in the cache directory's source index; a process that reads
    the unchanged file again hits without hashing the weights."""
    from nnc import modelfile

    monkeypatch.setattr(modelfile, "RACY_NS", 0)  # the file was just written: not racy for this test
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    first = compile_cached(_saved_model(tmp_path / "conv.nnc"), cache_dir)
    assert events(first) == ["miss", "saved"]
    assert len(_index_files(cache_dir)) == 1
    _forget_fingerprints(monkeypatch)

    def no_hashing(values):
        raise AssertionError("the weights were hashed again")

    with monkeypatch.context() as m:
        m.setattr(cache, "_start_value_digests", no_hashing)
        again = compile_cached(nnc.Model.load(tmp_path / "conv.nnc"), cache_dir)
    assert events(again) == ["hit"] and only_key(again) == only_key(first)
    check_correct(again, conv_model())
    # A model built through the API has no source: nothing is recorded for it.
    compile_cached(conv_model(seed=3), cache_dir)
    assert len(_index_files(cache_dir)) == 1


@pytest.mark.parametrize("how", ["truncate", "extend", "flip-key", "flip-middle", "flip-checksum",
                                 "zero-length", "foreign-binary", "format-version"])  # fmt: skip
def test_corrupt_source_index_is_ignored_and_rewritten(tmp_path, monkeypatch, how):
    """A bad index file is a miss of the index only: the model is hashed,
    hits its entry and the index file is rewritten."""
    from nnc import modelfile

    monkeypatch.setattr(modelfile, "RACY_NS", 0)
    path = tmp_path / "conv.nnc"
    first = compile_cached(_saved_model(path), tmp_path)
    (index,) = _index_files(tmp_path)
    good = index.read_bytes()
    CORRUPTIONS[how](index)
    _forget_fingerprints(monkeypatch)
    model = nnc.Model.load(path)
    assert cache._recall_source(tmp_path, model.source_key) is None
    again = compile_cached(model, tmp_path)
    assert events(again) == ["hit"] and only_key(again) == only_key(first)
    check_correct(again, conv_model())
    assert index.read_bytes() == good


def test_source_index_of_another_file_is_refused(tmp_path, monkeypatch):
    """An index file copied over another source's name is refused (the
    name digest inside it does not match): each model still gets its own
    entry and its own results."""
    from nnc import modelfile

    monkeypatch.setattr(modelfile, "RACY_NS", 0)
    a_path, b_path = tmp_path / "a.nnc", tmp_path / "b.nnc"
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    compile_cached(_saved_model(a_path, seed=0), cache_dir)
    (a_index,) = _index_files(cache_dir)
    b_key = only_key(compile_cached(_saved_model(b_path, seed=1), cache_dir))
    (b_index,) = [p for p in _index_files(cache_dir) if p != a_index]
    b_index.write_bytes(a_index.read_bytes())
    _forget_fingerprints(monkeypatch)
    b = nnc.Model.load(b_path)
    assert cache._recall_source(cache_dir, b.source_key) is None
    c = compile_cached(b, cache_dir)
    assert events(c) == ["hit"] and only_key(c) == b_key
    check_correct(c, conv_model(seed=1))


# -- corrupt, foreign, swapped, unreadable files -----------------------------------------------------


def _truncate(p):
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _truncate_trailer(p):
    p.write_bytes(p.read_bytes()[:-1])


def _extend(p):
    p.write_bytes(p.read_bytes() + b"\0" * 7)


def _flip(offset):
    def corrupt(p):
        b = bytearray(p.read_bytes())
        b[offset % len(b)] ^= 0x10
        p.write_bytes(bytes(b))

    return corrupt


def _zero(p):
    p.write_bytes(b"")


def _foreign(p):
    p.write_bytes(b"\x7fELF" + os.urandom(5000))


def _foreign_text(p):
    p.write_text(json.dumps({"hello": "world"}))


def _other_version(p):
    b = bytearray(p.read_bytes())
    b[8] += 1  # format version, without fixing the checksum
    p.write_bytes(bytes(b))


CORRUPTIONS = {
    "truncate": _truncate,
    "drop-last-byte": _truncate_trailer,
    "extend": _extend,
    "flip-magic": _flip(0),
    "flip-key": _flip(20),
    "flip-header": _flip(60),
    "flip-middle": _flip(-2000),
    "flip-checksum": _flip(-1),
    "zero-length": _zero,
    "foreign-binary": _foreign,
    "foreign-text": _foreign_text,
    "format-version": _other_version,
}


@pytest.mark.parametrize("which", ["model", "data"])
@pytest.mark.parametrize("how", list(CORRUPTIONS))
def test_corrupt_file_recompiles_and_rewrites(tmp_path, which, how, loaded_objects):
    model = conv_model()
    good = compile_cached(model, tmp_path)
    key = only_key(good)
    good_object = good.executable([model.operands[model.inputs[0]].info(with_value=False)], "t").code.object_code
    paths = dict(zip(("model", "data"), cache.entry_paths(tmp_path, key)))
    CORRUPTIONS[how](paths[which])
    with pytest.raises(cache.CacheCorrupt):
        cache.load(tmp_path, key, _host())
    loaded_objects.clear()

    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"], c.cache_events
    check_correct(c, model)
    # Only freshly compiled code was loaded, never the bytes of the bad file.
    assert all(o == good_object for o in loaded_objects)
    # The rewritten entry is whole and hits.
    cache.load(tmp_path, key, _host())
    assert events(compile_cached(conv_model(), tmp_path)) == ["hit"]


def _host():
    from nnc.runtime.jit import Target

    return Target.host()


def test_files_swapped_between_entries_are_rejected(tmp_path):
    a, b = conv_model(seed=0), conv_model(seed=1)
    ka, kb = only_key(compile_cached(a, tmp_path)), only_key(compile_cached(b, tmp_path))
    (ma, da), (mb, db) = cache.entry_paths(tmp_path, ka), cache.entry_paths(tmp_path, kb)
    originals = {p: p.read_bytes() for p in (ma, da, mb, db)}

    def restore():
        for p, blob in originals.items():
            p.write_bytes(blob)

    for swap in ([(ma, mb)], [(da, db)], [(ma, mb), (da, db)]):
        restore()
        for x, y in swap:
            bx, by = x.read_bytes(), y.read_bytes()
            x.write_bytes(by)
            y.write_bytes(bx)
        for k in (ka, kb):
            with pytest.raises(cache.CacheCorrupt):
                cache.load(tmp_path, k, _host())
        ca, cb = compile_cached(conv_model(seed=0), tmp_path), compile_cached(conv_model(seed=1), tmp_path)
        assert events(ca) == events(cb) == ["rejected", "saved"]
        check_correct(ca, a)
        check_correct(cb, b)


def test_data_file_missing_is_rejected(tmp_path):
    model = conv_model()
    key = only_key(compile_cached(model, tmp_path))
    cache.entry_paths(tmp_path, key)[1].unlink()
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"]
    check_correct(c, model)


def test_unreadable_path_recompiles(tmp_path):
    """A model cache path that cannot be read (here a directory, which fails
    as root too): recompile; the entry cannot be replaced, still no error."""
    model = conv_model()
    key = only_key(compile_cached(model, tmp_path))
    model_path = cache.entry_paths(tmp_path, key)[0]
    model_path.unlink()
    model_path.mkdir()
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "save-failed"]
    check_correct(c, model)


# File permissions do not bind root: as root these two tests are skipped (the
# permission-independent variants above and below still run).
needs_unprivileged = pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="running as root, which can read a chmod 000 file and write a read-only directory",
)


@needs_unprivileged
def test_unreadable_file_recompiles_and_rewrites(tmp_path):
    model = conv_model()
    key = only_key(compile_cached(model, tmp_path))
    model_path, data_path = cache.entry_paths(tmp_path, key)
    for p in (model_path, data_path):
        os.chmod(p, 0o000)
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"], c.cache_events
    check_correct(c, model)
    cache.load(tmp_path, key, _host())  # rewritten whole (and readable again)


@needs_unprivileged
def test_read_only_directory_still_compiles_and_loads(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        model = conv_model()
        c = compile_cached(model, ro)
        assert events(c) == ["miss", "save-failed"], c.cache_events
        check_correct(c, model)
        assert list(ro.iterdir()) == []
        # A read-only directory that holds an entry serves hits.
        ro.chmod(0o755)
        compile_cached(conv_model(), ro)
        ro.chmod(0o555)
        assert events(compile_cached(conv_model(), ro)) == ["hit"]
    finally:
        ro.chmod(0o755)


def test_unreadable_file_as_any_user(tmp_path, monkeypatch):
    """The chmod 000 case for every user: opening the model file fails with EACCES."""
    model = conv_model()
    only_key(compile_cached(model, tmp_path))
    real_open = open

    def denied(path, *a, **k):
        if str(path).endswith(cache.MODEL_SUFFIX):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(cache, "open", denied, raising=False)
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"], c.cache_events
    assert "Permission denied" in c.cache_events[0][2]
    check_correct(c, model)


def test_read_only_directory_as_any_user(tmp_path, monkeypatch):
    """The read-only directory case for every user: creating files fails with EROFS."""

    def read_only(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(cache.tempfile, "mkstemp", read_only)
    model = conv_model()
    c = compile_cached(model, tmp_path)
    assert events(c) == ["miss", "save-failed"]
    check_correct(c, model)
    assert list(tmp_path.iterdir()) == []


def test_missing_directory_still_compiles(tmp_path):
    missing = tmp_path / "does" / "not" / "exist"
    model = conv_model()
    c = compile_cached(model, missing)
    assert events(c) == ["miss", "save-failed"]
    check_correct(c, model)
    assert not missing.exists()  # nnc does not create the application's directory


def test_cache_dir_is_a_file_still_compiles(tmp_path):
    f = tmp_path / "file"
    f.write_text("not a directory")
    model = conv_model()
    c = compile_cached(model, f)
    assert events(c) == ["miss", "save-failed"]
    check_correct(c, model)


def test_full_disk_leaves_no_entry_and_no_temp_file(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache.os, "fsync", full)
    model = conv_model()
    c = compile_cached(model, tmp_path)
    assert events(c) == ["miss", "save-failed"]
    assert "No space" in c.cache_events[-1][2]
    check_correct(c, model)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    assert events(compile_cached(conv_model(), tmp_path)) == ["miss", "saved"]


def test_save_takes_weights_as_any_buffer(tmp_path):
    """The entry's data file is the pool's bytes whatever buffer holds them:
    bytes, the aligned memoryview the driver makes, or a strided view."""
    from dataclasses import replace

    model = conv_model()
    c = compile_cached(model, tmp_path / "first")
    code = c.executable([model.operands[model.inputs[0]].info(with_value=False)], "t").code
    raw = bytes(code.weights)
    doubled = np.repeat(np.frombuffer(raw, np.uint8), 2)
    for k, weights in enumerate([raw, memoryview(raw), memoryview(doubled)[::2]]):
        d = tmp_path / f"entry{k}"
        d.mkdir()
        key = only_key(c)
        cache.save(d, key, replace(code, weights=weights))
        assert bytes(cache.load(d, key, _host()).weights) == raw


def test_partial_write_of_model_file_is_never_an_entry(tmp_path, monkeypatch):
    """Data file written, then the process 'dies' writing the model file."""
    real = cache._write_atomic

    def dies_on_model(path, blob):
        if path.name.endswith(cache.MODEL_SUFFIX):
            raise OSError(errno.EIO, "simulated crash")
        real(path, blob)

    monkeypatch.setattr(cache, "_write_atomic", dies_on_model)
    model = conv_model()
    assert events(compile_cached(model, tmp_path)) == ["miss", "save-failed"]
    assert [p.suffix for p in tmp_path.iterdir()] == [cache.DATA_SUFFIX]
    monkeypatch.undo()
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["miss", "saved"]
    check_correct(c, model)


# -- concurrency -------------------------------------------------------------------------------------


def _race_worker(cache_dir: str, barrier, queue) -> None:
    try:
        model = conv_model()
        barrier.wait(timeout=120)
        c = compile_cached(model, cache_dir)
        x = image()
        ok = bool(np.allclose(run(c, x), reference(model, x), rtol=1e-5, atol=1e-5))
        queue.put({"events": events(c), "key": only_key(c), "correct": ok, "compiler": cache.compiler_id()})
    except BaseException as e:  # noqa: BLE001 - report to the parent
        queue.put({"error": repr(e)})


def test_two_processes_racing_to_fill_one_entry(tmp_path, monkeypatch):
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_race_worker, args=(str(tmp_path), barrier, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    for r in results:
        assert "error" not in r, r
        assert r["correct"]
        assert r["events"][-1] in ("saved", "hit"), r
    assert results[0]["key"] == results[1]["key"]
    key = results[0]["key"]
    # The key covers a digest of nnc's sources, which may have been edited
    # since this process computed it: check the entry as the children saw it.
    assert results[0]["compiler"] == results[1]["compiler"]
    monkeypatch.setattr(cache, "compiler_id", lambda: results[0]["compiler"])
    cache.load(tmp_path, key, _host())  # whole and verified
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [cache.DATA_SUFFIX, cache.MODEL_SUFFIX]
    assert events(compile_cached(conv_model(), tmp_path)) == ["hit"]


def test_concurrent_rewrites_and_loads_never_yield_a_bad_entry(tmp_path):
    """Writers keep replacing an entry (with different but valid code for the
    same key) while readers load it: every load is a whole, verified entry or
    a rejection, never a mix."""
    import threading

    model = conv_model()
    c = compile_cached(model, tmp_path)
    key = only_key(c)
    code = c.executable([model.operands[model.inputs[0]].info(with_value=False)], "t").code
    from dataclasses import replace

    codes = [code, replace(code, weights=bytes(code.weights)[::-1])]
    target = _host()
    stop = threading.Event()
    errors: list[BaseException] = []
    outcomes = {"ok": 0, "rejected": 0}

    def writer(k):
        try:
            while not stop.is_set():
                cache.save(tmp_path, key, codes[k])
        except BaseException as e:  # noqa: BLE001 - a writer that dies is a failure, not a quiet half of the test
            errors.append(e)

    def reader():
        while not stop.is_set():
            try:
                got = cache.load(tmp_path, key, target)
            except cache.CacheCorrupt:
                outcomes["rejected"] += 1
                continue
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
                return
            if got.weights not in (codes[0].weights, codes[1].weights) or got.object_code != code.object_code:
                errors.append(AssertionError("mixed entry"))
            outcomes["ok"] += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in (0, 1)] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    threading.Event().wait(1.5)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors
    assert outcomes["ok"] > 0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# -- variants compiled at execution -------------------------------------------------------------------


def test_variants_compiled_at_execution_are_cached_per_signature(tmp_path, request):
    model = conv_model(spatial=(0, 0))
    c = compile_cached(model, tmp_path)
    assert c.cache_events == []  # nothing compiled at finish
    for hw in ((8, 8), (5, 7)):
        x = image(spatial=hw)
        np.testing.assert_allclose(run(c, x), reference(model, x), rtol=1e-5, atol=1e-5)
    assert events(c) == ["miss", "saved", "miss", "saved"]
    assert len({k for _, k, _ in c.cache_events}) == 2
    request.getfixturevalue("no_compiler")
    c2 = compile_cached(conv_model(spatial=(0, 0)), tmp_path)
    for hw in ((5, 7), (8, 8)):
        x = image(spatial=hw)
        np.testing.assert_allclose(run(c2, x), reference(model, x), rtol=1e-5, atol=1e-5)
    assert events(c2) == ["hit", "hit"]


def test_entry_round_trips_every_native_code_field(tmp_path):
    """A field added to NativeCode must be stored by the cache too."""
    import dataclasses

    model = conv_model()
    c = compile_cached(model, tmp_path)
    code = c.executable([model.operands[model.inputs[0]].info(with_value=False)], "t").code
    assert {f.name for f in dataclasses.fields(code)} == {
        "object_code", "weights", "arena_size", "inputs", "outputs", "target",
    }  # fmt: skip
    loaded = cache.load(tmp_path, only_key(c), _host())
    for f in dataclasses.fields(code):
        assert getattr(loaded, f.name) == getattr(code, f.name), f.name
