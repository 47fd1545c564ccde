"""nnc's model file format (``.nnc``): a finished NNAPI model as JSON.

Layout (format version 1)::

    {"format": "nnc-model", "version": 1,
     "operands": [{"type": "TENSOR_FLOAT32", "dimensions": [1, 2], "scale": 0.0,
                   "zero_point": 0, "channel_quant": null | {"scales": [...], "channel_dim": d},
                   "lifetime": "CONSTANT_COPY" | ..., "value": base64 | null,
                   "name": "optional label"}],
     "operations": [{"type": "ADD", "inputs": [0, 1, 2], "outputs": [3]}],
     "inputs": [0, 1], "outputs": [3], "relaxed": false,
     "input_names": ["image", ...], "output_names": [...],   (optional)
     "subgraphs": [<model objects referenced by SUBGRAPH operands>]}

Values are the operand's raw little-endian bytes.  :func:`load` rebuilds the
model through the public builder, so a corrupt or invalid file is reported as
:class:`~nnc.errors.BadDataError` by the same checks as any other model.
"""

from __future__ import annotations

import base64
import json
import mmap
import os
import stat
import time
from collections.abc import Callable, Sized
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import numpy as np

from nnc.enums import Lifetime, OperandType, OperationType
from nnc.errors import BadDataError, NNError, UnexpectedNullError
from nnc.runtime.chunks import mapped_read_only

if TYPE_CHECKING:
    from nnc.model import Model

_C = TypeVar("_C", bound=Sized)  # what a file reader gives: bytes, an mmap

FORMAT = "nnc-model"
VERSION = 1
_LOAD = "nnc.Model.load"


def to_dict(model: Model) -> dict[str, Any]:
    subgraphs: list[Model] = []
    operands = []
    for op in model.operands:
        entry: dict[str, Any] = {
            "type": op.type.name,
            "dimensions": None if op.dims is None else list(op.dims),
            "scale": op.scale,
            "zero_point": op.zero_point,
            "channel_quant": None
            if op.channel_quant is None
            else {"scales": list(op.channel_quant[0]), "channel_dim": op.channel_quant[1]},
            "lifetime": op.lifetime.name,
            "value": None,
        }
        if op.value is not None:
            entry["value"] = base64.b64encode(np.ascontiguousarray(op.value).tobytes()).decode()
        if op.subgraph is not None:
            subgraphs.append(op.subgraph)
            entry["value"] = len(subgraphs) - 1
        operands.append(entry)
    return {
        "format": FORMAT,
        "version": VERSION,
        "operands": operands,
        "operations": [
            {"type": OperationType(o.type).name, "inputs": o.inputs, "outputs": o.outputs} for o in model.operations
        ],
        "inputs": model.inputs,
        "outputs": model.outputs,
        "relaxed": model.relaxed,
        **{key: list(names) for key in ("input_names", "output_names") if (names := getattr(model, key, None))},
        **({"state": [list(pair) for pair in model.state]} if model.state else {}),
        "subgraphs": [to_dict(s) for s in subgraphs],
    }


