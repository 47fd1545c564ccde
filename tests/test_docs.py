"""The documentation's runnable examples still run, and its links resolve.

A fenced block whose info string is ``python runnable`` or ``sh runnable``
(optionally ``requires=TOOL``) in README.md, docs/*.md or
benchmarks/RESULTS.md is run here; docs/README.md ("Runnable examples")
documents the convention.  Each block runs alone in a fresh temporary
directory laid out like the repository root (``examples/`` and
``benchmarks/`` linked, ``../shared`` linked when it exists): Python blocks
with this interpreter, shell blocks with ``bash -e``, ``.venv/bin/`` standing
for this interpreter's directory.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "RESULTS.md"]
#: repository entries a block may read as from the repository root
LINKED = ("examples", "benchmarks")
TIMEOUT_S = 120

#: a fenced block: opening fence (3 or more backticks), info string, body, the same fence
FENCE = re.compile(r"^(`{3,})([^\n`]*)\n(.*?)^\1[ \t]*$", re.M | re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def blocks(page: Path) -> list[tuple[int, str, str, list[str]]]:
    """(line, language, code, required tools) of each runnable block."""
    text = page.read_text()
    found = []
    for m in FENCE.finditer(text):
        words = m.group(2).split()
        if len(words) >= 2 and words[1] == "runnable":
            requires = [w.split("=", 1)[1] for w in words[2:] if w.startswith("requires=")]
            found.append((text.count("\n", 0, m.start()) + 1, words[0], m.group(3), requires))
    return found


RUNNABLE = [
    pytest.param(page, lang, code, requires, id=f"{page.relative_to(ROOT)}:{line}")
    for page in PAGES
    for line, lang, code, requires in blocks(page)
]


def test_runnable_blocks_found() -> None:
    """The quick starts are marked: at least one Python and one shell block in the README."""
    langs = {lang for line, lang, code, requires in blocks(ROOT / "README.md")}
    assert {"python", "sh"} <= langs, langs


def workdir(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in LINKED:
        (repo / name).symlink_to(ROOT / name)
    shared = ROOT.parent / "shared"
    if shared.exists():
        (tmp_path / "shared").symlink_to(shared)
    return repo


@pytest.mark.parametrize(("page", "lang", "code", "requires"), RUNNABLE)
def test_runnable_block(page: Path, lang: str, code: str, requires: list[str], tmp_path: Path) -> None:
    for tool in requires:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not on PATH")
    cwd = workdir(tmp_path)
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    if lang == "python":
        script = tmp_path / "block.py"
        script.write_text(code)
        argv = [sys.executable, str(script)]
    elif lang in ("sh", "bash"):
        script = tmp_path / "block.sh"
        script.write_text(code.replace(".venv/bin/", bindir + "/"))
        argv = ["bash", "-e", str(script)]
    else:
        pytest.fail(f"no way to run a {lang!r} block (python or sh)")
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, (
        f"block exited with {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    )


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {slug(re.sub(r"`", "", h)) for h in HEADING.findall(text)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    text = FENCE.sub("", page.read_text())
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"
