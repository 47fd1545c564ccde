"""The C entry points of ``libneuralnetworks.so``, written in Python.

Why a thin translation layer and nothing more: every rule (NULL checks,
states, data validation) already lives in nnc's runtime objects, so each entry
here only turns C pointers into Python values, calls the runtime, and turns
an :class:`NNError` into its result code.  C's NULL handle becomes ``None``,
which the runtime's ``@ndk`` methods answer with UNEXPECTED_NULL exactly as in
Python.  Any other exception is a bug: it becomes OP_FAILED with a line on
stderr, because an exception must never unwind into the C caller.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from nnc.enums import ResultCode
from nnc.errors import BadDataError, NNError, UnexpectedNullError

NO_ERROR = int(ResultCode.NO_ERROR)
UNEXPECTED_NULL = int(ResultCode.UNEXPECTED_NULL)
BAD_DATA = int(ResultCode.BAD_DATA)
OP_FAILED = int(ResultCode.OP_FAILED)

#: NNC_NDK_VERBOSE=1 prints each error's explanation (C only sees the code).
_VERBOSE = os.environ.get("NNC_NDK_VERBOSE", "") not in ("", "0")


class Handles:
    """Keeps each object handed to C alive until its ``*_free``.

    C holds ``ffi.new_handle`` pointers; the table owns the handle objects so
    the pointers stay valid, and freeing removes the entry (a second free of
    the same pointer is the client's use-after-free, but finds nothing and
    does nothing here)."""

    def __init__(self, ffi: Any):
        self._ffi = ffi
        self._live: dict[int, Any] = {}
        self._lock = threading.Lock()

    def new(self, obj: object, ctype: str) -> Any:
        h = self._ffi.new_handle(obj)
        with self._lock:
            self._live[int(self._ffi.cast("uintptr_t", h))] = h
        return self._ffi.cast(ctype, h)

    def get(self, ptr: Any) -> Any:
        """The object behind ``ptr``; None for NULL (the runtime rejects it)."""
        if ptr == self._ffi.NULL:
            return None
        return self._ffi.from_handle(self._ffi.cast("void *", ptr))

    def drop(self, ptr: Any) -> Any:
        if ptr == self._ffi.NULL:
            return None
        with self._lock:
            h = self._live.pop(int(self._ffi.cast("uintptr_t", ptr)), None)
        return None if h is None else self._ffi.from_handle(h)


def guarded(name: str, on_error: Any = OP_FAILED, *, void: bool = False) -> Callable:
    """Wrap an entry so that NNError becomes its code and anything else
    OP_FAILED with a traceback on stderr (``void``: a function returning
    nothing to C, such as ``*_free``, whose errors are only logged)."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def entry(*args):
            try:
                result = fn(*args)
                if void:
                    return None
                return NO_ERROR if result is None else result
            except NNError as e:
                if _VERBOSE:
                    print(f"nnc: {e}", file=sys.stderr)
                if void:
                    return None
                return int(e.code) if on_error == OP_FAILED else on_error
            except Exception:  # noqa: BLE001 - nothing may unwind into C
                print(f"nnc: internal error in {name}:", file=sys.stderr)
                traceback.print_exc(file=sys.stderr)
                return None if void else on_error

        return entry

    return wrap


def array_at(ffi: Any, ptr: Any, length: int, dtype: np.dtype, fn: str) -> np.ndarray:
    """A numpy view of ``length`` bytes of client memory (no copy)."""
    if length % dtype.itemsize:
        raise BadDataError(fn, f"length {length} is not a whole number of {dtype} elements")
    if length == 0:
        return np.zeros(0, dtype)
    return np.frombuffer(ffi.buffer(ptr, length), dtype=np.uint8).view(dtype)


def dims_of(ffi: Any, type_ptr: Any) -> tuple[int, ...] | None:
    """An ANeuralNetworksOperandType's dimensions; None when it gives none."""
    if type_ptr == ffi.NULL:
        return None
    n = int(type_ptr.dimensionCount)
    if n == 0:
        return None
    return tuple(int(type_ptr.dimensions[i]) for i in range(n))


def out_pointer(ffi: Any, ptr: Any, fn: str, what: str = "the result pointer") -> None:
    """UNEXPECTED_NULL (as the NDK's checks) when ``ptr`` is NULL."""
    if ptr == ffi.NULL:
        raise UnexpectedNullError(fn, f"{what} is null")


def device_at(h: Handles, ptr: Any, fn: str) -> Any:
    """The device a handle names; UNEXPECTED_NULL for NULL."""
    d = h.get(ptr)
    if d is None:
        raise UnexpectedNullError(fn, "the device is null")
    return d


def define_free(ffi: Any, h: Handles, name: str) -> None:
    """``name`` (an ``ANeuralNetworks*_free``): drops the handle and closes
    its object; NULL and an already freed handle are no-ops."""

    @ffi.def_extern(name=name)
    @guarded(name, void=True)
    def free(p: Any) -> None:
        obj = h.drop(p)
        if obj is not None:
            obj.close()
