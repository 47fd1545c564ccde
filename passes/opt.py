"""``nnc-opt``: run nnc passes on an IR file, like ``xdsl-opt``.

    nnc-opt FILE.mlir -p pass1,pass2      print the result as MLIR
    nnc-opt FILE.mlir --pipeline          the whole default pipeline
    nnc-opt FILE.mlir -p ... --emit llvm  print LLVM IR (input must reach llvm)
    nnc-opt FILE.mlir --split-input-file  each ``// -----`` chunk on its own
    nnc-opt --where OPERATION             where an operation lives (:mod:`nnc.where`)

Reads standard input when FILE is ``-`` or absent.  Exits 1 with a one-line
``error:`` message on a parse, verification or pass error (no traceback): the
negative lit tests (``lit/passes/*-invalid.mlir``) check those messages.  With
``--split-input-file`` every chunk runs, even after one fails (as in
``mlir-opt``), so that one file can hold many invalid cases; the exit status
is 1 when any chunk failed.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import TextIO

from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    PassFailedException,
    VerifyException,
)

from nnc.passes.pipeline import (
    DEFAULT_PIPELINE,
    PASSES,
    StageTiming,
    context,
    format_timings,
    run_passes,
    split_pipeline,
    to_llvm_ir,
)
from nnc.passes.xdsl_compat import failing_operation

#: the separator of --split-input-file chunks (MLIR's)
SPLIT_MARKER = re.compile(r"^// -----\s*$", re.MULTILINE)
#: what a bad input may raise: each becomes an ``error:`` line
#: (xDSL's own passes raise NotImplementedError for input they do not handle)
INPUT_ERRORS = (ParseError, PassFailedException, VerifyException, DiagnosticException, KeyError, NotImplementedError)


def split_input(text: str) -> list[str]:
    """The chunks of ``text`` between ``// -----`` lines, each padded with the
    blank lines before it so that parse errors give line numbers of the file."""
    chunks, start, line = [], 0, 0
    for m in SPLIT_MARKER.finditer(text):
        chunks.append("\n" * line + text[start : m.start()])
        line += text.count("\n", start, m.end())
        start = m.end()
    chunks.append("\n" * line + text[start:])
    return chunks


def _message(e: BaseException) -> str:
    """One line for ``e``.  A parse error gives ``file:line:col: message``;
    xDSL's verifier attaches the whole module, with the failing operation
    underlined, as a note: only that operation's name is kept, in front of
    the message."""
    if isinstance(e, KeyError) and e.args:
        return str(e.args[0])  # (KeyError's str() quotes its argument)
    if isinstance(e, ParseError):
        where = e.span.get_location()
        return f"{where.file}:{where.line}:{where.col}: {e.msg}"
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    name = failing_operation(e)
    if name is None or text.startswith(name):
        return text
    return f"{name}: {text}"


def process(
    text: str, name: str, passes: list[str], emit: str, out: TextIO, timings: list[StageTiming] | None = None
) -> bool:
    """Parse, verify, run ``passes`` and verify again; print the result to
    ``out`` or a one-line error to stderr.  Returns whether it succeeded.
    With ``timings``, each stage's :class:`StageTiming` is appended to it."""
    ctx = context()
    try:
        start = time.perf_counter()
        module = Parser(ctx, text, name).parse_module()
        module.verify()
        if timings is not None:
            timings.append(StageTiming("parse+verify", time.perf_counter() - start))
        run_passes(module, passes, ctx, timings)
        start = time.perf_counter()
        module.verify()
        if timings is not None:
            timings.append(StageTiming("verify", time.perf_counter() - start))
        start = time.perf_counter()
        result = to_llvm_ir(module) if emit == "llvm" else None
        if timings is not None and result is not None:
            timings.append(StageTiming("to-llvm-ir", time.perf_counter() - start))
    except INPUT_ERRORS as e:
        print(f"nnc-opt: error: {_message(e)}", file=sys.stderr)
        return False
    if result is not None:
        out.write(result + "\n")
    else:
        Printer(stream=out).print_op(module)
        out.write("\n")
    return True


def parser() -> argparse.ArgumentParser:
    """nnc-opt's arguments (:mod:`nnc.opt` adds ``--where``, which looks
    above this layer)."""
    ap = argparse.ArgumentParser(prog="nnc-opt", description="Run nnc passes on an MLIR file.")
    ap.add_argument("file", nargs="?", default="-", help="input .mlir file (- for stdin)")
    ap.add_argument("-p", "--passes", default="", help='comma-separated pass names, each with options: name{opt="value"}')
    ap.add_argument("--pipeline", action="store_true", help="run the default pipeline")
    ap.add_argument("--emit", choices=("mlir", "llvm"), default="mlir")
    ap.add_argument("--split-input-file", action="store_true", help="run each '// -----' chunk on its own")
    ap.add_argument("--list-passes", action="store_true")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--timings", action="store_true", help="print each pass's wall time and op counts to stderr")
    return ap


def main(argv: list[str] | None = None) -> int:
    return run(parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run nnc-opt with parsed arguments; the exit status."""
    if args.list_passes:
        print("\n".join(sorted(PASSES)))
        return 0
    try:
        names = list(DEFAULT_PIPELINE) if args.pipeline else split_pipeline(args.passes)
    except ArgSpecParseError as e:
        print(f"nnc-opt: error: bad pass pipeline {args.passes!r}: {str(e).splitlines()[-1].strip()}", file=sys.stderr)
        return 1
    try:
        text = sys.stdin.read() if args.file == "-" else open(args.file).read()
    except OSError as e:
        print(f"nnc-opt: {e}", file=sys.stderr)
        return 1
    chunks = split_input(text) if args.split_input_file else [text]
    out = sys.stdout if args.output == "-" else open(args.output, "w")
    ok = True
    for k, chunk in enumerate(chunks):
        if k:
            out.write("// -----\n")
            out.flush()
        timings: list[StageTiming] | None = [] if args.timings else None
        ok = process(chunk, args.file, names, args.emit, out, timings) and ok
        out.flush()
        if timings:
            print(format_timings(timings), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
