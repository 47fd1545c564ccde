"""Checklist section 10 (compilation caching, C214-C242), mapped onto nnc's
cache (nnc.runtime.cache; tests/test_cache.py covers it in more depth).

How the HAL's driver-side contract ([V] items) maps onto nnc: nnc is its own
driver.  One cache entry is the HAL's "model cache" (``nnc-<key>.model``:
object code and everything needed to run it) plus its "data cache"
(``nnc-<key>.data``: the constant pool), 1 file of each, as the device
declares (``Device.number_of_cache_files_needed``).  The runtime hands the
driver no file descriptors: nnc opens its two files by name, so the VTS
cases about descriptor counts and offsets become cases about missing,
extra, pre-existing and unreadable files.  Both files carry a checksum
(XXH3-128) and the entry key, and the model file the data file's checksum
(stricter than AOSP: C234).
"""

from __future__ import annotations

import errno
import os
import threading
import time

import numpy as np
import pytest

import nnc
import nnc.runtime.executable as executable_mod
from nnc import ResultCode as RC
from nnc import device as device_mod
from nnc.enums import MAX_NUMBER_OF_CACHE_FILES
from nnc.runtime import cache
from nnc.runtime.jit import Target
from test_cache import (  # noqa: F401 - no_compiler is a fixture
    CORRUPTIONS,
    check_correct,
    compile_cached,
    conv_model,
    events,
    image,
    no_compiler,
    only_key,
    reference,
    run,
)
from test_checklist_model import raises

TOKEN = bytes(range(32))
CACHING = "ANeuralNetworksCompilation_setCaching"
FINISH = "ANeuralNetworksCompilation_finish"


def cpu() -> nnc.Device:
    return nnc.get_device(0)


def host() -> Target:
    return Target.host()


def entry(tmp_path, model=None, token=TOKEN):
    """Compile ``model`` (default conv_model()) with caching into tmp_path:
    (compilation, model file, data file)."""
    c = compile_cached(model or conv_model(), tmp_path, token)
    model_path, data_path = cache.entry_paths(tmp_path, only_key(c))
    return c, model_path, data_path


@pytest.fixture
def compiles(monkeypatch) -> list[int]:
    """Counts compiler runs (Compilation._compile calls)."""
    calls: list[int] = []
    real = nnc.Compilation._compile

    def counting(self, *a, **k):
        calls.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(nnc.Compilation, "_compile", counting)
    return calls


# -- setCaching (C214-C217) ---------------------------------------------------------------------------

BAD_TOKENS = {
    "empty": b"",
    "31-bytes": bytes(31),
    "33-bytes": bytes(33),
    "str-of-32": "x" * 32,
    "int-32": 32,
    "list-of-32-ints": list(range(32)),
}


@pytest.mark.checklist(214, 215)
@pytest.mark.parametrize("token", list(BAD_TOKENS.values()), ids=list(BAD_TOKENS))
def test_token_must_be_32_bytes(token) -> None:
    """Only a bytes-like object of exactly BYTE_SIZE_OF_CACHE_TOKEN (32) bytes;
    ``bytes(32)`` from an int, a str or a list are not bytes-like."""
    assert nnc.BYTE_SIZE_OF_CACHE_TOKEN == 32
    c = nnc.Compilation(conv_model())
    with raises(RC.BAD_DATA, CACHING):
        c.set_caching("/tmp", token)
    assert c.cache_token is None


@pytest.mark.checklist(215)
@pytest.mark.parametrize("token", [TOKEN, bytearray(TOKEN), memoryview(TOKEN), np.arange(32, dtype=np.uint8)],
                         ids=["bytes", "bytearray", "memoryview", "uint8-array"])  # fmt: skip
def test_bytes_like_tokens_are_accepted(token, tmp_path) -> None:
    c = nnc.Compilation(conv_model())
    c.set_caching(tmp_path, token)
    assert c.cache_token == TOKEN


