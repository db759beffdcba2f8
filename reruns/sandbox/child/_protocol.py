"""What the candidate's process may say on the channel, checked by the trusted supervisor (standard library
only; the supervisor's alone).

**The candidate's process is the author of nothing but its values.** Its program runs in the process that
holds the channel, so anything that process writes may have been written by the program: a loading report,
a call's reply, an exception's description. So a message from it only ever *carries values* (what a name is
bound to, what a call returned or raised, what a program's exception said); every rule is decided here,
from what the trusted side observes itself:

* **which names the tests see** is decided by the job (the entry point and the problem's interface, or
  every name for a pipeline's feedback): a loading report naming any other name is a violation
  (:func:`loading_report`), whatever the candidate process filtered;
* **when a program ended and with what status** comes from the launcher, which reaps the candidate process
  (``wait4``: its real exit status and CPU time) and reports it on a socket the candidate never holds
  (``_jail.Launcher.watch``); nothing on the channel can say that a program ran, or how it ended
  (:func:`program_outcome`);
* **sequence**: each call carries a number its reply repeats, and one reply answers one call: a reply out of
  sequence, a message nobody asked for, a second loading report, a malformed or over-limit message end the
  execution as an ``error`` (``ProtocolError``), never as a pass (:class:`Violation`).

Text from the candidate (exception type names, messages, frames, its output) is made safe once, where it
enters (``_strict.safe_text``): no lone surrogate or control character reaches a printer downstream, and no
field is converted with ``str()``/``int()`` of a value the candidate chose (a 5,000-digit ``int`` raises
there): every field must already be of its exact type.

A new kind of runner on the supervisor's side uses ``_tester.Session`` (``send``, ``receive``, ``request``,
``wait_for``, ``read_pending``, ``decoded``, ``finish``), ``_returns.load_candidate`` (which checks the
loading report with :func:`loading_report`), ``_stdin_tests.await_exit`` for the launcher's report of the
process's end (:func:`program_outcome` reads it), and :class:`Violation` (through ``Session.checked``) for
anything else it reads from the candidate's process.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from _strict import safe_text

# Bounds on what a candidate's exception may cost this process (see ``_returns``): its type's name (an
# identifier), its message and frames.
MAX_TYPE_NAME_CHARS = 100
MAX_MESSAGE_CHARS = 20_000
MAX_FRAMES = 64
MAX_FRAME_TEXT_CHARS = 1000
_MAX_LINE = 1 << 31
LOAD_STATUSES = ("error", "memory_exceeded")


class Violation(Exception):
    """The candidate's process broke the protocol: the execution ends as an ``error`` (``ProtocolError``)."""


def text(value: Any, limit: int, what: str) -> str:
    """A text field: a ``str`` (anything else is a violation), cut to ``limit`` characters, made safe."""
    if type(value) is not str:
        raise Violation(f"{what} is not a string")
    return safe_text(value[:limit])


def number(value: Any, what: str, low: int = 0, high: int = _MAX_LINE) -> int:
    """An integer field within [low, high) (a bool, a float or a huge int is a violation)."""
    if type(value) is not int or not low <= value < high:
        raise Violation(f"{what} is not an integer in range")
    return value


def type_name(value: Any) -> str:
    """The candidate's exception type name, or ``CandidateError`` for one that is not a short identifier."""
    name = text(value, MAX_TYPE_NAME_CHARS + 1, "an exception type name")
    return name if len(name) <= MAX_TYPE_NAME_CHARS and name.isidentifier() else "CandidateError"


def frame(value: Any) -> tuple[Any, ...]:
    """One of the candidate's traceback frames: what ``_strict.describe`` formats, each field of its type."""
    if type(value) is not list or len(value) != 7:
        raise Violation("a traceback frame is not a list of 7 fields")
    name, line, function, source, end, column, end_column = value
    optional = [None if part is None else number(part, "a frame's position") for part in (end, column, end_column)]
    return (text(name, MAX_FRAME_TEXT_CHARS, "a frame's file"), number(line, "a frame's line"),
            text(function, MAX_FRAME_TEXT_CHARS, "a frame's function"),
            text(source, MAX_FRAME_TEXT_CHARS, "a frame's source line"), *optional)


def description(value: Any, max_chars: int) -> dict[str, str]:
    """An exception's description as the candidate process made it (``_strict.describe``): type name,
    message and traceback text, each checked and made safe."""
    if type(value) is not dict or not set(value) <= {"exception_type", "message", "feedback"}:
        raise Violation("an exception's description is not one")
    described = {"exception_type": type_name(value.get("exception_type", ""))}
    for key in ("message", "feedback"):
        if value.get(key) is not None:
            described[key] = text(value[key], max(max_chars * 4, 1), f"an exception's {key}")
    return described


