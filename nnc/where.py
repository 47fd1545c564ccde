"""Where an operation lives: ``nnc-opt --where OPERATION`` (:mod:`nnc.opt`).

An operation is spread over several places by design: its record in the
operation table, its rule (validation and shape inference), its lowering,
the vector kernels the lowering reaches, the TFLite converters that produce
it and the lit tests that exercise it.  The registries (``RULES``,
``LOWERINGS``, ``CONVERTERS``) know the functions; this module turns them
into ``path:line`` locations, so that a reader (or an editor's jump-to) finds
every place without grepping.

Kernels are found by following the lowering's calls: the functions its code
names (``co_names``, nested functions included) that are nnc's own, to a
small depth; those defined in ``nnc.passes.kernels`` are listed.
"""

from __future__ import annotations

import difflib
import inspect
import os
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from nnc.dialects.optable import SPECS
from nnc.enums import OperationType

#: how many calls deep the search for kernels follows nnc's own functions
_KERNEL_DEPTH = 5
#: the modules of kernel builders (``vector`` and ``tiles`` are the machinery
#: every kernel uses: listing them would say nothing about the operation)
_KERNEL_MODULES = ("nnc.passes.kernels.f32", "nnc.passes.kernels.q8", "nnc.passes.kernels.rows")


@dataclass(frozen=True)
class Place:
    """One place an operation lives: what it is and ``path:line``."""

    what: str
    path: str
    line: int
    name: str = ""

    def __str__(self) -> str:
        return f"{self.what:<10} {self.path}:{self.line}" + (f"  {self.name}" if self.name else "")


class UnknownOperation(ValueError):
    """The name is not an NNAPI operation (the message suggests close names)."""


def operation(name: str) -> OperationType:
    """The OperationType named ``name`` (any case), or UnknownOperation."""
    try:
        return OperationType[name.upper()]
    except KeyError:
        near = difflib.get_close_matches(name.upper(), [t.name for t in OperationType], n=3)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        raise UnknownOperation(f"unknown operation {name!r}{hint}") from None


def _shown(path: str) -> str:
    """``path`` relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _place(what: str, fn: Callable) -> Place:
    fn = inspect.unwrap(fn)
    lines, line = inspect.getsourcelines(fn)
    # the ``def`` line, below any decorators
    line += next((k for k, text in enumerate(lines) if text.lstrip().startswith(("def ", "async def "))), 0)
    return Place(what, _shown(inspect.getsourcefile(fn) or "?"), line, getattr(fn, "__qualname__", ""))


def _record(op: OperationType) -> Place:
    """The line of ``op``'s record in the operation table."""
    from nnc.dialects import optable

    path = inspect.getsourcefile(optable) or ""
    pattern = re.compile(rf"_spec\(\s*_T\.{op.name}\b")
    for k, text in enumerate(Path(path).read_text().splitlines(), 1):
        if pattern.search(text):
            return Place("record", _shown(path), k)
    return Place("record", _shown(path), 1)


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _code_objects(c)


def _ours(obj: object) -> bool:
    return getattr(obj, "__name__" if inspect.ismodule(obj) else "__module__", "").startswith("nnc.")


def _called(fn: Callable) -> Iterator[Callable]:
    """nnc's functions that ``fn``'s code names: globals of its module, and
    attributes of nnc modules it names (``q8.depthwise``)."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    scope = getattr(fn, "__globals__", {})
    for c in _code_objects(code):
        names = c.co_names
        modules = [scope[n] for n in names if inspect.ismodule(scope.get(n)) and _ours(scope[n])]
        for name in names:
            for target in (scope.get(name), *(getattr(m, name, None) for m in modules)):
                if inspect.isfunction(target) and _ours(target):
                    yield target


def kernels(fn: Callable, depth: int = _KERNEL_DEPTH) -> list[Callable]:
    """The kernel builders (:data:`_KERNEL_MODULES`) that ``fn`` reaches through
    nnc's own calls, at most ``depth`` calls deep, in the order found."""
    seen: dict[Callable, None] = {}
    found: dict[Callable, None] = {}
    frontier = [fn]
    for _ in range(depth):
        nxt = []
        for f in frontier:
            for g in _called(f):
                if g in seen:
                    continue
                seen[g] = None
                if g.__module__ in _KERNEL_MODULES:
                    found[g] = None
                nxt.append(g)
        frontier = nxt
    return list(found)


#: lowering modules of shared builders, not of any operation's forms
_SHARED_LOWERING = ("nnc.passes.lowering.base", "nnc.passes.lowering.quant", "nnc.passes.lowering.float16")


def twins(fn: Callable) -> list[Callable]:
    """The functions in other lowering modules that ``fn`` calls directly:
    the operation's other forms (quantised twins), not the shared builders."""
    fn = inspect.unwrap(fn)
    own = fn.__module__
    found = dict.fromkeys(
        g for g in _called(fn)
        if g.__module__.startswith("nnc.passes.lowering.") and g.__module__ not in (own, *_SHARED_LOWERING)
    )  # fmt: skip
    return list(found)


def _lit_files(op: OperationType, root: Path) -> list[Place]:
    """Lit test files naming ``nnapi.<op>``, at the first line that does."""
    pattern = re.compile(rf"\bnnapi\.{op.name.lower()}\b")
    places = []
    for path in sorted(root.rglob("*.mlir")):
        for k, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(text):
                places.append(Place("lit", _shown(str(path)), k))
                break
    return places


def _lit_root() -> Path | None:
    """The repository's ``lit/`` beside the packages, if this is a checkout."""
    from nnc import passes

    here = Path(inspect.getsourcefile(passes) or "").resolve().parent
    for candidate in (here.parent / "lit", here.parent.parent / "lit"):
        if candidate.is_dir():
            return candidate
    return None


def places(name: str) -> list[Place]:
    """Every place operation ``name`` lives, in pipeline order: record,
    rule, lowering (and its forms in other lowering modules), its limits,
    kernels, TFLite converters, lit tests."""
    op = operation(name)
    from nnc import tflite
    from nnc.dialects.rules import RULES
    from nnc.passes.lowering import LOWERINGS

    found = [_record(op)]
    if op in RULES:
        found.append(_place("rule", RULES[op]))
    if op in LOWERINGS:
        lowering = LOWERINGS[op]
        found.append(_place("lowering", lowering.fn))
        if lowering.check is not None:
            found.append(_place("limit", lowering.check))
        found += [_place("lowering", f) for f in twins(lowering.fn)]
        found += [_place("kernel", k) for k in kernels(lowering.fn)]
    converters = {b: tflite.CONVERTERS[b] for b in SPECS[op].tflite if b in tflite.CONVERTERS}
    found += [_place(f"tflite {b}", fn) for b, fn in converters.items()]
    root = _lit_root()
    if root is not None:
        found += _lit_files(op, root)
    return found