@pytest.mark.checklist(216, 215)
def test_set_caching_null_and_state() -> None:
    with raises(RC.UNEXPECTED_NULL, CACHING):
        nnc.Compilation.set_caching(None, "/tmp", TOKEN)
    c = nnc.Compilation(conv_model())
    with raises(RC.UNEXPECTED_NULL, CACHING):
        c.set_caching(None, TOKEN)
    with raises(RC.UNEXPECTED_NULL, CACHING):
        c.set_caching("/tmp", None)
    c.finish()
    with raises(RC.BAD_STATE, CACHING):
        c.set_caching("/tmp", TOKEN)


@pytest.mark.checklist(217)
def test_set_caching_only_records(tmp_path, monkeypatch) -> None:
    """setCaching touches no file: a missing directory is no error there; the
    directory is used as given, with or without a trailing '/'."""
    for name in ("load", "save", "cache_key"):
        monkeypatch.setattr(cache, name, lambda *a, **k: pytest.fail("setCaching used the cache"))
    c = nnc.Compilation(conv_model())
    c.set_caching(tmp_path / "not" / "there", TOKEN)
    assert not (tmp_path / "not").exists() and c.cache_events == []
    monkeypatch.undo()
    first = compile_cached(conv_model(), str(tmp_path))
    again = compile_cached(conv_model(), str(tmp_path) + "/")
    assert events(first) == ["miss", "saved"] and events(again) == ["hit"]


# -- when the cache is read and written (C218-C224, C241) ------------------------------------------------


@pytest.mark.checklist(218)
def test_no_token_no_cache(tmp_path, monkeypatch) -> None:
    for name in ("load", "save", "cache_key", "entry_paths"):
        monkeypatch.setattr(cache, name, lambda *a, **k: pytest.fail("a compilation without a token used the cache"))
    c = nnc.Compilation(conv_model())
    c.finish()
    assert c.cache_events == [] and list(tmp_path.iterdir()) == []
    check_correct(c, conv_model())


@pytest.mark.checklist(219, 241)
def test_token_without_entry_compiles_and_saves(tmp_path, compiles) -> None:
    c, model_path, data_path = entry(tmp_path)
    assert events(c) == ["miss", "saved"] and c.finished
    assert compiles == [1]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([model_path.name, data_path.name])


@pytest.mark.checklist(220, 229, 241)
def test_existing_entry_is_loaded_not_compiled_nor_rewritten(tmp_path, request) -> None:
    """The round trip: saved, then prepared from the cache in a new
    compilation without running the compiler, with correct outputs; the
    successful load does not rewrite the entry."""
    _, model_path, data_path = entry(tmp_path)
    stamps = (model_path.stat().st_mtime_ns, data_path.stat().st_mtime_ns)
    request.getfixturevalue("no_compiler")
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["hit"]
    check_correct(c, conv_model())
    assert (model_path.stat().st_mtime_ns, data_path.stat().st_mtime_ns) == stamps


def _load_raises(exc):
    def load(*a, **k):
        raise exc

    return load


LOAD_FAILURES = {
    "corrupt": _load_raises(cache.CacheCorrupt("general failure")),
    "os-error": _load_raises(OSError(errno.EIO, "device unavailable")),
    "invalid-argument": _load_raises(ValueError("invalid argument")),
    "bug-in-loader": _load_raises(RuntimeError("boom")),
}


@pytest.mark.checklist(221)
@pytest.mark.parametrize("failure", list(LOAD_FAILURES))
def test_failed_load_compiles_and_rewrites(tmp_path, monkeypatch, failure, compiles) -> None:
    _, model_path, _ = entry(tmp_path)
    before = model_path.stat().st_mtime_ns
    compiles.clear()
    monkeypatch.setattr(cache, "load", LOAD_FAILURES[failure])
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"] and c.finished
    assert compiles == [1]
    assert model_path.stat().st_mtime_ns >= before
    check_correct(c, conv_model())


