"""Standard-input program tests (standard library only): how one travels in a job, how the trusted
supervisor runs it (``run_program_job``, from ``_tester.run_tests``) and what the candidate process does
for it (``serve_program``, from ``_candidate.serve``).

**One candidate process per test.** A job whose tests are program tests (``_outputs.encode_test``) holds exactly
one; the judge (``sandbox/stdin_programs.py``) sends one job per test, and each job gets a fresh candidate process
from the launcher, as every execution does (``_zygote.supervise`` takes one spare per job). Running a program
twice in one process would be wrong: a program is free to change its module's state, ``sys``, its input
stream, and what one run leaves would be the next one's start.

**The trust split is the one of function tests.** The supervisor sends the program (compiled, never run
there) and then the test's *input* only; the accepted outputs never leave the supervisor. The candidate
process puts the input on its fd 0 (a sealed in-memory file, as a ``< file`` redirection would), points
fd 2 at ``/dev/null`` and runs the program as ``__main__``; its stdout is the process's fd 1, the output
pipe the supervisor reads itself (everything up to the output cap is kept), so whatever the program writes,
by ``print``, ``os.write(1, ...)``, a replaced ``sys.stdout`` or a child process, is what is compared, in
the supervisor, by ExecEval's rules (``_outputs.py``). As the interpreter does at exit, the candidate then
waits for the program's non-daemon threads, runs its ``atexit`` functions and flushes the streams, and exits
with the program's status (``sys.exit``'s, ``os._exit``'s own, or 1 after an uncaught exception).

**When and how the program ended is observed, never reported.** The program runs in the process that holds
the channel, so it could write anything there. The supervisor therefore learns that the program ended, and
its exit status and CPU time, from the launcher, which reaps the process (``wait4``) and says so on a socket
the candidate never holds (``_protocol.program_outcome``). The channel carries one thing after the input:
the description of the exception that ended the program (type, message, its own frames), a value shown in
the feedback, accepted only from a process that then exited with a non-zero status. A program that writes a
fake report and loops is a ``timeout``; one that exits with status 3 is an ``error``; any other message is a
``ProtocolError``.
"""

from __future__ import annotations

import atexit
import builtins
import io
import json
import os
import sys
import time
import types
from typing import Any

import _wire
from _outputs import PROGRAM_TEST_PREFIX, accepted, decode_output, normalise_text
from _protocol import program_outcome
from _returns import load_candidate
from _strict import CANDIDATE_FILE, describe, exception_message, own_frames, safe_text

_REQUEST_BYTES = 256 * 1024 * 1024
_PENDING_BYTES = 1 << 20  # what is read of the channel once the candidate process has ended


def is_program_job(tests: list[str]) -> bool:
    return bool(tests) and all(test.startswith(PROGRAM_TEST_PREFIX) for test in tests)


