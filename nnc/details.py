"""What a model's inputs and outputs are, for Python users.

``nnc.Model.input_details`` / ``output_details`` and ``CompiledModel.inputs`` /
``outputs`` answer the question LiteRT's ``get_input_details()`` answers: the
name to pass a tensor by, its shape and numpy dtype, its NNAPI operand type and
its quantisation.  They are read from the finished model alone (no
compilation), so they are cheap to take before deciding to compile.

Shapes: NNAPI writes an unknown dimension as 0 and an unknown rank as no
dimensions at all.  Here an unknown dimension is ``None`` and an unknown rank
makes ``shape`` itself ``None`` (as Python shape annotations do), so that a 0 can
never be mistaken for an empty axis; ``nnapi_dims`` keeps NNAPI's own spelling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nnc.enums import OperandType
from nnc.errors import BadDataError

if TYPE_CHECKING:
    from nnc.model import Model


@dataclass(frozen=True)
class TensorDetails:
    """One model input or output (see the module docstring for shapes)."""

    #: position among the model's inputs (or outputs): ``Execution.set_input``'s index
    position: int
    #: the model's own name (TFLite signature or tensor name), else ``input_K`` / ``output_K``
    name: str
    #: operand index in the model (NNAPI's numbering)
    operand: int
    #: dimensions, ``None`` for an unknown one; ``None`` when the rank is unknown; ``()`` for a scalar
    shape: tuple[int | None, ...] | None
    #: the numpy dtype of the values passed and returned
    dtype: np.dtype
    #: the NNAPI operand type
    type: OperandType
    #: quantisation scale (0.0 when the type is not quantised, or is per-channel)
    scale: float = 0.0
    #: quantisation zero point (0 when not quantised)
    zero_point: int = 0
    #: per-channel scales (TENSOR_QUANT8_SYMM_PER_CHANNEL), else None
    channel_scales: tuple[float, ...] | None = None
    #: the dimension ``channel_scales`` runs along, else None
    channel_dim: int | None = None

    @property
    def nnapi_dims(self) -> tuple[int, ...] | None:
        """The dimensions as NNAPI writes them: 0 for an unknown one."""
        return None if self.shape is None else tuple(d or 0 for d in self.shape)

    @property
    def quantized(self) -> bool:
        return self.type.is_quantized

    def describe(self) -> str:
        """``name: TYPE[1x?x3] dtype`` plus the quantisation, for messages."""
        dims = "?" if self.shape is None else "x".join("?" if d is None else str(d) for d in self.shape)
        text = f"{self.name}: {self.type.name}[{dims}] {self.dtype}"
        if self.channel_scales is not None:
            text += f" per-channel scales[{len(self.channel_scales)}] along dim {self.channel_dim}"
        elif self.quantized:
            text += f" scale={self.scale:g} zero_point={self.zero_point}"
        return text


def _shape(dims: Sequence[int] | None) -> tuple[int | None, ...] | None:
    return None if dims is None else tuple(int(d) if d else None for d in dims)


def tensor_details(model: Model, kind: str) -> list[TensorDetails]:
    """The details of ``model``'s inputs (``kind="input"``) or outputs."""
    indices = model.inputs if kind == "input" else model.outputs
    names = unique_names(getattr(model, f"{kind}_names", None), len(indices), kind)
    out = []
    for k, (idx, name) in enumerate(zip(indices, names)):
        op = model.operands[idx]
        cq = op.channel_quant
        out.append(
            TensorDetails(
                position=k,
                name=name,
                operand=idx,
                shape=_shape(op.dims),
                dtype=np.dtype(op.type.facts.dtype),
                type=OperandType(op.type),
                scale=float(op.scale),
                zero_point=int(op.zero_point),
                channel_scales=None if cq is None else tuple(float(s) for s in cq[0]),
                channel_dim=None if cq is None else int(cq[1]),
            )
        )
    return out


def unique_names(names: Sequence[str] | None, n: int, kind: str) -> list[str]:
    """One name per input (output): the model's own where it has one that no
    other input shares, else ``input_K`` (``output_K``), the command line's
    spelling, so that every name selects exactly one tensor."""
    given = list(names or [])[:n]
    given += [""] * (n - len(given))
    taken = {f"{kind}_{k}" for k in range(n)}
    counts = {s: given.count(s) for s in given}
    return [s if s and counts[s] == 1 and (s not in taken or s == f"{kind}_{k}") else f"{kind}_{k}"
            for k, s in enumerate(given)]  # fmt: skip


def bind_inputs(details: Sequence[TensorDetails], positional: Sequence, named: dict, fn: str) -> list:
    """The inputs in position order from positional and keyword arguments.

    Keywords are the detail names (or ``input_K``); each input must be given
    exactly once.  Mistakes are BAD_DATA naming ``fn``, listing the names."""
    n = len(details)
    if len(positional) > n:
        raise BadDataError(fn, f"the model has {n} inputs, got {len(positional)} positional arguments")
    by_name = {d.name: d.position for d in details} | {f"input_{d.position}": d.position for d in details}
    values: list = list(positional) + [None] * (n - len(positional))
    given = [k < len(positional) for k in range(n)]
    for name, value in named.items():
        k = by_name.get(name)
        if k is None:
            raise BadDataError(fn, f"unknown input {name!r} (the model's inputs: {', '.join(d.name for d in details)})")
        if given[k]:
            raise BadDataError(fn, f"input {details[k].name!r} is given twice")
        values[k], given[k] = value, True
    missing = [details[k].name for k in range(n) if not given[k]]
    if missing:
        raise BadDataError(fn, f"missing input(s): {', '.join(missing)}")
    return values