@pytest.mark.checklist(221)
def test_loaded_code_that_will_not_load_recompiles(tmp_path, monkeypatch) -> None:
    entry(tmp_path)
    real = executable_mod.Executable.__init__
    seen = []

    def fail_first(self, code):
        if not seen:
            seen.append(1)
            raise OSError("cannot map the object code")
        real(self, code)

    monkeypatch.setattr(executable_mod.Executable, "__init__", fail_first)
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"]
    check_correct(c, conv_model())


@pytest.mark.checklist(222)
def test_device_without_caching_is_never_asked(tmp_path, monkeypatch) -> None:
    """A device that declares 0 model and 0 data cache files compiles without
    the cache even when a token is given."""
    info = device_mod.DeviceInfo(**{**device_mod.CPU.__dict__, "name": "test-nocache", "cache_files": lambda: (0, 0)})
    nocache = device_mod.admit([info])[0]
    assert nocache.number_of_cache_files_needed == (0, 0)
    monkeypatch.setattr(device_mod, "_DEVICES", (*device_mod._DEVICES, nocache))
    for name in ("load", "save", "cache_key"):
        monkeypatch.setattr(cache, name, lambda *a, **k: pytest.fail("the cache was used"))
    c = nnc.Compilation.for_devices(conv_model(), [nocache])
    c.set_caching(tmp_path, TOKEN)
    c.finish()
    assert c.cache_events == [] and list(tmp_path.iterdir()) == []
    check_correct(c, conv_model())


@pytest.mark.checklist(223)
@pytest.mark.parametrize("where", ["missing", "a-file", "read-only"])
def test_unusable_directory_still_compiles(tmp_path, monkeypatch, where) -> None:
    if where == "missing":
        d = tmp_path / "missing"
    elif where == "a-file":
        d = tmp_path / "file"
        d.write_text("not a directory")
    else:  # read-only for every user (root ignores chmod): creating files fails
        d = tmp_path
        monkeypatch.setattr(cache.tempfile, "mkstemp", _load_raises(OSError(errno.EROFS, "Read-only file system")))
    c = compile_cached(conv_model(), d)
    assert events(c) == ["miss", "save-failed"] and c.finished
    check_correct(c, conv_model())


@pytest.mark.checklist(224)
def test_device_registration_checks_cache_file_counts() -> None:
    """A back-end needing more than MAX_NUMBER_OF_CACHE_FILES (32) files of a
    kind, or whose query fails, is not offered; nnc-cpu needs 1 + 1."""
    base = device_mod.CPU.__dict__

    def info(name, files):
        return device_mod.DeviceInfo(**{**base, "name": name, "cache_files": files})

    def broken():
        raise RuntimeError("query failed")

    offered = device_mod.admit([
        info("ok-32", lambda: (32, 32)), info("too-many-model", lambda: (33, 1)), info("too-many-data", lambda: (1, 33)),
        info("negative", lambda: (-1, 0)), info("failing", broken), info("ok-none", lambda: (0, 0)),
    ])  # fmt: skip
    assert [d.name for d in offered] == ["ok-32", "ok-none"]
    assert MAX_NUMBER_OF_CACHE_FILES == 32
    assert cpu().number_of_cache_files_needed == (1, 1)


@pytest.mark.checklist(225)
def test_entry_is_exactly_the_declared_files(tmp_path) -> None:
    """One model file and one data file per entry, under stable names; a
    round trip gives back exactly what was saved, byte for byte."""
    c, model_path, data_path = entry(tmp_path)
    assert cpu().number_of_cache_files_needed == (1, 1)
    assert {p.name for p in tmp_path.iterdir()} == {model_path.name, data_path.name}
    key = only_key(c)
    assert cache.entry_paths(tmp_path, key) == (model_path, data_path)
    code = c.executable([conv_model().operands[0].info(with_value=False)], "t").code
    loaded = cache.load(tmp_path, key, host())
    assert loaded == code
    blobs = (model_path.read_bytes(), data_path.read_bytes())
    cache.save(tmp_path, key, loaded)
    assert (model_path.read_bytes(), data_path.read_bytes()) == blobs


