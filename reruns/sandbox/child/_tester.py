"""The test side of an execution, in the trusted supervisor: run each test, calling the candidate over the
channel (standard library only).

The tests run in the supervisor's own interpreter, which never executes candidate code. A name the
candidate defined is, in the tests' namespace, a :class:`Remote`: calling it sends the arguments to the
candidate process as plain data (``_wire``) and brings the return value back the same way; a module
the candidate imported is the supervisor's own copy of that module (standard library only; others are
handles). While it waits for an answer the supervisor enforces the wall limits and the output cap;
when one is passed, or the candidate process breaks the protocol or ends, :class:`Abort` (not an
``Exception``) ends the test, and the execution ends whatever the test code did with it.

**The rule for what is not plain data.** A value the candidate returns that ``_wire`` cannot carry (an
instance of a class the candidate defined, a generator, a function) stays in the candidate process;
the test gets a :class:`Remote` handle on it, which it may call, get and set attributes of, iterate,
index, take ``len``/``repr``/``str`` of, and pass back in a call; comparing one (``==``, ``!=``, ``in`` a
list) or taking its truth (``assert``, ``if``, ``not``) is ``failed`` ("non-plain type"): its equality and
truth would be the candidate's to decide. Everything else a test compares was made by this process's own
decoder, of exact builtin types, so the tests run as written, with no rewrite. The test's own
objects that are not data (a lambda, an instance of a test-defined class) cannot be sent: the call
raises ``TypeError``. A mutable argument (``list``, ``dict``, ``set``, ``bytearray``) that the call
changed is updated in place, after the call, to its new contents; objects nested in it are replaced
by copies, and aliasing between arguments is not kept.
"""

from __future__ import annotations

import os
import select
import sys
import time
import types
from typing import Any

import _stdin_tests
import _wire
from _namespace import BACKSTOP, IN_TEST, test_namespace, unwatch, watch  # noqa: F401 (watch, unwatch: for the supervisor)
from _protocol import Violation, call_reply
from _returns import candidate_exception, copy_back, failed_outcome, load_candidate
from _strict import TEST_FILE, compile_test, register_test_source, safe_text
from _testcache import CompiledTests

MAX_REPLY_BYTES = 32 * 1024 * 1024  # decoding 32 MiB of JSON takes about a second
OUTPUT_KEPT = 8192
# The channel and the output pipe are read into this buffer (``os.read(fd, 1 MiB)`` made a 1 MiB object for every
# reply, which glibc took from the heap's top and trimmed again: fresh zeroed pages, ~15 us of every call).
_READ = memoryview(bytearray(1 << 20))


class Abort(BaseException):
    """Ends the execution: a limit was passed, or the candidate process ended or broke the protocol."""