def _allowed(name: str, job: dict[str, Any]) -> bool:
    """Whether the tests may see ``name`` (the job decides: the entry point, the problem's interface, or every
    name but the dunders for a pipeline's feedback)."""
    wanted = job.get("names") or ()
    return name == job.get("entry_point") or name in wanted or ("*" in wanted and not name.startswith("__"))


def loading_report(message: Any, job: dict[str, Any], max_chars: int) -> tuple[list[Any] | None, dict[str, Any]]:
    """The candidate's loading report: (the names the tests may see with their values, the "loaded" event),
    or (None, the load-error event). A name the job does not allow, a name twice, or any other shape is a
    :class:`Violation`."""
    if type(message) is not list or not message:
        raise Violation("the first message is not a loading report")
    if message[0] == "loaded" and len(message) == 2 and type(message[1]) is list:
        seen: set[str] = set()
        for pair in message[1]:
            if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                raise Violation("a loaded name is not a (name, value) pair")
            if pair[0] in seen or not _allowed(pair[0], job):
                raise Violation(f"the loading report names {safe_text(pair[0][:100])!r}, which the tests may not "
                                "see (or twice)")
            seen.add(pair[0])
        return message[1], {"event": "loaded", "status": "ok"}
    if message[0] == "load_error" and len(message) == 3 and message[1] in LOAD_STATUSES:
        return None, {"event": "loaded", "status": message[1], **description(message[2], max_chars)}
    raise Violation("the first message is not a loading report")


def call_reply(message: Any, sequence: int, watched: list[int]) -> tuple[str, Any, Any]:
    """A call's reply: ("ok", the value, [(argument index, new contents)]) or ("raise", (type name, message,
    frames), whether it was a MemoryError). It must answer call ``sequence``, and change only arguments the
    call named as ``watched`` (those the test holds)."""
    if type(message) is not list or len(message) < 2 or message[1] != sequence or type(message[1]) is not int:
        raise Violation("a reply out of sequence")
    if message[0] == "ok" and len(message) == 4 and type(message[3]) is list:
        changed = []
        for pair in message[3]:
            if type(pair) is not list or len(pair) != 2:
                raise Violation("a changed argument is not an (index, value) pair")
            if type(pair[0]) is not int or pair[0] not in watched:
                raise Violation("a changed argument the call did not name")
            changed.append((pair[0], pair[1]))
        return "ok", message[2], changed
    if message[0] == "raise" and len(message) == 6 and type(message[4]) is list and type(message[5]) is bool:
        frames = [frame(part) for part in message[4][:MAX_FRAMES]]
        return "raise", (type_name(message[2]), text(message[3], MAX_MESSAGE_CHARS, "an exception's message"),
                         frames), message[5]
    raise Violation("a reply of no known kind")


def program_outcome(exit_report: dict[str, Any], messages: list[Any], cpu_limit_s: float,
                    max_chars: int) -> dict[str, Any] | None:
    """How a standard-input program ended, from the launcher's report of its wait status and CPU time (never
    from the channel): None for a clean exit with status 0, else the test's outcome. The channel may carry one
    description of the exception that ended it, and only when it ended with a non-zero status (a message
    otherwise, or more than one, is a :class:`Violation`)."""
    status, cpu_s = exit_report.get("exited"), float(exit_report.get("cpu_s") or 0.0)
    if len(messages) > 1:
        raise Violation("more than one message after the program ran")
    raised = None
    if messages:
        message = messages[0]
        if type(message) is not list or len(message) != 3 or message[0] != "raised" or type(message[2]) is not bool:
            raise Violation("a message after the program ran that is not an exception's description")
        raised = (description(message[1], max_chars), message[2])
    if status is None:
        return {"status": "error", "exception_type": "NoReport", "message": "the program's process could not be observed"}
    if os.WIFSIGNALED(status):
        if raised is not None:
            raise Violation("an exception's description from a program killed by a signal")
        signum = os.WTERMSIG(status)
        name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else f"signal {signum}"
        if signum == signal.SIGXCPU or (signum == signal.SIGKILL and cpu_s >= cpu_limit_s):
            return {"status": "timeout", "exception_type": "CPUTimeExceeded",
                    "message": f"killed by {name} (CPU time limit, {cpu_s:.1f} s used)"}
        return {"status": "crashed", "exception_type": name, "message": f"killed by signal {name}"}
    code = os.WEXITSTATUS(status)
    if code == 0:
        if raised is not None:
            raise Violation("an exception's description from a program that exited with status 0")
        return None
    if raised is not None:
        described, is_memory = raised
        return {"status": "memory_exceeded" if is_memory else "error", **described}
    return {"status": "error", "exception_type": "NonZeroExit", "message": f"the program exited with status {code}"}