@pytest.mark.checklist(241)
def test_variants_compiled_at_execution_are_saved_when_compiled(tmp_path) -> None:
    """nnc compiles a variant for input shapes given only at execution then,
    so it writes that entry then (a documented difference from AOSP, which
    writes only in finish); still only with a token and after a failed load."""
    model = conv_model(spatial=(0, 0))
    c = compile_cached(model, tmp_path)
    assert c.cache_events == [] and list(tmp_path.iterdir()) == []
    x = image(spatial=(5, 6))
    np.testing.assert_allclose(run(c, x), reference(model, x), rtol=1e-5, atol=1e-5)
    assert events(c) == ["miss", "saved"]
    c2 = compile_cached(conv_model(spatial=(0, 0)), tmp_path)
    run(c2, x)
    assert events(c2) == ["hit"]


# -- the key (C226, C228) -------------------------------------------------------------------------------


@pytest.mark.checklist(226)
def test_key_separates_everything_nnapi_requires() -> None:
    model = conv_model()
    infos = [model.operands[i].info(with_value=False) for i in model.inputs]
    target = host()

    def key(token=TOKEN, m=model, preference=1, priority=100, devices=(("nnc-cpu", "v1"),)):
        return cache.cache_key(token, m, infos, preference=preference, priority=priority, target=target,
                               devices=devices)  # fmt: skip

    base = key()
    variants = {
        "device name": key(devices=(("other-cpu", "v1"),)),
        "device version": key(devices=(("nnc-cpu", "v2"),)),
        "preference": key(preference=2),
        "priority": key(priority=110),
        "token": key(token=bytes(31) + b"\1"),
        "partition (the model)": key(m=conv_model(seed=4)),
    }
    for what, k in variants.items():
        assert k != base, what
    assert len(set(variants.values())) == len(variants)
    assert base != TOKEN.hex() and TOKEN.hex() not in base  # the token alone is never the key


@pytest.mark.checklist(226)
def test_compilation_settings_reach_the_key(tmp_path) -> None:
    """The same model and token under another preference or priority is
    another entry; the device name and version are part of the key."""
    keys = {
        only_key(compile_cached(conv_model(), tmp_path)),
        only_key(compile_cached(conv_model(), tmp_path, preference=nnc.Preference.SUSTAINED_SPEED)),
        only_key(compile_cached(conv_model(), tmp_path, priority=nnc.Priority.LOW)),
    }
    assert len(keys) == 3
    c = nnc.Compilation.for_devices(conv_model(), [cpu()])
    c.set_caching(tmp_path, TOKEN)
    c.finish()
    assert events(c) == ["hit"]  # for_devices([nnc-cpu]) is the same device as Compilation(model)


@pytest.mark.checklist(228)
def test_token_collision_never_loads_another_model(tmp_path) -> None:
    """AOSP cannot detect two models sharing a token; nnc's key also covers the
    model, so each model gets (and keeps) its own entry and correct results."""
    a, b = conv_model(seed=0), conv_model(seed=9)
    ca, cb = compile_cached(a, tmp_path), compile_cached(b, tmp_path)
    assert events(ca) == events(cb) == ["miss", "saved"] and only_key(ca) != only_key(cb)
    check_correct(compile_cached(conv_model(seed=9), tmp_path), b)
    check_correct(compile_cached(conv_model(seed=0), tmp_path), a)


# -- integrity of the files (C230-C240) ----------------------------------------------------------------


def _reload_ok(tmp_path) -> nnc.Compilation:
    """Compile again: the bad entry is rejected, rewritten, results correct."""
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"], c.cache_events
    check_correct(c, conv_model())
    assert events(compile_cached(conv_model(), tmp_path)) == ["hit"]
    return c