def _truncated(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [truncated, {len(text)} characters]"


def io_feedback(stdin: str, expected: str, actual: str, max_chars: int) -> str:
    """The test as a pipeline's feedback shows it: input, expected and actual output, each truncated."""
    part = max(40, max_chars // 4)
    return (f"Input:\n{_truncated(stdin.rstrip(), part)}\nExpected output:\n{_truncated(expected.rstrip(), part)}\n"
            f"Actual output:\n{_truncated(actual, part)}")


def await_exit(session: Any) -> dict[str, Any]:
    """Until the launcher reports that the candidate process ended (its wait status and CPU time, observed
    by the launcher: ``_jail.Launcher.watch``), reading output meanwhile; Abort at the deadline."""
    session.launcher.watch()
    session.wait_for(session.launcher.socket.fileno())
    report: dict[str, Any] = session.launcher.exit_report()
    session.drain_output()
    return report


def pending_messages(session: Any) -> list[Any]:
    """Every whole message on the channel once the candidate process has ended, decoded; a part of one, or
    more than ``_PENDING_BYTES``, is a violation."""
    data = session.read_pending(_PENDING_BYTES)
    messages = []
    while data:
        size = int.from_bytes(data[:_wire.HEADER], "little")
        if len(data) < _wire.HEADER + size:
            raise session.violation("a part of a message")
        messages.append(session.decoded(data[_wire.HEADER:_wire.HEADER + size]))
        data = data[_wire.HEADER + size:]
    session.check_time()
    return messages


def run_program_job(job: dict[str, Any], session: Any,
                    abort: type[BaseException]) -> tuple[list[dict[str, Any]], bool, int | None]:
    """The supervisor's side of a program job (as ``_tester.run_tests``: events, whether all ran, the test
    running when it ended)."""
    limits = job["limits"]
    max_chars = int(limits["max_feedback_chars"])
    if len(job["tests"]) != 1:
        return [{"event": "loaded", "status": "error", "exception_type": "SandboxFailure",
                 "message": "a program job runs exactly one test", "feedback": None}], True, None
    test = json.loads(job["tests"][0][len(PROGRAM_TEST_PREFIX):])
    session.keep_output = int(limits["max_output_bytes"])  # the whole stdout is the answer
    names, events = load_candidate(session, job, mode="program", entry_point=None)
    if names is None:
        return events, True, None
    stdin = normalise_text(str(test["input"]))
    session.set_deadline(time.monotonic() + float(limits["test_timeout_s"]), "test 0")
    started = time.monotonic()
    try:
        session.send(_wire.dumps(["run", stdin]))
        ended = await_exit(session)
        outcome = session.checked(program_outcome, ended, pending_messages(session), float(limits["cpu_time_s"]),
                                  max_chars)
        session.check_time()
    except abort:
        return events, False, 0
    actual = decode_output(bytes(session.output))
    outputs = [str(output) for output in test["outputs"]]
    shown = io_feedback(stdin, normalise_text(outputs[0]) if outputs else "", safe_text(actual), max_chars)
    if outcome is not None:
        outcome["feedback"] = f"{outcome['feedback']}\n{shown}" if outcome.get("feedback") else shown
    else:
        rules = "execeval" if test.get("rules") == "execeval" else "strict"
        if not accepted(outputs, actual, rules):
            outcome = {"status": "failed", "exception_type": "WrongAnswer",
                       "message": "the output matches no accepted output", "feedback": shown}
        elif rules == "execeval" and not accepted(outputs, actual, "strict"):
            outcome = {"status": "passed", "execeval_only": True}  # the strict rules reject this output
        else:
            outcome = {"status": "passed"}
    events.append({"event": "end", "test": 0, "duration_s": time.monotonic() - started, **outcome})
    return events, True, None


# --- the candidate process ----------------------------------------------------------------------------

def _exit_status(code: Any) -> int:
    """The status an interpreter exits with for ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except BaseException:
        pass
    return 1


def _redirect(stdin: str) -> io.TextIOWrapper:
    """fd 0 reads ``stdin``; fd 2 goes nowhere; fresh ``sys`` streams on fds 0, 1 and 2."""
    memory = os.memfd_create("stdin", os.MFD_CLOEXEC)
    os.write(memory, stdin.encode("utf-8", "surrogatepass"))
    os.lseek(memory, 0, os.SEEK_SET)
    os.dup2(memory, 0)
    os.close(memory)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "wb", closefd=False)), encoding="utf-8")
    streams = {"stdin": io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "rb", closefd=False)), encoding="utf-8"),
               "stdout": stdout,
               "stderr": io.TextIOWrapper(io.FileIO(2, "wb", closefd=False), encoding="utf-8", write_through=True)}
    for name, stream in streams.items():
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    return stdout


def _finish(streams: list[Any]) -> None:
    """What the interpreter does at exit: join non-daemon threads, run ``atexit`` functions, flush."""
    threading = sys.modules.get("threading")
    if threading is not None:
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                try:
                    thread.join()
                except BaseException:
                    pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in [sys.stdout, sys.stderr, *streams]:
        try:
            stream.flush()
        except BaseException:
            pass


def _no_handle(value: Any) -> Any:
    raise _wire.NotData("only text describes an exception")


def serve_program(channel: int, program: types.CodeType, max_chars: int) -> None:
    """Report the program loaded, wait for the input, run the program once on it and exit with its status
    (after an uncaught exception, its description on the channel first); the launcher reports the exit."""
    real_exit, own_pid = os._exit, os.getpid()
    _wire.send(channel, _wire.dumps(["loaded", []]))
    request = _wire.receive(channel, _REQUEST_BYTES)
    if request is None:
        real_exit(0)
    stdin = json.loads(request)[1]  # from the supervisor: trusted plain JSON
    stdout = _redirect(str(stdin))
    atexit._clear()  # the launcher's own, inherited by the fork: not the program's
    sys.argv = [CANDIDATE_FILE]
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main

    def end(status: int, error: dict[str, Any] | None = None, is_memory: bool = False) -> None:
        _finish([stdout])
        try:
            if error is not None and os.getpid() == own_pid:  # a process the program forked says nothing
                _wire.send(channel, _wire.dumps(["raised", _wire.encode_value(error, _no_handle), is_memory]))
        finally:
            real_exit(status)

    try:
        exec(program, main.__dict__)
    except SystemExit as stop:
        end(_exit_status(stop.code))
    except BaseException as exc:
        frames = own_frames(exc)
        message = exception_message(exc)[: max_chars * 4]
        exc.__traceback__ = None
        end(1, describe(type(exc).__name__, message, frames, max_chars, isinstance(exc, RecursionError)),
            isinstance(exc, MemoryError))
    end(0)
