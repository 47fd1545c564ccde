"""``[offset, n]`` module attributes: where generated code leaves data in the
arena for the runtime to read after a call.

Two buffers are placed so: the profile's timestamps (``nnc.profile``,
:mod:`nnc.passes.profile`, 8-byte slots) and the data-dependent sizes
(``nnc.counts``, :mod:`nnc.passes.counts`, 4-byte slots).  ``nnc-plan-buffers``
records each as ``[byte offset in the arena, number of slots]`` and
``nnc-add-entry-point`` exports it as a constant ``int64_t[2]``; both read the
attribute through :func:`read_layout_attr`, so a malformed one fails the same
way whichever buffer it describes.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.ir import Attribute


def layout_attr(offset: int, n: int) -> ArrayAttr:
    """The module attribute ``[offset, n]``."""
    return ArrayAttr([IntAttr(offset), IntAttr(n)])


def read_layout_attr(
    name: str, attr: Attribute | None, alignment: int, fail: Callable[[str], Exception]
) -> tuple[int, int] | None:
    """(offset, n) of the module attribute ``name`` (``attr``), None without
    one; ``fail(message)`` is raised for a malformed one: not two
    ``#builtin.int``, an offset not a multiple of ``alignment`` (the slot
    size), or no slot."""
    if attr is None:
        return None
    if (
        not isinstance(attr, ArrayAttr)
        or len(attr.data) != 2
        or not all(isinstance(a, IntAttr) and a.data >= 0 for a in attr.data)
        or attr.data[0].data % alignment
        or attr.data[1].data < 1
    ):
        raise fail(
            f"{name} must be [offset, n] (#builtin.int, offset a multiple of {alignment}, n >= 1), got {attr}"
        )
    return attr.data[0].data, attr.data[1].data