class Remote:
    """A handle on an object in the candidate process (see the module docstring for what it allows)."""

    __slots__ = ("_number", "_session", "_type")

    def __init__(self, session: Session, number: int, type_name: str) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_number", number)
        object.__setattr__(self, "_type", type_name)

    @staticmethod
    def remote_type_name(handle: Remote) -> str:
        return str(object.__getattribute__(handle, "_type"))

    def _ask(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        return self._session.request(operation, self._number, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ask("call", *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._ask("getattr", name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._ask("setattr", name, value)

    def __iter__(self) -> Any:
        return self._ask("iter")

    def __next__(self) -> Any:
        return self._ask("next")

    def __len__(self) -> int:
        return int(self._ask("len"))

    def __getitem__(self, key: Any) -> Any:
        return self._ask("getitem", key)

    def __contains__(self, item: Any) -> bool:
        return bool(self._ask("contains", item))

    # Comparing a handle, or asserting (taking the truth of) one, is ``failed``: its equality and truth are
    # the candidate's to decide, so a test may not rely on them. Hashing stays by identity.
    def __eq__(self, other: object) -> bool:
        raise AssertionError(f"compared a value of non-plain type {Remote.remote_type_name(self)!r}")

    def __ne__(self, other: object) -> bool:
        raise AssertionError(f"compared a value of non-plain type {Remote.remote_type_name(self)!r}")

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise AssertionError(f"truth of a value of non-plain type {Remote.remote_type_name(self)!r}")

    def __repr__(self) -> str:
        return str(self._ask("repr")) if self._session.open else f"<{self._type} in the candidate process>"

    def __str__(self) -> str:
        return str(self._ask("str")) if self._session.open else repr(self)


def _module(tag: dict[str, Any], session: Session) -> Any:
    """A module the candidate sends: a handle on its own (a name it sends never reaches this process's
    modules, which later executions use)."""
    if "h" not in tag:
        raise ValueError("a module without a handle")
    return Remote(session, int(tag["h"]), "module")


class Session:
    """One execution's channel to the candidate process, with its wall limits and output cap."""

    def __init__(self, channel: int, output: int, limits: dict[str, Any], started: float,
                 launcher: Any = None) -> None:
        self.channel, self.output_fd, self.limits = channel, output, limits
        self.launcher = launcher  # reports the candidate process's end (``await_exit``), on a socket of its own
        self.kill_reason: list[str] | None = None  # [status, message, exception type]
        self.gone = False
        self.open = True
        self.output = bytearray()
        self.output_total = 0
        self.keep_output = OUTPUT_KEPT  # a program test keeps its whole stdout (``_stdin_tests``)
        self.problem_deadline = started + float(limits["problem_timeout_s"])
        self.test_deadline = started
        self.where = ""
        self.calls = 0  # the sequence number of the last call: its reply must repeat it
        self.set_deadline(started + float(limits["test_timeout_s"]), "loading the candidate")
        self._buffer = b""
        self._poll = select.poll()  # the output pipe, and the channel while one waits on it
        self._poll.register(output, select.POLLIN)
        self._output_open = True
        os.set_blocking(channel, False)
        os.set_blocking(output, False)
        self.decode = _wire.decoder(lambda tag: Remote(self, int(tag["v"]), str(tag.get("n", "object"))),
                                    lambda tag: _module(tag, self))

    def set_deadline(self, test_deadline: float, where: str) -> None:
        """The running stage's deadline (the problem's, if sooner, still holds) and the backstop behind it."""
        self.test_deadline, self.where = test_deadline, where
        BACKSTOP.arm(min(self.problem_deadline, test_deadline))

    def end(self, reason: list[str] | None = None, gone: bool = False) -> Abort:
        if reason is not None and self.kill_reason is None and not self.gone:
            self.kill_reason = reason
        self.gone = self.gone or gone
        self.open = False
        return Abort()

    def violation(self, detail: str) -> Abort:
        """The candidate process broke the protocol (``_protocol``): the execution ends as an ``error``."""
        return self.end(["error", f"the candidate process broke the protocol: {detail}", "ProtocolError"])

    def checked(self, check: Any, *args: Any) -> Any:
        """``check(*args)`` (a ``_protocol`` function), a :class:`~_protocol.Violation` ending the execution."""
        try:
            return check(*args)
        except Violation as exc:
            raise self.violation(str(exc)) from None

    def trusted_side_failed(self, exc: BaseException) -> None:
        """An exception on the trusted side: the execution ends as an ``error`` naming the stage and the cause."""
        try:
            cause = f"{type(exc).__name__}: {safe_text(str(exc)[:500])}"
        except Exception:
            cause = type(exc).__name__
        self.end(["error", f"the judge failed while {self.where or 'judging'} ({cause})", "SandboxFailure"])

    def _deadline_passed(self, now: float) -> Abort:
        problem = now >= self.problem_deadline
        limit = self.limits["problem_timeout_s"] if problem else self.limits["test_timeout_s"]
        which = "the problem" if problem else self.where
        return self.end(["timeout", f"{which} exceeded the {limit:g} s wall limit", "Timeout"])

    def check_time(self) -> None:
        now = time.monotonic()
        if now >= min(self.problem_deadline, self.test_deadline):
            raise self._deadline_passed(now)

    def drain_output(self) -> None:
        """Read what the candidate printed so far (the supervisor keeps the first 8 KiB)."""
        while True:
            try:
                count = os.readv(self.output_fd, [_READ[:65536]])
            except BlockingIOError:
                return
            if not count:
                if self._output_open:
                    self._poll.unregister(self.output_fd)  # every writer is gone: no more POLLHUP
                    self._output_open = False
                return
            self.output_total += count
            if len(self.output) < self.keep_output:
                self.output.extend(_READ[: min(count, self.keep_output - len(self.output))])
            if self.output_total > int(self.limits["max_output_bytes"]) and self.open:
                raise self.end(["error", f"output exceeded {self.limits['max_output_bytes']} bytes",
                                "OutputLimitExceeded"])

    def wait_for(self, descriptor: int, events: int = select.POLLIN) -> None:
        """Until ``descriptor`` (the channel, or the launcher's socket) is ready for ``events``, reading output
        meanwhile; Abort at a deadline."""
        self._poll.register(descriptor, events)
        try:
            while True:
                now = time.monotonic()
                deadline = min(self.problem_deadline, self.test_deadline)
                if now >= deadline:
                    raise self._deadline_passed(now)
                for fd, _ in self._poll.poll((deadline - now) * 1000 + 1):
                    if fd == descriptor:
                        return
                    self.drain_output()
        finally:
            self._poll.unregister(descriptor)

    def send(self, payload: bytes) -> None:
        data = memoryview(len(payload).to_bytes(_wire.HEADER, "little") + payload)
        while data:
            try:
                data = data[os.write(self.channel, data):]
            except BlockingIOError:
                self.wait_for(self.channel, select.POLLOUT)
            except OSError:
                raise self.end(gone=True) from None

    def receive(self) -> Any:
        """The candidate's next message, decoded."""
        while True:
            if len(self._buffer) >= _wire.HEADER:
                size = int.from_bytes(self._buffer[:_wire.HEADER], "little")
                if size > MAX_REPLY_BYTES:
                    raise self.end(["error", f"the candidate process sent a message of {size} bytes, over the "
                                    f"{MAX_REPLY_BYTES}-byte limit", "ProtocolError"])
                if len(self._buffer) >= _wire.HEADER + size:
                    if len(self._buffer) > _wire.HEADER + size:  # one message answers one request
                        raise self.violation("a message nobody asked for")
                    payload, self._buffer = self._buffer[_wire.HEADER:], b""
                    value = self.decoded(payload)
                    self.check_time()  # decoding counts against the deadline
                    return value
            self.wait_for(self.channel)  # before reading: the answer is almost never there yet
            try:
                count = os.readv(self.channel, [_READ])
            except BlockingIOError:
                continue
            except OSError:
                count = 0
            if not count:
                raise self.end(gone=True)
            self._buffer += _READ[:count]

    def decoded(self, payload: bytes) -> Any:
        """A message's value (``_wire``'s decoder: plain data and handles); a malformed one is a violation."""
        try:
            return self.decode(payload)
        except ValueError as exc:
            raise self.violation(f"a malformed message ({safe_text(str(exc))})") from None

    def read_pending(self, limit: int) -> bytes:
        """What is on the channel now, unread (more than ``limit`` bytes is a violation)."""
        while len(self._buffer) <= limit:
            try:
                count = os.readv(self.channel, [_READ[:1 << 16]])
            except (BlockingIOError, ConnectionError):
                break
            if not count:
                break
            self._buffer += _READ[:count]
        if len(self._buffer) > limit:
            raise self.violation("too much on the channel")
        data, self._buffer = self._buffer, b""
        return data

    def finish(self) -> None:
        """After the last reply: a message still on the channel was one nobody asked for."""
        try:
            if self._buffer or os.read(self.channel, 1):
                raise self.violation("a message nobody asked for")
        except (BlockingIOError, ConnectionError):
            pass

    def _outgoing(self, value: Any) -> Any:
        if type(value) is Remote and object.__getattribute__(value, "_session") is self:
            return {"~": "h", "v": object.__getattribute__(value, "_number")}
        if isinstance(value, types.ModuleType):
            return {"~": "m", "v": value.__name__}
        raise _wire.NotData(f"a value of type {type(value).__name__!r} cannot be sent to the candidate: "
                            "only plain data crosses")

    def request(self, operation: str, number: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One operation on a candidate object; its result, or its exception raised here. The call carries
        its sequence number, which the reply must repeat (``_protocol.call_reply``)."""
        if not self.open:
            raise Abort()
        watched = [index for index, arg in enumerate(args)
                   if type(arg) in _MUTABLE and sys.getrefcount(arg) > _TEMPORARY_REFERENCES]
        self.calls += 1
        fast = _wire.call_message([operation, number, list(args), kwargs, watched, self.calls])
        try:
            payload = fast or _wire.dumps([operation, number, _wire.encode_value(list(args), self._outgoing),
                                           _wire.encode_value(kwargs, self._outgoing), watched, self.calls])
        except (_wire.NotData, RecursionError) as exc:
            raise TypeError(str(exc)) from None
        self.send(payload)
        kind, value, extra = self.checked(call_reply, self.receive(), self.calls, watched)
        self.check_time()
        if kind == "ok":
            for index, new in extra:
                copy_back(args[index], new)
            return value
        type_name, message, frames = value
        raised: BaseException = MemoryError(message) if extra else candidate_exception(type_name, message)
        raised.sotacheck_remote = (type_name, message, frames)  # type: ignore[attr-defined]
        raise raised


_MUTABLE = (list, dict, set, bytearray)


class _Probe:
    """Counts the references a temporary argument has when it reaches ``Session.request``."""

    open = True
    counted = 0

    def request(self, operation: str, number: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.counted = sys.getrefcount(args[0])


def _temporary_references() -> int:
    """The references an argument nobody else holds has in ``Session.request`` (measured, not assumed:
    it depends on the interpreter). An argument with more is held by the test, which may look at it
    after the call; only such arguments are copied back."""
    probe = _Probe()
    Remote(probe, 0, "probe")([])  # type: ignore[arg-type]
    return probe.counted


def run_tests(job: dict[str, Any], compiled: CompiledTests,
              session: Session) -> tuple[list[dict[str, Any]], bool, int | None]:
    """Load the candidate, run each test; returns the events, whether all ran, and the test running when
    the execution ended (-1 while loading, None between tests). A job of standard-input program tests is
    run by ``_stdin_tests``."""
    if _stdin_tests.is_program_job(job["tests"]):
        return _stdin_tests.run_program_job(job, session, Abort)
    max_chars = int(job["limits"]["max_feedback_chars"])
    names, events = load_candidate(session, job)
    if names is None:
        return events, True, None
    test_ns = test_namespace(names, job, lambda value: type(value) is Remote
                             and Remote.remote_type_name(value) == "module", compiled)
    limit = float(job["limits"]["test_timeout_s"])
    for index, source in enumerate(job["tests"]):
        started = time.monotonic()
        session.set_deadline(started + limit, f"test {index}")
        try:
            if index == 0 and job.get("setup"):
                exec(compile(job["setup"], f"{TEST_FILE}[setup]", "exec"), test_ns)
            code = compiled.codes[index] if index < len(compiled.codes) else None
            if code is None:
                code = compile_test(source, index)
            else:
                register_test_source(source, index)
            IN_TEST[0] = True
            exec(code, test_ns)
            IN_TEST[0] = False
            outcome: dict[str, Any] = {"status": "passed"}
        except Abort:
            IN_TEST[0] = False
            return events, False, index
        except BaseException as exc:
            IN_TEST[0] = False
            outcome = failed_outcome(exc, max_chars)
        if not session.open:  # the test caught what ended the execution
            return events, False, index
        if time.monotonic() >= min(session.problem_deadline, session.test_deadline):
            session._deadline_passed(time.monotonic())
            return events, False, index
        events.append({"event": "end", "test": index, "duration_s": time.monotonic() - started, **outcome})
    session.where = "reading the channel after the last test"
    session.finish()
    return events, True, None


_TEMPORARY_REFERENCES = _temporary_references()


