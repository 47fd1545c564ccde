"""What every fuzz trial shares: the outcome type, the valid model the
bad-argument trials start from, and :func:`nnerror_or_ok`."""

from __future__ import annotations

import traceback
from collections.abc import Callable

import nnc
from nnc import OperandType as T
from nnc import OperationType as Op

#: None when nnc behaved (an NNError or a correct result), else (kind, message)
#: with kind "crash", "hang", "unexpected", "wrong", "ice" (an internal
#: compiler error on a model the model API accepted), "mismatch" (two
#: compilations of one model disagree) or "rejected" (no finding: the
#: operation's rules refused a generated model, an NNError as it should be)
Outcome = tuple[str, str] | None

#: outcome kinds that are not findings
NOT_FINDINGS = frozenset({"rejected"})


def is_finding(outcome: Outcome) -> bool:
    """Whether ``outcome`` reports a bug (of nnc or of the trial)."""
    return outcome is not None and outcome[0] not in NOT_FINDINGS


class Finding(Exception):
    """Raised inside a trial to stop it with an outcome (a wrong result or an
    unexpected exception); :func:`guarded` turns it into the Outcome."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class Skip(Exception):
    """A step of a trial that cannot apply yet (no receiver for the call): it does nothing."""


def add_model() -> nnc.Model:
    """A two-input float32 ADD: the valid model the bad-argument trials start from."""
    m = nnc.Model()
    a, b = (m.add_operand(T.TENSOR_FLOAT32, [2]) for _ in range(2))
    act = m.add_operand(T.INT32)
    m.set_operand_value(act, 0)
    o = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(Op.ADD, [a, b, act], [o])
    m.identify_inputs_and_outputs([a, b], [o])
    m.finish()
    return m


def unexpected(what: str, e: BaseException) -> Finding:
    """A non-NNError exception: the finding quotes its innermost frame."""
    tb = traceback.extract_tb(e.__traceback__)
    ours = [f for f in tb if "/nnc/" in f.filename or "/runtime/" in f.filename or "/dialects/" in f.filename
            or "/passes/" in f.filename or "/fuzz/" in f.filename] or tb  # fmt: skip
    frames = [f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno}" for f in ([*ours[-1:], tb[-1]] if tb else [])]
    where = f" at {' < '.join(dict.fromkeys(reversed(frames)))}" if frames else ""
    return Finding("unexpected", f"{what}: {type(e).__name__}: {e}{where}")


def nnerror_or_ok(what: str, call: Callable[[], object]) -> tuple[bool, object]:
    """``(True, result)`` if ``call()`` returned, ``(False, error)`` if it
    raised an NNError; any other exception is a Finding."""
    try:
        return True, call()
    except nnc.NNError as e:
        return False, e
    except (Finding, Skip):
        raise
    except Exception as e:  # noqa: BLE001 - that is what the fuzzer looks for
        raise unexpected(what, e) from None


def guarded(trial: Callable[[int], None]) -> Callable[[int], Outcome]:
    """The trial as a function returning an Outcome: a Finding it raises is
    the outcome, any other exception is "unexpected" (a bug of the trial or
    of nnc: either way worth a look)."""

    def run(seed: int) -> Outcome:
        try:
            trial(seed)
        except Finding as f:
            return f.kind, f.message
        except Exception as e:  # noqa: BLE001
            f = unexpected(f"{trial.__name__}({seed})", e)
            return f.kind, f.message
        return None

    run.__name__ = trial.__name__
    run.__doc__ = trial.__doc__
    return run
