"""lit test format for nnc's IR tests: nnc-opt without an interpreter start per command.

Every RUN line of lit/ has the form ``[not] nnc-opt ARGS [2>&1] | filecheck
ARGS`` (some join two with ``&&``).  Run by lit's shell, each ``nnc-opt``
starts Python and imports xDSL and every pass: about a second of CPU, most
of the lit suite's time.  This format imports nnc-opt once, in the lit
process, and runs each ``nnc-opt`` command in a child *forked* from it: a
separate process with the command's argv, its own stdout/stderr (``2>&1``
as written) and exit status, calling the same ``main`` the ``nnc-opt``
script calls, so what the test checks does not change.  ``not`` inverts the
status as lit's does (a signal is a failure either way), and a pipeline
fails if either side fails (lit's pipefail).  ``filecheck`` (a Python
program too: another interpreter start per RUN line, half of the rest of
the suite's CPU) runs the same way: its ``main`` with the command's argv in
a child forked from this process, nnc-opt's output as its stdin, its own
stdout, stderr and exit status.  A RUN line of any other form goes to
lit's own shell (:class:`lit.formats.ShTest`), as does every test when
``NNC_LIT_FORK=0``.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tempfile
import traceback
from collections.abc import Callable

import lit.formats
import lit.Test
import lit.TestRunner
from filecheck import colors as filecheck_colors
from filecheck.main import main as filecheck_main

from nnc.passes.opt import main as nnc_opt_main

_DBG = re.compile(lit.TestRunner.kPdbgRegex)


class Pipeline:
    """``[not] nnc-opt ARGS [2>&1] | filecheck ARGS``."""

    def __init__(self, negate: bool, opt_args: list[str], merge_stderr: bool, check_args: list[str]):
        self.negate, self.opt_args, self.merge_stderr, self.check_args = negate, opt_args, merge_stderr, check_args


def parse(command: str) -> list[Pipeline] | None:
    """The pipelines of one RUN command, or None if it has another form."""
    m = _DBG.fullmatch(command)
    if m:
        command = m.group(2)
    if any(c in command for c in ";<`$\n") or command.strip().startswith(":"):
        return None
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    pipelines, current = [], []
    for tok in [*tokens, "&&"]:
        if tok != "&&":
            current.append(tok)
            continue
        if current.count("|") != 1:
            return None
        k = current.index("|")
        opt, check = current[:k], current[k + 1 :]
        negate = bool(opt) and opt[0] == "not"
        opt = opt[1:] if negate else opt
        merge = bool(opt) and opt[-1] == "2>&1"
        opt = opt[:-1] if merge else opt
        if not opt or opt[0] != "nnc-opt" or not check or check[0] != "filecheck":
            return None
        if any(t.startswith(("<", ">", "&", "|", "1>", "2>")) for t in opt[1:] + check[1:]):
            return None  # a redirection or operator this format does not model
        pipelines.append(Pipeline(negate, opt[1:], merge, check[1:]))
        current = []
    return pipelines


def run_forked(main: Callable[[], int | None], argv: list[str], stdin: bytes | None,
               merge_stderr: bool) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) of a program, ``main()`` with ``argv``
    as ``sys.argv``, run in a forked child reading ``stdin`` (None: an empty
    input); a negative status: killed by that signal, as subprocess reports
    it.  ``main`` returns or raises SystemExit as a console script's main
    does; an uncaught exception prints its traceback, status 1."""
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        inp.write(stdin or b"")
        inp.seek(0)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child exits here
            code = 1
            try:
                os.dup2(inp.fileno(), 0)
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno() if merge_stderr else err.fileno(), 2)
                # a fresh sys.stdin: nothing the parent buffered from its own
                sys.stdin = open(0, encoding="utf-8", closefd=False)
                sys.argv = list(argv)
                try:
                    code = main()
                except SystemExit as e:  # argparse's errors and --help, filecheck's status
                    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                code = 0 if code is None else code
            except BaseException:  # noqa: BLE001 - an uncaught exception: what the interpreter prints, status 1
                traceback.print_exc()
                code = 1
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        out.seek(0)
        err.seek(0)
        return code, out.read(), err.read()


def run_nnc_opt(args: list[str], merge_stderr: bool) -> tuple[int, bytes, bytes]:
    """``nnc-opt ARGS`` (stdin empty) in a forked child: see :func:`run_forked`."""
    return run_forked(lambda: nnc_opt_main(args), ["nnc-opt", *args], None, merge_stderr)


def _filecheck() -> int | None:
    """filecheck's ``main`` as its console script calls it, after deciding
    on colours as the program does at start-up (whether its stdout, here the
    child's, is a terminal): the flag was set when this process imported it."""
    filecheck_colors.COLOR_SUPPORT = hasattr(sys.stdout, "isatty") and sys.stdout.isatty()
    return filecheck_main(sys.argv)


def run_filecheck(args: list[str], stdin: bytes) -> tuple[int, bytes, bytes]:
    """``filecheck ARGS`` reading ``stdin``, in a forked child: see :func:`run_forked`."""
    return run_forked(_filecheck, ["filecheck", *args], stdin, False)


class NNCOptTest(lit.formats.ShTest):
    """:class:`lit.formats.ShTest`, with nnc-opt pipelines run in forked children."""

    def __init__(self) -> None:
        super().__init__(execute_external=False)

    def execute(self, test, litConfig):
        if os.environ.get("NNC_LIT_FORK", "1") == "0" or test.config.unsupported:
            return super().execute(test, litConfig)
        script = lit.TestRunner.parseIntegratedTestScript(test, require_script=True)
        if isinstance(script, lit.Test.Result):
            return script
        tmp_dir, tmp_base = lit.TestRunner.getTempPaths(test)
        substitutions = lit.TestRunner.getDefaultSubstitutions(test, tmp_dir, tmp_base)  # config's included
        conditions = {feature: True for feature in test.config.available_features}
        script = lit.TestRunner.applySubstitutions(
            script, substitutions, conditions, recursion_limit=test.config.recursiveExpansionLimit
        )
        parsed = [parse(command) for command in script]
        if any(p is None for p in parsed):
            return super().execute(test, litConfig)
        log = []
        for command, pipelines in zip(script, parsed):
            log.append(f"$ {command}")
            for p in pipelines:
                code, out, err = run_nnc_opt(p.opt_args, p.merge_stderr)
                check_code, check_out, check_err = run_filecheck(p.check_args, out)
                opt_ok = code > 0 if p.negate else code == 0  # lit's not: a signal fails
                log.append(f"# nnc-opt {shlex.join(p.opt_args)}: exit {code}" + ("" if opt_ok else " (failed)"))
                if err:
                    log.append("# nnc-opt stderr:\n" + err.decode(errors="replace"))
                log.append(f"# filecheck {shlex.join(p.check_args)}: exit {check_code}")
                for name, data in (("stdout", check_out), ("stderr", check_err)):
                    if data:
                        log.append(f"# filecheck {name}:\n" + data.decode(errors="replace"))
                if not opt_ok or check_code != 0:
                    if not opt_ok and out:
                        log.append("# nnc-opt stdout:\n" + out.decode(errors="replace"))
                    return lit.Test.Result(lit.Test.FAIL, "\n".join(log))
        return lit.Test.Result(lit.Test.PASS, "\n".join(log))
