"""A computation's outputs: where each is written, checked against its
computed shape, and what the shape queries of a completed execution report
(OUTPUT_INSUFFICIENT_SIZE included)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from nnc.enums import DurationCode, ResultCode
from nnc.errors import BadDataError, NNError, OpFailedError, OutputInsufficientSizeError
from nnc.execution.bindings import UINT32_MAX, Binding, product
from nnc.memory import fully_known
from nnc.model import Model
from nnc.operand_types import OperandInfo, dtype_of, is_int
from nnc.runtime.executable import NativeCall


@dataclass
class Outcome:
    """What a finished computation leaves queryable."""

    error: NNError | None
    shapes: list[tuple[int, ...]] | None = None
    sufficient: list[bool] | None = None
    durations: dict[DurationCode, int] = field(default_factory=dict)
    #: code compiled for profiling: (the variant's input infos, the
    #: timestamps its computation recorded)
    profile: tuple[list[OperandInfo], np.ndarray] | None = None

    def output_shape(self, fn: str, index: int) -> tuple[tuple[int, ...], bool]:
        """Output ``index``'s computed shape and whether its buffer held it
        (a successful outcome's, or an OUTPUT_INSUFFICIENT_SIZE one's)."""
        assert self.shapes is not None
        if not is_int(index) or not 0 <= index < len(self.shapes):
            raise BadDataError(fn, f"output index {index} out of range [0, {len(self.shapes)})")
        ok = self.sufficient[int(index)] if self.sufficient else True
        return self.shapes[int(index)], ok


class OutputDimensions(list):
    """The dimensions of an output, with the NDK's result code: ``code`` is
    NO_ERROR, or OUTPUT_INSUFFICIENT_SIZE when the output's buffer was too
    small (the dimensions are still the real ones)."""

    code: ResultCode
    sufficient: bool

    def __init__(self, dims: Sequence[int], sufficient: bool):
        super().__init__(dims)
        self.sufficient = sufficient
        self.code = ResultCode.NO_ERROR if sufficient else ResultCode.OUTPUT_INSUFFICIENT_SIZE


class OutputRank(int):
    """An output's rank, with ``code``/``sufficient`` as :class:`OutputDimensions`."""

    code: ResultCode
    sufficient: bool

    def __new__(cls, rank: int, sufficient: bool) -> OutputRank:
        self = super().__new__(cls, rank)
        self.sufficient = sufficient
        self.code = ResultCode.NO_ERROR if sufficient else ResultCode.OUTPUT_INSUFFICIENT_SIZE
        return self


def check_sufficient(fn: str, shapes: Sequence[tuple[int, ...]], sufficient: Sequence[bool]) -> None:
    """OUTPUT_INSUFFICIENT_SIZE naming the outputs whose buffers are smaller
    than their computed shapes (``shapes`` and ``sufficient`` travel with
    the error for ``get_output_operand_dimensions``)."""
    if all(sufficient):
        return
    small = [k for k, ok in enumerate(sufficient) if not ok]
    raise OutputInsufficientSizeError(
        fn, f"outputs {small} are too small for the computed shapes {[list(shapes[k]) for k in small]}",
        output_shapes=list(shapes), sufficient=list(sufficient),
    )  # fmt: skip


def output_arrays(
    fn: str, model: Model, outputs: dict[int, Binding], shapes: list[tuple[int, ...]], dynamic: Sequence[int] = ()
) -> tuple[list[np.ndarray | None], list[bool]]:
    """Each output's destination in its computed shape (None: too small).
    An output in ``dynamic`` (a data-dependent dimension; ``shapes``
    holds its bound) gets an array of the bound, checked after the run
    (:func:`dynamic_outcome`)."""
    outs: list[np.ndarray | None] = []
    sufficient: list[bool] = []
    for k, shape in enumerate(shapes):
        b = outputs[k]
        operand = model.operands[model.outputs[k]]
        dtype = dtype_of(operand.type)
        if k in dynamic:
            outs.append(np.zeros(shape, dtype))
            sufficient.append(True)
            continue
        if product(shape) * dtype.itemsize > UINT32_MAX:
            raise OpFailedError(fn, f"output {k}: the computed shape {list(shape)} overflows uint32 bytes")
        if fully_known(b.dims) and tuple(b.dims or ()) != tuple(shape):
            raise OpFailedError(fn, f"output {k}: set with dimensions {list(b.dims or ())}, computed {list(shape)}")
        out = output_array(fn, k, b, shape, dtype)
        outs.append(out)
        sufficient.append(out is not None)
    return outs, sufficient


def output_array(fn: str, k: int, b: Binding, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
    """Output ``k``'s destination in ``shape``, or None if its buffer is too small."""
    need = product(shape)
    if b.kind == "omitted":
        return np.empty(shape, dtype)
    if b.kind == "device":
        assert b.memory is not None
        raw = b.memory.output_data(fn, shape)
        if raw is None:
            if need * dtype.itemsize > b.memory.capacity:
                return None
            raise OpFailedError(fn, f"output {k}: computed shape {list(shape)} does not fit the device memory's "
                                    f"dimensions {list(b.memory.dimensions or ())}")  # fmt: skip
        return raw.view(dtype).reshape(shape)
    assert b.array is not None
    if b.array.size < need:
        return None
    return b.array[:need].reshape(shape)


def dynamic_outcome(
    fn: str,
    outputs: dict[int, Binding],
    call: NativeCall,
    sufficient: list[bool] | None,
    dynamic: tuple[tuple[int, np.ndarray], ...],
) -> Outcome:
    """After a run of code with data-dependent sizes: the outputs' actual
    dimensions (from the counts the run left in its arena), each such
    output's actual rows (a prefix of the bound-sized array the code
    wrote) copied into the caller's buffer, or OUTPUT_INSUFFICIENT_SIZE
    with the actual dimensions when it is too small.  ``sufficient``: the
    other outputs' fit, as the plan found it."""
    shapes = call.executable.actual_output_shapes(call.counts())
    fits = list(sufficient or [True] * len(shapes))
    for k, written in dynamic:
        shape, b = shapes[k], outputs[k]
        if fully_known(b.dims) and tuple(b.dims or ()) != shape:
            raise OpFailedError(fn, f"output {k}: set with dimensions {list(b.dims or ())}, computed {list(shape)}")
        dtype = call.executable.output_dtypes[k]
        out = output_array(fn, k, b, shape, dtype)
        if out is None:
            fits[k] = False
            continue
        n = product(shape)
        out.reshape(-1)[:n] = written.reshape(-1)[:n]
    check_sufficient(fn, shapes, fits)
    return Outcome(None, shapes, fits)