@pytest.mark.checklist(230)
def test_saving_over_existing_files(tmp_path) -> None:
    """Files already at the entry's names (longer garbage) are replaced whole,
    never written into at an offset; the entry then loads."""
    (tmp_path / "probe").mkdir()
    probe = compile_cached(conv_model(), tmp_path / "probe")
    key = only_key(probe)
    model_path, data_path = cache.entry_paths(tmp_path, key)
    for p in (model_path, data_path):
        p.write_bytes(os.urandom(200_000))
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"]
    good = cache.entry_paths(tmp_path / "probe", key)
    assert model_path.read_bytes() == good[0].read_bytes() and data_path.read_bytes() == good[1].read_bytes()
    assert events(compile_cached(conv_model(), tmp_path)) == ["hit"]


def _flip_bit(path, position: float, bit: int = 0) -> None:
    blob = bytearray(path.read_bytes())
    blob[int(position * (len(blob) - 1))] ^= 1 << bit
    path.write_bytes(bytes(blob))


@pytest.mark.checklist(231)
@pytest.mark.parametrize("position", [0.0, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0])
def test_model_cache_bit_flip(tmp_path, position) -> None:
    """One flipped bit anywhere in the model file (magic, key, header, object
    code, checksum) fails the load; nnc recompiles."""
    c, model_path, _ = entry(tmp_path)
    _flip_bit(model_path, position, bit=int(position * 7))
    with pytest.raises(cache.CacheCorrupt):
        cache.load(tmp_path, only_key(c), host())
    _reload_ok(tmp_path)


def _append(n):
    return lambda p: p.write_bytes(p.read_bytes() + os.urandom(n))


WRONG_LENGTH = {"append-1": _append(1), "append-7": _append(7), "append-256": _append(256),
                "drop-1": CORRUPTIONS["drop-last-byte"], "truncate-half": CORRUPTIONS["truncate"],
                "empty": CORRUPTIONS["zero-length"]}  # fmt: skip


@pytest.mark.checklist(232)
@pytest.mark.parametrize("how", list(WRONG_LENGTH))
def test_model_cache_wrong_length(tmp_path, how) -> None:
    c, model_path, _ = entry(tmp_path)
    WRONG_LENGTH[how](model_path)
    with pytest.raises(cache.CacheCorrupt):
        cache.load(tmp_path, only_key(c), host())
    _reload_ok(tmp_path)


@pytest.mark.checklist(233, 234)
@pytest.mark.parametrize("how", ["flip-0.5", "flip-last", *WRONG_LENGTH])
def test_data_cache_corrupt_or_wrong_length(tmp_path, how) -> None:
    """A bad data file never crashes and never loads: the load either returns
    a whole verified entry or fails (here: always fails, since nnc checksums
    the data file too), and the compilation recompiles."""
    c, _, data_path = entry(tmp_path)
    if how.startswith("flip"):
        _flip_bit(data_path, 0.5 if how == "flip-0.5" else 1.0, bit=3)
    else:
        WRONG_LENGTH[how](data_path)
    with pytest.raises(cache.CacheCorrupt):
        cache.load(tmp_path, only_key(c), host())
    _reload_ok(tmp_path)


@pytest.mark.checklist(234)
def test_data_file_of_same_size_from_another_entry(tmp_path) -> None:
    """Two models with equally long weights: swapping only the data files is
    caught by the key and digests bound into the files."""
    ca, _, da = entry(tmp_path, conv_model(seed=0))
    cb, _, db = entry(tmp_path, conv_model(seed=1))
    assert da.stat().st_size == db.stat().st_size
    blob_a = da.read_bytes()
    da.write_bytes(db.read_bytes())
    db.write_bytes(blob_a)
    for c in (ca, cb):
        with pytest.raises(cache.CacheCorrupt):
            cache.load(tmp_path, only_key(c), host())


