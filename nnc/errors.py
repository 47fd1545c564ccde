"""Errors raised by nnc, one class per NNAPI result code.

Every failure a user can cause is an :class:`NNError` carrying the NNAPI
``ResultCode`` and the name of the NDK function whose contract was broken, so
that code ported from the C API can map exceptions back to return values.

The hierarchy::

    NNError(Exception)                     .code  .function  .message
    ├── OutOfMemoryError            (1)    also a MemoryError
    ├── IncompleteError             (2)
    ├── UnexpectedNullError         (3)    also a TypeError  (a required argument was None)
    ├── BadDataError                (4)    also a ValueError
    ├── OpFailedError               (5)
    │   └── UnsupportedOperationError      valid NNAPI that nnc does not implement
    ├── BadStateError               (6)    also a RuntimeError
    ├── UnmappableError             (7)
    ├── OutputInsufficientSizeError (8)    .output_shapes, .sufficient
    ├── UnavailableDeviceError      (9)
    ├── MissedDeadlineError         (10, 11)
    │   ├── MissedDeadlineTransientError   (10)
    │   └── MissedDeadlinePersistentError  (11)
    ├── ResourceExhaustedError      (12, 13)
    │   ├── ResourceExhaustedTransientError  (12)
    │   └── ResourceExhaustedPersistentError (13)
    └── DeadObjectError             (14)

``MissedDeadlineError(fn, msg)`` and ``ResourceExhaustedError(fn, msg)`` stay
usable directly (transient by default, ``code=`` for the persistent one);
:func:`error_for` always builds the most specific class.  A code nnc does not
know becomes a plain :class:`NNError` that keeps the raw number: it is a
failure, never mistaken for success.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from nnc.enums import OperationType, ResultCode

#: Prefix of the OP_FAILED message for a bug in nnc itself (reported, never
#: hidden).  Here, not in the driver that raises it, so that code telling such
#: failures apart (``nnc.compilation`` re-exports it) need not import the compiler.
INTERNAL_ERROR = "internal compiler error"


class NNError(Exception):
    """Base class: ``.code`` is a :class:`ResultCode` (or the raw int of an
    unknown code), ``.function`` the NDK name, ``.message`` the explanation."""

    code: ResultCode | int = ResultCode.OP_FAILED

    def __init__(self, function: str, message: str, code: ResultCode | int | None = None):
        if code is not None:
            try:
                self.code = ResultCode(code)
            except ValueError:
                self.code = int(code)  # unknown code: kept as is, still a failure
        self.function = function
        self.message = message
        name = self.code.name if isinstance(self.code, ResultCode) else f"result code {self.code}"
        super().__init__(f"{function}: {name}: {message}")

    def __reduce__(self):
        # Picklable (e.g. across process pools) although __init__ takes keywords.
        return (_rebuild, (type(self), self.function, self.message, self.code, dict(self.__dict__)))


def _rebuild(cls: type[NNError], function: str, message: str, code, state: dict) -> NNError:
    err = cls.__new__(cls)
    NNError.__init__(err, function, message, code)
    err.__dict__.update(state)
    return err


class OutOfMemoryError(NNError, MemoryError):
    code = ResultCode.OUT_OF_MEMORY


class IncompleteError(NNError):
    code = ResultCode.INCOMPLETE


class UnexpectedNullError(NNError, TypeError):
    """A required argument (C's pointer) was ``None``."""

    code = ResultCode.UNEXPECTED_NULL


class BadDataError(NNError, ValueError):
    code = ResultCode.BAD_DATA


class OpFailedError(NNError):
    code = ResultCode.OP_FAILED


class BadStateError(NNError, RuntimeError):
    code = ResultCode.BAD_STATE


class UnmappableError(NNError):
    code = ResultCode.UNMAPPABLE


class OutputInsufficientSizeError(NNError):
    """An output buffer was too small for the shape the computation produced.

    ``output_shapes[i]`` is output ``i``'s real shape and ``sufficient[i]``
    whether its buffer was large enough (the NDK's OutputShape list), so the
    caller can allocate and compute again without another query.
    """

    code = ResultCode.OUTPUT_INSUFFICIENT_SIZE
    #: the execution whose computation failed so (set by it)
    execution: Any = None

    def __init__(
        self,
        function: str,
        message: str,
        code: ResultCode | int | None = None,
        *,
        output_shapes: Sequence[Sequence[int]] | None = None,
        sufficient: Sequence[bool] | None = None,
    ):
        super().__init__(function, message, code)
        self.output_shapes: list[tuple[int, ...]] = [tuple(s) for s in output_shapes or ()]
        self.sufficient: list[bool] = list(sufficient or ())


class UnavailableDeviceError(NNError):
    code = ResultCode.UNAVAILABLE_DEVICE


class MissedDeadlineError(NNError):
    """MISSED_DEADLINE_TRANSIENT by default; pass ``code`` for the persistent one.

    Catch this class for both; :func:`error_for` raises the specific subclass."""

    code = ResultCode.MISSED_DEADLINE_TRANSIENT


class MissedDeadlineTransientError(MissedDeadlineError):
    code = ResultCode.MISSED_DEADLINE_TRANSIENT


class MissedDeadlinePersistentError(MissedDeadlineError):
    code = ResultCode.MISSED_DEADLINE_PERSISTENT


class ResourceExhaustedError(NNError):
    """RESOURCE_EXHAUSTED_TRANSIENT by default; pass ``code`` for the persistent one."""

    code = ResultCode.RESOURCE_EXHAUSTED_TRANSIENT


class ResourceExhaustedTransientError(ResourceExhaustedError):
    code = ResultCode.RESOURCE_EXHAUSTED_TRANSIENT


class ResourceExhaustedPersistentError(ResourceExhaustedError):
    code = ResultCode.RESOURCE_EXHAUSTED_PERSISTENT


class DeadObjectError(NNError):
    code = ResultCode.DEAD_OBJECT


class UnsupportedOperationError(OpFailedError):
    """The model is valid NNAPI but uses something nnc does not implement yet."""

    def __init__(
        self,
        function: str,
        operation_index: int,
        operation_type: OperationType | int,
        operand_types: list[str],
        reason: str = "not implemented",
    ):
        self.operation_index = operation_index
        self.operation_type = operation_type
        self.operand_types = operand_types
        name = (
            operation_type.name
            if isinstance(operation_type, OperationType)
            else str(operation_type)
        )
        super().__init__(
            function,
            f"operation {operation_index} ({name}) with operand types "
            f"[{', '.join(operand_types)}] is not supported by nnc: {reason}",
        )


#: The most specific class for each result code (one class per code).
_BY_CODE: dict[ResultCode, type[NNError]] = {
    cls.code: cls
    for cls in (
        OutOfMemoryError,
        IncompleteError,
        UnexpectedNullError,
        BadDataError,
        OpFailedError,
        BadStateError,
        UnmappableError,
        OutputInsufficientSizeError,
        UnavailableDeviceError,
        MissedDeadlineTransientError,
        MissedDeadlinePersistentError,
        ResourceExhaustedTransientError,
        ResourceExhaustedPersistentError,
        DeadObjectError,
    )
}


def error_for(code: ResultCode | int, function: str, message: str) -> NNError:
    """The NNError subclass that matches ``code``.  A code nnc does not know
    gives a plain NNError carrying that number (unknown is failure)."""
    try:
        rc = ResultCode(code)
    except ValueError:
        return NNError(function, message, int(code))
    if rc == ResultCode.NO_ERROR:
        raise ValueError("error_for(NO_ERROR): NO_ERROR is not an error")
    return _BY_CODE[rc](function, message, rc)


def check(code: ResultCode | int, function: str, message: str = "") -> None:
    """The one central check: return on NO_ERROR, raise the
    matching NNError for anything else, including codes nnc does not know."""
    if int(code) != ResultCode.NO_ERROR:
        raise error_for(int(code), function, message or "the call failed")


def rebrand(err: NNError, function: str) -> NNError:
    """A fresh copy of ``err`` reported by ``function`` (e.g. an asynchronous
    computation's error as returned by ANeuralNetworksEvent_wait), keeping
    the code, message and extra attributes and chaining the original."""
    new = error_for(err.code, function, err.message)
    extra = {k: v for k, v in err.__dict__.items() if k not in ("function", "message", "code")}
    new.__dict__.update(extra)
    new.__cause__ = err
    return new


F = TypeVar("F", bound=Callable[..., Any])


def ndk(function: str, *, free: bool = False) -> Callable[[F], F]:
    """Decorate a method that implements NDK ``function``.

    C's ``ANeuralNetworksX_f(NULL, ...)`` is ``nnc.X.f(None, ...)`` in
    Python: it raises UnexpectedNullError before anything else is looked at
    (the NULL check comes before state and data).  A method called on an
    object that was closed (freed) raises BadStateError instead of touching
    released resources.  A ``free`` method (``close``) accepts both: freeing
    NULL does nothing and closing twice is harmless.
    """

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def checked(self, *args, **kwargs):
            if self is None:
                if free:
                    return None
                raise UnexpectedNullError(function, "the object handle is null (None)")
            if not free and getattr(self, "_closed", False):
                raise BadStateError(function, f"the {type(self).__name__} was closed (freed)")
            return method(self, *args, **kwargs)

        checked.ndk_function = function  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]

    return wrap