def save(model: Model, path: str | os.PathLike) -> None:
    """Write ``model`` (finished or not) atomically to ``path``."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(to_dict(model), f)
    os.replace(tmp, path)


def from_dict(data: Any, new_model: Callable[[], Model]) -> Model:
    """Rebuild and finish a model; any malformation is BadDataError."""
    try:
        return _from_dict(data, new_model)
    except NNError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise BadDataError(_LOAD, f"malformed model file: {type(e).__name__}: {e}") from None


def _from_dict(data: Any, new_model: Callable[[], Model]) -> Model:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BadDataError(_LOAD, "not an nnc model file")
    if data.get("version") != VERSION:
        raise BadDataError(_LOAD, f"unsupported model file version {data.get('version')!r}")
    subgraphs = [_from_dict(s, new_model) for s in data.get("subgraphs", [])]
    model = new_model()
    for entry in data["operands"]:
        t = OperandType[entry["type"]]
        model.add_operand(t, entry["dimensions"], entry["scale"], entry["zero_point"])
    for k, entry in enumerate(data["operands"]):
        cq = entry.get("channel_quant")
        if cq:
            model.set_operand_symm_per_channel_quant_params(k, cq["scales"], cq["channel_dim"])
        lifetime = Lifetime[entry["lifetime"]]
        if lifetime in (Lifetime.CONSTANT_COPY, Lifetime.CONSTANT_REFERENCE):
            raw = base64.b64decode(entry["value"], validate=True)
            model.set_operand_value(k, raw)
        elif lifetime == Lifetime.NO_VALUE:
            model.set_operand_value(k, None)
        elif lifetime == Lifetime.SUBGRAPH:
            model.set_operand_value_from_model(k, subgraphs[int(entry["value"])])
    for o in data["operations"]:
        model.add_operation(OperationType[o["type"]], o["inputs"], o["outputs"])
    model.identify_inputs_and_outputs(data["inputs"], data["outputs"])
    model.relax_computation_float32_to_float16(bool(data.get("relaxed", False)))
    model.finish()
    for key, ios in (("input_names", model.inputs), ("output_names", model.outputs)):
        names = data.get(key)
        if names is not None:
            if not isinstance(names, list) or len(names) != len(ios) or not all(isinstance(n, str) for n in names):
                raise BadDataError(_LOAD, f"{key} must be a list of {len(ios)} strings")
            setattr(model, key, names)
    if data.get("state") is not None:
        model.state = _state_pairs(data["state"], len(model.inputs), len(model.outputs))
    return model


def _state_pairs(pairs: Any, n_in: int, n_out: int) -> list[tuple[int, int | None]]:
    """A model file's ``state``: [input position, output position or null]
    pairs, each input and output at most once."""
    ok = isinstance(pairs, list) and all(
        isinstance(p, list) and len(p) == 2 and type(p[0]) is int and 0 <= p[0] < n_in
        and (p[1] is None or type(p[1]) is int and 0 <= p[1] < n_out) for p in pairs
    )  # fmt: skip
    if not ok or len({p[0] for p in pairs}) != len(pairs) or len({p[1] for p in pairs if p[1] is not None}) != len(
        [p for p in pairs if p[1] is not None]
    ):
        raise BadDataError(_LOAD, f"state must be distinct [input, output or null] positions of the "
                                  f"{n_in} inputs and {n_out} outputs")  # fmt: skip
    return [(p[0], p[1]) for p in pairs]


#: A file last changed less than this long before it was read may be changed
#: again without its timestamps moving (file systems stamp with a coarse
#: clock), so it gets no identity: git's rule for "racily clean" entries.
RACY_NS = 2_000_000_000

#: What identifies the bytes of a file read whole: (device, inode, size,
#: modification time, status change time), each in its ``os.stat`` unit.
FileIdentity = tuple[int, int, int, int, int]


def _identity(st: os.stat_result) -> FileIdentity:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_regular_file(path: str) -> tuple[bytes, FileIdentity | None]:
    """The contents of the regular file ``path`` (OSError as ``open`` raises
    it; ValueError for a path that is not one) and their identity, or None
    when the file may not be told apart from a later version by its status.

    The identity lets a reader recognise a file it has read before without
    reading or hashing it again (:attr:`nnc.Model.source_key`).  It is given
    only when the file's status is the same before and after the read (no
    write raced it) and the file last changed at least :data:`RACY_NS` before
    the read started.  Then any later write gives another identity: it moves
    the status change time, which no system call sets back (``utime`` sets
    the modification time and moves the change time too), and a replaced
    file has another inode or another change time.  Git trusts a file's
    status in the same way (``core.trustctime``), Python its sources' size and
    modification time."""
    return _open_regular(path, lambda f, size: f.read())


def map_regular_file(path: str) -> tuple[mmap.mmap | bytes, FileIdentity | None]:
    """As :func:`read_regular_file`, with the contents mapped read-only
    instead of read (an empty file: ``b""``, which cannot be mapped).

    Why map: a model's weights are most of its file, and views of a mapping
    are the file's pages, shared with the page cache, read from disk only
    when touched and dropped under memory pressure rather than swapped, where
    a read copies them all into the process.  The price is the mapping's:
    it shows later writes to the file, and touching a page a truncation
    removed faults (SIGBUS), so the file must not be changed in place while
    what was read from it lives (replacing it with ``os.replace`` is safe:
    the mapping keeps the old inode).  The mapping holds a duplicate of the
    file descriptor until it is unmapped (when its last view is garbage)."""
    return _open_regular(path, lambda f, size: _map(f, size) if size else b"")


def _map(f: BinaryIO, size: int) -> mmap.mmap:
    """``f`` mapped read-only, its pages releasable once read
    (:func:`nnc.runtime.chunks.release_pages`)."""
    return mapped_read_only(mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ))


def _open_regular(path: str, contents: Callable[[BinaryIO, int], _C]) -> tuple[_C, FileIdentity | None]:
    """``contents(file, size)`` of the regular file ``path`` and its identity
    (:func:`read_regular_file`)."""
    started = time.time_ns()
    with open(path, "rb") as f:
        before = os.fstat(f.fileno())
        if not stat.S_ISREG(before.st_mode):
            raise ValueError(f"{path} is not a regular file")
        data = contents(f, before.st_size)
        after = os.fstat(f.fileno())
    key = _identity(before)
    stable = key == _identity(after) and len(data) == before.st_size
    old_enough = max(before.st_mtime_ns, before.st_ctime_ns) <= started - RACY_NS
    return data, key if stable and old_enough else None


def read_identified_source(source: object, fn: str) -> tuple[bytes, str, FileIdentity | None]:
    """(contents, name, identity) of a model ``source``: a path (str, bytes or
    os.PathLike) naming a regular file (identity: :func:`read_regular_file`),
    or a binary file object (anything with ``read``; it is read, never
    closed; no identity).  A bare int is refused, not
    taken as a file descriptor: reading one to EOF would block forever on a
    pipe or socket, and wrapping it would close the caller's descriptor.
    None is UNEXPECTED_NULL, anything else (or an unreadable file) BAD_DATA."""
    if source is None:
        raise UnexpectedNullError(fn, "the model file is null")
    if hasattr(source, "read"):
        try:
            raw = source.read()
        except (OSError, ValueError) as e:
            raise BadDataError(fn, f"cannot read the model file object: {e}") from None
        if not isinstance(raw, bytes | bytearray):
            raise BadDataError(fn, f"the file object must be opened in binary mode (read() gave {type(raw).__name__})")
        return bytes(raw), getattr(source, "name", "<file object>"), None
    if not isinstance(source, str | bytes | os.PathLike):
        raise BadDataError(fn, f"expected a path or a binary file object, got {type(source).__name__}")
    return read_path(source, fn)


def read_path(source: str | bytes | os.PathLike, fn: str) -> tuple[bytes, str, FileIdentity | None]:
    """(contents, path, identity) of the regular file ``source`` names
    (:func:`read_regular_file`); BAD_DATA if it cannot be read or is not a
    regular file (never opened then: opening a FIFO waits for a writer)."""
    return _from_path(source, fn, read_regular_file)


def map_path(source: str | bytes | os.PathLike, fn: str) -> tuple[mmap.mmap | bytes, str, FileIdentity | None]:
    """As :func:`read_path`, the contents mapped (:func:`map_regular_file`)."""
    return _from_path(source, fn, map_regular_file)


def _from_path(source: str | bytes | os.PathLike, fn: str, reader: Callable[[str], tuple[_C, FileIdentity | None]]
               ) -> tuple[_C, str, FileIdentity | None]:  # fmt: skip
    try:
        path = os.fsdecode(os.fspath(source))
        regular = stat.S_ISREG(os.stat(path).st_mode)
        if regular:
            raw, identity = reader(path)
            return raw, path, identity
    except OSError as e:
        raise BadDataError(fn, f"cannot read {source!r}: {e.strerror}") from None
    except (TypeError, ValueError) as e:  # an embedded NUL, an undecodable name, a swapped file, ...
        raise BadDataError(fn, f"invalid path {source!r}: {e}") from None
    raise BadDataError(fn, f"{path} is not a regular file")


def load(source: object, new_model: Callable[[], Model]) -> Model:
    """Read and validate a model file (see :func:`read_identified_source`), building it
    with ``new_model()`` (the :class:`nnc.Model` class: this module sits below
    it, which saves and loads through here)."""
    raw, path, identity = read_identified_source(source, _LOAD)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadDataError(_LOAD, f"{path} is not a valid model file: {e}") from None
    model = from_dict(data, new_model)
    if identity is not None and model.finished:
        model.source_key = ("nnc-model-file", identity)
    return model

