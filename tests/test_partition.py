"""The LLVM stage split by function (nnc.runtime.partition) and the objects
bundled back (nnc.runtime.jit.bundle_objects): callers stay with their direct
callees, constants are copied, exported globals defined once, and the parts'
objects load together and compute what the whole module does."""

from __future__ import annotations

import pytest

from nnc import driver
from nnc.runtime import worker
from nnc.runtime.jit import NativeModule, Target, bundle_objects, emit_object, optimize, unbundle_objects
from nnc.runtime.partition import split_module
from worker_faults import inject_fault

#: what every module here starts with: the header, and the entry point
#: calling main(5)
HEADER = """; ModuleID = ""
target datalayout = ""
"""
ENTRY = """define i32 @"nnc_run"(ptr %".1", ptr %".2", ptr %".3", ptr %".4")
{
.6:
  %".7" = call i32 @"main"(i32 5)
  ret i32 %".7"
}
"""

# main hands body_a/b/c to apply by address (the cut); body_a and body_b
# share the kernel kern, which must stay with both; tab is an internal
# constant read in two parts; nnc_layout an exported global nobody's code reads.
IR = HEADER + """
@"tab" = internal constant [4 x i32] [i32 1, i32 2, i32 3, i32 4], align 64
@"nnc_layout" = constant [2 x i64] [i64 8, i64 1], align 8

""" + ENTRY + """
define i32 @"main"(i32 %".1")
{
.3:
  %".4" = call i32 @"apply"(ptr @"body_a", i32 %".1")
  %".5" = call i32 @"apply"(ptr @"body_b", i32 %".4")
  %".6" = call i32 @"apply"(ptr @"body_c", i32 %".5")
  ret i32 %".6"
}

define i32 @"apply"(ptr %".1", i32 %".2") noinline
{
.4:
  %".5" = call i32 %".1"(i32 %".2")
  ret i32 %".5"
}

define i32 @"body_a"(i32 %".1")
{
.3:
  %".4" = call i32 @"kern"(i32 %".1", i32 1)
  ret i32 %".4"
}

define i32 @"body_b"(i32 %".1")
{
.3:
  %".4" = call i32 @"kern"(i32 %".1", i32 2)
  ret i32 %".4"
}

define i32 @"kern"(i32 %".1", i32 %".2") noinline
{
.4:
  %".5" = getelementptr [4 x i32], ptr @"tab", i32 0, i32 %".2"
  %".6" = load i32, ptr %".5"
  %".7" = mul i32 %".1", %".6"
  ret i32 %".7"
}

define i32 @"body_c"(i32 %".1")
{
.3:
  %".4" = getelementptr [4 x i32], ptr @"tab", i32 0, i32 3
  %".5" = load i32, ptr %".4"
  %".6" = add i32 %".1", %".5"
  ret i32 %".6"
}
"""
#: main(5): body_a 5 * 2, body_b 10 * 3, body_c 30 + 4
RESULT = 34


def defined(text: str) -> set[str]:
    return {line.split('@"')[1].split('"')[0] for line in text.splitlines() if line.startswith(("define", '@"'))}


def test_parts_keep_callees_with_callers_and_define_globals_once() -> None:
    parts = split_module(IR, 3, 1)
    assert len(parts) == 3
    owned = [defined(p.ir_text) for p in parts]
    assert {"body_a", "body_b", "kern"} in [o - {"tab"} for o in owned]
    assert {"nnc_run", "main", "apply", "nnc_layout"} in [o - {"tab"} for o in owned]
    assert sum("nnc_layout" in o for o in owned) == 1
    assert sum("tab" in o for o in owned) == 2  # a copy in each part that reads it
    entry = next(p for p in parts if "nnc_run" in defined(p.ir_text))
    assert entry.exported == ("nnc_run",)
    others = sorted(name for p in parts if p is not entry for name in p.exported)
    assert others == ["body_a", "body_b", "body_c"]


def test_bundled_parts_compute_what_the_whole_module_does() -> None:
    target = Target.host()
    whole = NativeModule.from_object(emit_object(optimize(IR, target), target), target)
    assert whole.entry(None, None, None, None) == RESULT
    objects = [emit_object(optimize(p.ir_text, target, exported=p.exported), target) for p in split_module(IR, 2, 1)]
    assert len(objects) == 2
    split = NativeModule.from_object(bundle_objects(objects), target)
    assert split.entry(None, None, None, None) == RESULT
    assert split.global_address("nnc_layout")


def test_small_or_unknown_modules_stay_whole() -> None:
    assert [p.ir_text for p in split_module(IR, 2, 1000)] == [IR]
    assert [p.ir_text for p in split_module(IR, 1, 1)] == [IR]
    with_metadata = IR + '!0 = !{!"nnc"}\n'
    assert [p.ir_text for p in split_module(with_metadata, 2, 1)] == [with_metadata]


@pytest.mark.parametrize("sizes", [[3], [3, 4], [1, 2, 5]])
def test_bundle_round_trip(sizes: list[int]) -> None:
    objects = [bytes([k + 1]) * n for k, n in enumerate(sizes)]
    bundle = bundle_objects(objects)
    assert unbundle_objects(bundle) == objects
    if len(objects) > 1:
        assert bundle.startswith(b"!<arch>\n")
        with pytest.raises(ValueError):
            unbundle_objects(bundle[:-2])


@pytest.mark.skipif(driver.IN_PROCESS, reason="NNC_COMPILER_IN_PROCESS runs LLVM in the test process")
def test_parts_compile_in_workers_and_a_crash_in_one_is_reported() -> None:
    target = Target.host()
    parts = [(p.ir_text, p.exported) for p in split_module(IR, 2, 1)]
    objects = worker.POOL.compile_objects(parts, target, 60)
    assert NativeModule.from_object(bundle_objects(objects), target).entry(None, None, None, None) == RESULT
    with inject_fault("abort"), pytest.raises(worker.WorkerCrash):
        worker.POOL.compile_objects(parts, target, 60)
    assert len(worker.POOL.compile_objects(parts, target, 60)) == 2  # the pool recovers


# main passes loop only run-time values (a nest nnc-outline-loops took out of
# it): nothing for LLVM to specialise, so loop may be compiled in another part;
# kern gets a constant and stays with main.
CUT_IR = HEADER + "\n" + ENTRY + """
define i32 @"main"(i32 %".1")
{
.3:
  %".4" = call i32 @"loop"(i32 %".1")
  %".5" = call i32 @"kern"(i32 %".4", i32 3)
  ret i32 %".5"
}

define i32 @"loop"(i32 %".1")
{
.3:
  %".4" = mul i32 %".1", 7
  ret i32 %".4"
}

define i32 @"kern"(i32 %".1", i32 %".2") noinline
{
.4:
  %".5" = add i32 %".1", %".2"
  ret i32 %".5"
}
"""


def test_a_callee_passed_only_run_time_values_may_leave_its_caller() -> None:
    parts = split_module(CUT_IR, 2, 1)
    assert [defined(p.ir_text) for p in parts] == [{"nnc_run", "main", "kern"}, {"loop"}]
    assert parts[1].exported == ("loop",)
    target = Target.host()
    objects = [emit_object(optimize(p.ir_text, target, exported=p.exported), target) for p in parts]
    assert NativeModule.from_object(bundle_objects(objects), target).entry(None, None, None, None) == 5 * 7 + 3
