"""LLVM IR text split by function into parts LLVM compiles independently.

LLVM's stage of a large model (MobileNetV2: 0.9 s optimising, 0.7 s
generating code, one core) is almost all per-function work, so the driver
runs it over the worker processes (:mod:`nnc.runtime.worker`) at once: the
module's functions are split into parts, each part is optimised and emitted
on its own, and the objects are loaded together
(:func:`nnc.runtime.jit.bundle_objects`).

What must not be lost is the interprocedural optimisation that makes the
code fast.  The outlined kernels (``nnc_gemm_*``, ``nnc_dw_*``, ...) are
``noinline``, but with every caller in sight LLVM's IPSCCP propagates the
constant strides and sizes their call sites pass into their bodies (loads at
immediate offsets, loops with constant trip counts) and drops dead
arguments; a kernel compiled apart from its callers keeps generic code.  So
a function never leaves the direct callees it passes a constant (nor the
callers of an internal function, nor the other users of a mutable internal
global): the parts are whole connected components of that graph, packed
largest first into the emptiest part.  A callee that every call passes
only values computed at run time (a serial loop nest outlined from
``main`` by ``nnc-outline-loops``: buffers, at offsets LLVM would not
propagate anyway, and ``noinline``) has nothing to gain and may go to
another part.  A function reached only through its address (a
parallel loop's body, ``nnc_par_N``, handed to ``nnc_parallel_for``) has
callers LLVM cannot see anyway, and is the cut.  Each part keeps the
internal constants it reads (copies: they are constant), declares the
functions of other parts it takes the address of, and exports those that
other parts name, so every function's code is what the whole module gives
it (checked by benchmarks/llvm_bench.py ``--compare``).

The text is what :func:`nnc.passes.pipeline.to_llvm_ir` prints (one global
per line, ``define`` ... ``}`` blocks); anything else at the top level
(metadata, attribute groups, comdats) keeps the module whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: a global symbol reference (llvmlite quotes every name), and ``(`` when it
#: is the callee of a direct call (an address passed on is followed by ``,``)
_SYMBOL = re.compile(r'@"([^"]*)"(\(?)')
#: top-level lines every part repeats
_HEADER = ("target ", "source_filename", ";")
#: linkages of symbols only their own module sees
_LOCAL = ("internal", "private")


@dataclass(frozen=True)
class Part:
    """One independently compiled piece: its LLVM IR text and the functions
    that keep external linkage (the entry points, and what other parts call
    or take the address of)."""

    ir_text: str
    exported: tuple[str, ...]
    lines: int


@dataclass
class _Global:
    name: str
    text: str
    #: internal constant: every part that reads it gets its own copy
    copyable: bool
    refs: set[str]


@dataclass
class _Function:
    name: str
    lines: list[str]
    internal: bool
    refs: set[str]
    #: direct callees passed a constant (or a symbol) at some call site
    callees: set[str]


#: a direct call's argument list (nnc's printer writes no nested parentheses in it)
_CALL_ARGS = re.compile(r'@"([^"]*)"\(([^()]*)\)')


def _symbols(text: str) -> tuple[set[str], set[str]] | None:
    """(every symbol ``text`` names, the direct callees passed a constant
    at some call site), None if it names one unquoted."""
    found = _SYMBOL.findall(text)
    if len(found) != text.count("@"):
        return None
    called = {name for name, call in found if call}
    fed = {m.group(1) for m in _CALL_ARGS.finditer(text) if _has_constant(m.group(2))}
    # a call whose arguments this does not read keeps its callee, to be safe
    plain = {m.group(1) for m in _CALL_ARGS.finditer(text)}
    return {name for name, _ in found}, {c for c in called if c in fed or c not in plain}


def _has_constant(args: str) -> bool:
    """Whether an LLVM argument list (``ptr %"v1", i64 4``) passes something
    other than SSA values."""
    for arg in args.split(","):
        words = arg.split()
        if words and not words[-1].startswith("%"):
            return True
    return False


def _own_name(line: str) -> str | None:
    m = _SYMBOL.search(line)
    return None if m is None else m.group(1)


def _parse(ir_text: str) -> tuple[list[str], list[_Global], list[str], list[_Function]] | None:
    """(header lines, globals, declarations, definitions), or None for text
    this module does not know how to split."""
    header: list[str] = []
    globs: list[_Global] = []
    decls: list[str] = []
    funcs: list[_Function] = []
    lines = ir_text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("define"):
            end = k + 1
            while end < len(lines) and lines[end] != "}":
                end += 1
            if end == len(lines):
                return None
            name = _own_name(line)
            symbols = _symbols("\n".join(lines[k + 1 : end]))
            if name is None or symbols is None:
                return None
            local = any(w in _LOCAL for w in line.split("@", 1)[0].split())
            funcs.append(_Function(name, lines[k : end + 1], local, *symbols))
            k = end + 1
            continue
        if line.startswith("declare"):
            decls.append(line)
        elif line.startswith("@"):
            name = _own_name(line)
            init = line.split("=", 1)[1] if "=" in line else ""
            symbols = _symbols(init)
            if name is None or symbols is None:
                return None
            rest = init.split()
            local = bool(rest) and rest[0] in _LOCAL
            globs.append(_Global(name, line, local and "constant" in rest[:4], symbols[0]))
        elif not line.strip() or line.startswith(_HEADER):
            header.append(line)
        else:
            return None
        k += 1
    return header, globs, decls, funcs


class _Components:
    """Union-find over function names."""

    def __init__(self, names: list[str]):
        self.parent = {n: n for n in names}

    def find(self, n: str) -> str:
        while self.parent[n] != n:
            self.parent[n] = self.parent[self.parent[n]]
            n = self.parent[n]
        return n

    def union(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


def split_module(ir_text: str, max_parts: int, min_lines: int, entry: tuple[str, ...] = ("nnc_run",)) -> list[Part]:
    """``ir_text`` as at most ``max_parts`` parts of at least about
    ``min_lines`` lines of function bodies each (one part, the module as it
    is, when it is too small, cannot be cut, or is not text this module
    reads).  ``entry``: the functions that stay external wherever they are."""
    whole = [Part(ir_text, entry, ir_text.count("\n"))]
    parsed = _parse(ir_text) if max_parts > 1 else None
    if parsed is None:
        return whole
    header, globs, decls, funcs = parsed
    if any(g.refs for g in globs):  # an initialiser naming a symbol: not emitted by nnc, not split
        return whole
    total = sum(len(f.lines) for f in funcs)
    count = min(max_parts, total // max(min_lines, 1))
    if count < 2:
        return whole
    by_name = {f.name: f for f in funcs}
    comps = _Components(list(by_name))
    for f in funcs:
        for callee in f.callees:
            if callee in by_name:
                comps.union(f.name, callee)
        for ref in f.refs:
            if ref in by_name and by_name[ref].internal:
                comps.union(f.name, ref)
    home = {g.name: g for g in globs if not g.copyable}  # one definition: its users stay together
    users: dict[str, str] = {}
    for f in funcs:
        for ref in f.refs:
            if ref in home:
                if ref in users:
                    comps.union(f.name, users[ref])
                users[ref] = f.name
    groups: dict[str, list[_Function]] = {}
    for f in funcs:
        groups.setdefault(comps.find(f.name), []).append(f)
    if len(groups) < 2:
        return whole
    bins: list[list[_Function]] = [[] for _ in range(count)]
    load = [0] * count
    for group in sorted(groups.values(), key=lambda g: -sum(len(f.lines) for f in g)):
        k = load.index(min(load))
        bins[k].extend(group)
        load[k] += sum(len(f.lines) for f in group)
    bins = [b for b in bins if b]  # fewer groups than parts
    if len(bins) < 2:
        return whole
    where = {f.name: k for k, b in enumerate(bins) for f in b}
    entry_bin = next((where[e] for e in entry if e in where), 0)
    # A global nobody's code reads (an exported layout) lives with the entry.
    global_bin = {g.name: where[users[g.name]] if g.name in users else entry_bin for g in home.values()}
    referenced_from = [set[str]() for _ in bins]
    for f in funcs:
        for ref in f.refs:
            if ref in by_name and where[ref] != where[f.name]:
                referenced_from[where[ref]].add(ref)
    parts = []
    for k, b in enumerate(bins):
        refs = set().union(*(f.refs for f in b))
        text = [*header]
        text += [g.text for g in globs if (g.copyable and g.name in refs) or (not g.copyable and global_bin[g.name] == k)]
        text += decls
        text += ["declare" + by_name[n].lines[0][len("define") :] for n in sorted(refs) if n in by_name and where[n] != k]
        for f in b:
            text += f.lines
        exported = tuple(dict.fromkeys([*(e for e in entry if e in where and where[e] == k), *sorted(referenced_from[k])]))
        parts.append(Part("\n".join(text) + "\n", exported, sum(len(f.lines) for f in b)))
    return parts