@pytest.mark.checklist(235)
def test_different_token_never_uses_the_entry(tmp_path) -> None:
    """A token with one bit flipped is another key: a miss, never the stale
    entry; the old entry's files renamed to the new key are rejected (each
    file records its key)."""
    c, model_path, data_path = entry(tmp_path)
    other = bytes([TOKEN[0] ^ 1]) + TOKEN[1:]
    c2 = compile_cached(conv_model(), tmp_path, token=other)
    assert events(c2) == ["miss", "saved"] and only_key(c2) != only_key(c)
    new_model, new_data = cache.entry_paths(tmp_path, only_key(c2))
    new_model.write_bytes(model_path.read_bytes())
    new_data.write_bytes(data_path.read_bytes())
    c3 = compile_cached(conv_model(), tmp_path, token=other)
    assert events(c3) == ["rejected", "saved"]
    check_correct(c3, conv_model())


@pytest.mark.checklist(236)
def test_model_cache_replaced_by_another_models(tmp_path) -> None:
    a, b = conv_model(seed=0), conv_model(seed=1)
    ca, ma, _ = entry(tmp_path, a)
    _, mb, _ = entry(tmp_path, b, token=bytes(32))
    ma.write_bytes(mb.read_bytes())
    c = compile_cached(conv_model(seed=0), tmp_path)
    assert events(c) == ["rejected", "saved"]
    check_correct(c, a)


