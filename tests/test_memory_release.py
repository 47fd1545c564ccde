"""The lowering frees the IR it replaces while Python's cyclic collector is
paused (:func:`nnc.driver.gc_paused`): erased functions are dismantled
(:func:`nnc.passes.build.dismantle`) and the replaced operations are
collected before the translation to the llvm dialect
(:func:`nnc.driver.collect_replaced_operations`)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Region

from nnc import driver
from nnc.passes.build import dismantle, walk_ops
from nnc.passes.pipeline import context
from nnc.passes.scf_to_cf import ConvertScfToCfPass
from nnc.passes.to_llvm import ConvertNNCToLLVMPass


@pytest.fixture
def collector_paused() -> Iterator[None]:
    gc.collect()
    with driver.gc_paused():
        yield


def _function_with_a_loop(name: str = "f") -> func.FuncOp:
    """``func @name(%n: index)`` with an ``scf.for`` of an ``arith.addi``."""
    index = IndexType()
    body = Block(arg_types=[index])
    zero = arith.ConstantOp.from_int_and_width(0, index)
    one = arith.ConstantOp.from_int_and_width(1, index)
    loop_body = Block(arg_types=[index])
    loop_body.add_ops([arith.AddiOp(loop_body.args[0], one.result), scf.YieldOp()])
    loop = scf.ForOp(zero.result, body.args[0], one.result, [], Region(loop_body))
    body.add_ops([zero, one, loop, func.ReturnOp()])
    return func.FuncOp(name, ((index,), ()), Region(body))


def test_a_dismantled_function_is_freed_at_once(collector_paused: None) -> None:
    module = ModuleOp([_function_with_a_loop()])
    fn = next(iter(module.ops))
    refs = [weakref.ref(op) for op in walk_ops(fn)]
    fn.detach()
    fn.erase(safe_erase=False)
    dismantle(fn)
    del fn
    assert all(r() is None for r in refs)


def test_an_erased_function_waits_for_the_collector(collector_paused: None) -> None:
    """What :func:`dismantle` prevents, and what the collection of the
    replaced operations frees: the youngest generation holds everything
    made since the collector was paused."""
    module = ModuleOp([_function_with_a_loop()])
    fn = next(iter(module.ops))
    refs = [weakref.ref(op) for op in walk_ops(fn)]
    fn.detach()
    fn.erase(safe_erase=False)
    del fn
    assert any(r() is not None for r in refs)  # the cycles keep its operations
    driver.collect_replaced_operations()
    assert all(r() is None for r in refs)


def test_the_llvm_translation_frees_each_function_it_converts(collector_paused: None) -> None:
    module = ModuleOp([_function_with_a_loop("f"), _function_with_a_loop("g")])
    ConvertScfToCfPass().apply(context(), module)
    refs = [weakref.ref(op) for top in module.ops for op in walk_ops(top)]
    ConvertNNCToLLVMPass().apply(context(), module)
    module.verify()
    assert [op.name for op in module.ops] == ["llvm.func", "llvm.func"]
    assert all(r() is None for r in refs)
