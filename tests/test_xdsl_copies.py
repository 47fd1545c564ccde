"""nnc's own versions of xDSL passes build xDSL's IR, operation for operation.

``nnc-convert-linalg-to-loops``, ``nnc-lower-affine`` and
``nnc-convert-scf-to-cf`` replace xDSL's ``convert-linalg-to-loops``,
``lower-affine`` and ``convert-scf-to-cf`` in the pipeline for speed
(no pattern rewriter; :mod:`nnc.passes.build` makes their operations) and
claim to produce the same IR.  Each is run beside xDSL's pass on clones of
the same module, and the printed results must be identical:

* every lit input whose RUN pipeline runs nnc's pass (the passes before it
  applied first);
* a sample of conformance models spread over the operations, taken through
  nnc's pipeline up to the pass.

If a future xDSL drops one of the passes, its tests skip, naming it.
"""

from __future__ import annotations

import importlib
import io
import re
from functools import cache
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from nnc import driver
from nnc.passes.pipeline import context, default_pipeline, make_pass, run_passes, split_pipeline

LIT = Path(__file__).resolve().parent.parent / "lit"

#: nnc's pass -> (module, class) of xDSL's pass it copies
COPIES = {
    "nnc-convert-linalg-to-loops": ("xdsl.transforms.convert_linalg_to_loops", "ConvertLinalgToLoopsPass"),
    "nnc-lower-affine": ("xdsl.transforms.lower_affine", "LowerAffinePass"),
    "nnc-convert-scf-to-cf": ("xdsl.transforms.convert_scf_to_cf", "ConvertScfToCf"),
}

#: conformance models in the sample (every k-th model of the corpus, in order)
SAMPLE = 30


def xdsl_pass(name: str) -> ModulePass:
    """xDSL's pass that nnc's ``name`` copies (the test skips if xDSL has none)."""
    module, cls = COPIES[name]
    try:
        return getattr(importlib.import_module(module), cls)()
    except (ImportError, AttributeError):
        pytest.skip(f"this xDSL has no {module}.{cls}: nothing to compare {name} with")


def printed(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def assert_same_ir(before: ModuleOp, name: str, what: str) -> None:
    """nnc's pass ``name`` and xDSL's give the same IR on clones of ``before``."""
    ours, theirs = before.clone(), before.clone()
    make_pass(name).apply(context(), ours)
    xdsl_pass(name).apply(context(), theirs)
    a, b = printed(ours), printed(theirs)
    if a != b:
        diff = next(k for k, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())) if x != y)
        line_a, line_b = a.splitlines()[diff], b.splitlines()[diff]
        pytest.fail(f"{what}: {name} differs from xDSL's at line {diff + 1}:\n  nnc:  {line_a}\n  xDSL: {line_b}")


# -- lit inputs -----------------------------------------------------------------------------------------

_PIPELINE = re.compile(r"-p\s+(?:'([^']*)'|(\S+))")


def lit_cases() -> list[tuple[str, Path, list[str]]]:
    """(nnc pass, lit file, the passes before it) for each RUN pipeline that runs the pass."""
    cases = []
    for path in sorted(LIT.rglob("*.mlir")):
        if "-invalid" in path.name:
            continue
        run = " ".join(line.split("RUN:", 1)[1] for line in path.read_text().splitlines() if "RUN:" in line)
        if "--split-input-file" in run:
            continue
        for m in _PIPELINE.finditer(run):
            passes = split_pipeline(m.group(1) or m.group(2))
            for k, p in enumerate(passes):
                if p in COPIES:
                    cases.append((p, path, passes[:k]))
    return cases


@pytest.mark.parametrize("name,path,before", lit_cases(), ids=lambda v: v.name if isinstance(v, Path) else None)
def test_same_ir_as_xdsl_on_lit_inputs(name: str, path: Path, before: list[str]) -> None:
    ctx = context()
    module = Parser(ctx, path.read_text(), str(path)).parse_module()
    run_passes(module, before, ctx)
    assert_same_ir(module, name, path.name)


def test_every_copy_meets_a_lit_input() -> None:
    assert {name for name, _, _ in lit_cases()} == set(COPIES)


# -- conformance models ----------------------------------------------------------------------------------


def _stages(model) -> dict[str, ModuleOp]:
    """The module right before each of the copied passes, through nnc's pipeline."""
    infos = [model.operands[i].info(with_value=False) for i in model.inputs]
    module, _ = driver.shaped_module(model, infos)
    ctx = context()
    stages = {}
    for p in default_pipeline()[1:]:
        if p in COPIES:
            stages[str(p)] = module.clone()
        run_passes(module, [p], ctx)
        if p == "nnc-convert-scf-to-cf":
            break
    return stages


@cache
def _sample() -> list[tuple[str, dict[str, ModuleOp]]]:
    """(name, stages) of every k-th conformance model whose stages nnc builds
    without run-time values (an input read as a shape is specialised on its
    value at execution, which this sample does not do)."""
    import cts

    found = [c for c in cts.cases(cts.DEFAULT_CTS_DIR) if not c.dynamic]
    step = max(1, len(found) // (SAMPLE * 3))
    sample = []
    for case in found[::step]:
        m = cts.model_json(case)
        if m["expect_failure"]:
            continue
        try:
            model = cts.build_graph(m["main"], m["referenced"], m["is_relaxed"], False, {})
            driver.check_support(model, "sample")
            stages = _stages(model)
        except Exception:  # noqa: BLE001 - the sample holds models nnc compiles as they are
            continue
        sample.append((case.name, stages))
        if len(sample) == SAMPLE:
            break
    return sample


@pytest.mark.parametrize("name", sorted(COPIES))
def test_same_ir_as_xdsl_on_conformance_models(name: str) -> None:
    xdsl_pass(name)  # skip at once if xDSL lacks it
    sample = _sample()
    assert len(sample) == SAMPLE
    for case, stages in sample:
        assert_same_ir(stages[name], name, case)