@pytest.mark.checklist(237)
def test_files_changing_during_loads_never_crash_or_mislead(tmp_path) -> None:
    """A writer keeps replacing the entry's files with garbage, another
    model's files and the good files, in place (not atomically), while
    compilations load: each one hits or recompiles, never fails, and always
    computes this model's results."""
    _, model_path, data_path = entry(tmp_path)
    good = (model_path.read_bytes(), data_path.read_bytes())
    _, om, od = entry(tmp_path, conv_model(seed=3), token=bytes(32))
    other = (om.read_bytes(), od.read_bytes())
    stop = threading.Event()

    def writer():
        choices = [good, other, (os.urandom(len(good[0])), good[1]), (good[0], good[1][: len(good[1]) // 2])]
        k = 0
        while not stop.is_set():
            m, d = choices[k % len(choices)]
            with open(model_path, "r+b" if model_path.exists() else "wb") as f:
                f.write(m)
                f.truncate()
            with open(data_path, "r+b" if data_path.exists() else "wb") as f:
                f.write(d)
                f.truncate()
            k += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        outcomes = set()
        for _ in range(8):
            c = compile_cached(conv_model(), tmp_path)
            assert c.finished
            outcomes.add(events(c)[0])
            check_correct(c, conv_model())
    finally:
        stop.set()
        t.join()
    assert outcomes <= {"hit", "rejected", "miss"}


@pytest.mark.checklist(238)
def test_interrupted_save_never_harms_the_compilation(tmp_path, monkeypatch) -> None:
    """A save that writes only the data file (an incomplete set of files)
    still yields a correct compilation; a later load of that incomplete set
    fails and recompiles."""
    real = cache._write_atomic

    def data_only(path, blob):
        if path.name.endswith(cache.MODEL_SUFFIX):
            raise OSError(errno.EIO, "simulated failure")
        real(path, blob)

    monkeypatch.setattr(cache, "_write_atomic", data_only)
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["miss", "save-failed"]
    check_correct(c, conv_model())
    monkeypatch.undo()
    assert [p.suffix for p in tmp_path.iterdir()] == [cache.DATA_SUFFIX]
    c2 = compile_cached(conv_model(), tmp_path)
    assert events(c2) == ["miss", "saved"]
    check_correct(c2, conv_model())


@pytest.mark.checklist(239)
@pytest.mark.parametrize("change", ["model-missing", "data-missing", "extra-files"])
def test_loading_with_the_wrong_set_of_files(tmp_path, change) -> None:
    c, model_path, data_path = entry(tmp_path)
    key = only_key(c)
    if change == "model-missing":
        model_path.unlink()
        with pytest.raises(cache.CacheMiss):
            cache.load(tmp_path, key, host())
        assert events(compile_cached(conv_model(), tmp_path)) == ["miss", "saved"]
    elif change == "data-missing":
        data_path.unlink()
        with pytest.raises(cache.CacheCorrupt):
            cache.load(tmp_path, key, host())
        _reload_ok(tmp_path)
    else:  # files that are not part of the entry are never read
        (tmp_path / f"nnc-{key}.data2").write_bytes(b"junk")
        (tmp_path / f".nnc-{key}.model.123.tmp").write_bytes(b"junk")
        assert events(compile_cached(conv_model(), tmp_path)) == ["hit"]


@pytest.mark.checklist(240)
def test_unwritable_and_unreadable_files(tmp_path, monkeypatch) -> None:
    """Saving where files cannot be written still gives a correct
    compilation, and a later load misses; a model file that cannot be read
    (write-only) fails the load and nnc recompiles."""
    monkeypatch.setattr(cache.tempfile, "mkstemp", _load_raises(PermissionError(errno.EACCES, "Permission denied")))
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["miss", "save-failed"]
    check_correct(c, conv_model())
    monkeypatch.undo()
    assert events(compile_cached(conv_model(), tmp_path)) == ["miss", "saved"]
    real_open = open

    def write_only(path, mode="r", *a, **k):
        if str(path).endswith(cache.MODEL_SUFFIX) and "r" in mode:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr(cache, "open", write_only, raising=False)
    c = compile_cached(conv_model(), tmp_path)
    assert events(c) == ["rejected", "saved"]
    check_correct(c, conv_model())


# -- the deadline covers the cache (C242) -----------------------------------------------------------------


@pytest.mark.checklist(242)
def test_deadline_covers_a_slow_cache_lookup(tmp_path, monkeypatch, compiles) -> None:
    """A lookup that uses up the compilation's time: MISSED_DEADLINE, and the
    fallback compilation is not even started."""

    def slow_miss(*a, **k):
        time.sleep(0.3)
        raise cache.CacheMiss("nothing there")

    monkeypatch.setattr(cache, "load", slow_miss)
    c = nnc.Compilation.for_devices(conv_model(seed=21), [cpu()])
    c.set_caching(tmp_path, TOKEN)
    c.set_timeout(100_000_000)
    with raises(RC.MISSED_DEADLINE_PERSISTENT, FINISH):
        c.finish()
    assert compiles == [] and c.failed


@pytest.mark.checklist(242)
def test_deadline_covers_a_slow_cache_hit(tmp_path, monkeypatch) -> None:
    entry(tmp_path)
    real = cache.load

    def slow_hit(*a, **k):
        time.sleep(0.3)
        return real(*a, **k)

    monkeypatch.setattr(cache, "load", slow_hit)
    c = nnc.Compilation.for_devices(conv_model(), [cpu()])
    c.set_caching(tmp_path, TOKEN)
    c.set_timeout(100_000_000)
    with raises(RC.MISSED_DEADLINE_PERSISTENT, FINISH):
        c.finish()
    ok = nnc.Compilation.for_devices(conv_model(), [cpu()])
    ok.set_caching(tmp_path, TOKEN)
    ok.set_timeout(10_000_000_000)
    ok.finish()
    assert events(ok) == ["hit"]


def test_file_rewritten_after_its_check_does_not_change_what_runs(tmp_path, monkeypatch) -> None:
    """The bytes verified are the bytes that run: the data file is replaced
    in place by another model's, right after its digest was checked (the
    window a mapping left open), and the hit still computes this model."""
    _, _, data_path = entry(tmp_path)
    _, _, other_data = entry(tmp_path, conv_model(seed=3), token=bytes(32))
    swapped = other_data.read_bytes()
    real = cache._check_file

    def check_then_rewrite(blob, magic, key, what):
        result = real(blob, magic, key, what)
        if what == "data":
            with open(data_path, "r+b") as f:
                f.write(swapped[: len(blob)])
        return result

    monkeypatch.setattr(cache, "_check_file", check_then_rewrite)
    c = compile_cached(conv_model(), tmp_path)
    assert events(c)[0] == "hit"
    check_correct(c, conv_model())
