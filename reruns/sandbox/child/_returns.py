"""What crosses back from the candidate process, made into objects of the test process: its exceptions
(by type name and message, with its traceback frames), the new contents of arguments it changed, and a
test's outcome (standard library only; see ``_tester``). Also the candidate's program, compiled here."""

from __future__ import annotations

import builtins
import marshal
from typing import Any

import _wire
from _protocol import loading_report
from _strict import CANDIDATE_FILE, COMPILE_ERRORS, TEST_FILE, describe, exception_message, own_frames

MAX_PRECOMPILED_CHARS = 200_000
_TEST_BUILTINS = dict(builtins.__dict__)
_FOREIGN_EXCEPTIONS: dict[str, type[BaseException]] = {}
# Classes made for exception type names this process does not have, kept for the process's life.
MAX_FOREIGN_EXCEPTIONS = 256


class CandidateError(Exception):
    """Base of the exceptions that stand for a candidate exception of a type this process does not have."""


def candidate_exception(type_name: str, message: str) -> BaseException:
    """An exception of the candidate's type (builtin ``Exception`` types exist here; others are made, one
    class per name for the first ``MAX_FOREIGN_EXCEPTIONS`` names, ``CandidateError`` itself after that)."""
    kind = _TEST_BUILTINS.get(type_name)
    if isinstance(kind, type) and issubclass(kind, Exception):
        try:
            return kind(message)
        except Exception:
            pass
    if type_name not in _FOREIGN_EXCEPTIONS:
        if len(_FOREIGN_EXCEPTIONS) >= MAX_FOREIGN_EXCEPTIONS:
            return CandidateError(message)
        _FOREIGN_EXCEPTIONS[type_name] = type(type_name, (CandidateError,), {})
    return _FOREIGN_EXCEPTIONS[type_name](message)


def copy_back(argument: Any, new: Any) -> None:
    """A mutable argument's new contents, as the candidate left them, put into the test's own object."""
    if type(argument) is not type(new):
        return
    if isinstance(argument, (list, bytearray)):
        argument[:] = new
    elif isinstance(argument, (dict, set)):
        argument.clear()
        argument.update(new)


def _status_of(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "memory_exceeded"
    if isinstance(exc, AssertionError):
        return "failed"
    return "error"


def failed_outcome(exc: BaseException, max_chars: int) -> dict[str, Any]:
    """A failed test's status and description; a candidate exception keeps its type, message and frames."""
    frames = own_frames(exc)
    if _raised_by_assert(exc) and frames:
        # Shown without the column range the compiler gives an ``assert`` of a comparison: as the feedback
        # read when tests were rewritten (recorded runs replay only if the feedback pipelines saw stays).
        file, line, function, text, _, _, _ = frames[-1]
        frames[-1] = (file, line, function, text, None, None, None)
    remote = getattr(exc, "sotacheck_remote", None)
    if remote is not None:
        type_name, message, candidate_frames = remote
        frames += candidate_frames
    else:
        type_name, message = type(exc).__name__, exception_message(exc)
    return {"status": _status_of(exc), **describe(type_name, message, frames, max_chars,
                                                  type_name == "RecursionError")}


def _raised_by_assert(exc: BaseException) -> bool:
    """An ``AssertionError`` raised by a test's own ``assert`` statement (its innermost frame is the test's),
    not by a function the test called (a handle's comparison, a helper)."""
    if type(exc) is not AssertionError or exc.__traceback__ is None:
        return False
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.startswith(TEST_FILE)


def load_candidate(session: Any, job: dict[str, Any], **fields: Any) -> tuple[Any, list[dict[str, Any]]]:
    """Send the candidate process its job (the program compiled here, its limits and uid, and ``fields``) and
    read its loading report (``_protocol.loading_report``: the names the job allows, checked here): (the names
    with their values, the "loaded" event), or (None, the load-error event)."""
    message = {key: job.get(key) for key in ("code", "entry_point", "names", "limits", "uid", "isolate_network")}
    message.update(fields, compiled=compiled_candidate(job["code"]))
    session.send(_wire.job_message(message))
    names, event = session.checked(loading_report, session.receive(), {**job, **fields},
                                   int(job["limits"]["max_feedback_chars"]))
    return names, [event]


def compiled_candidate(code: str) -> bytes | None:
    """The candidate's program compiled here (``marshal``'ed), where the compiler is warm: in the fresh
    candidate process compiling costs several times as much. Compiling runs none of it. None (too
    large, or it does not compile): the candidate process compiles it, under its limits, and reports."""
    if len(code) > MAX_PRECOMPILED_CHARS:
        return None
    try:
        return marshal.dumps(compile(code, CANDIDATE_FILE, "exec"))
    except COMPILE_ERRORS:
        return None
