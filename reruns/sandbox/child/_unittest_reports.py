"""What a test process of the unittest runner said, and how it ended (standard library only): the records on its
report pipe, each checked as it arrives, and the verdict for its end from its wait status (``_unittest_runner``'s
docstring says what counts)."""

from __future__ import annotations

import json
import os
import select
import signal
import time
from typing import Any

from _unittest_seal import MAX_REPORT


class Reports:
    """The records a test process wrote on its report pipe, each checked as it arrives: the nonce, the pid of the
    process this runner forked, the next index in order (``_unittest_seal``'s hook writes one line per method)."""

    def __init__(self, nonce: bytes, pid: int, first: int, end: int, started: float) -> None:
        self._prefix = nonce.hex().encode() + f" {pid} ".encode()
        self.next = first
        self._end = end  # the number of test methods: a record for an index past them is damaged
        self.verdicts: list[dict[str, Any]] = []
        self.damaged = False
        self._buffer = b""
        self.last = started

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        while not self.damaged and b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._record(line)
        if len(self._buffer) > MAX_REPORT:
            self.damaged = True

    def _record(self, line: bytes) -> None:
        head, _, body = line[len(self._prefix):].partition(b" ")
        try:
            if not line.startswith(self._prefix) or head != str(self.next).encode() or self.next >= self._end:
                raise ValueError
            reported = json.loads(body)
        except ValueError:
            self.damaged = True
            return
        if type(reported) is not dict or reported.get("status") not in ("passed", "failed") \
                or any(type(value) is not str for value in reported.values()):
            self.damaged = True
            return
        now = time.monotonic()
        verdict = {key: reported[key] for key in ("status", "stage", "exception_type", "message") if key in reported}
        self.verdicts.append(verdict | {"duration_s": round(now - self.last, 4)})
        self.last = now
        self.next += 1


def read_setup(fd: int, deadline: float) -> bytes:
    """What the child said on the setup pipe (``1``, or ``0`` and why it failed) before it closed it."""
    data = b""
    while time.monotonic() < deadline and select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
        chunk = os.read(fd, 1024)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    return data


def read_reports(fd: int, pid: int, reports: Reports, deadline: float) -> bool:
    """Feed ``reports`` from the pipe until the child closed it or exited (True: a process it forked may hold the
    pipe open, which must not hold the task to its time limit) or the deadline passed (False)."""
    try:
        exited: int | None = os.pidfd_open(pid)
    except OSError:
        exited = None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([fd, *([exited] if exited is not None else [])], [], [], left)
            if not ready:
                return False
            if fd not in ready:  # the child ended: what it wrote is in the pipe already
                os.set_blocking(fd, False)
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return True
            if not chunk:
                return True
            reports.feed(chunk)
            if reports.damaged:
                return True
    finally:
        if exited is not None:
            os.close(exited)


def verdict_of_ending(in_time: bool, damaged: bool, status: int) -> dict[str, Any]:
    """How the test process ended, from what this process observed: in time or not, its records, its wait status;
    ``passed`` only for a clean exit (status 0) with every record intact."""
    if not in_time:
        return {"status": "timeout", "message": "the task's time limit ran out during this test"}
    if damaged:
        return {"status": "failed", "exception_type": "NoReport", "message": "the report was damaged"}
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:  # a real-time signal has no name
            name = f"signal {number}"
        if number == signal.SIGXCPU:
            return {"status": "timeout", "message": f"killed by {name} (CPU time limit)"}
        return {"status": "crashed", "exception_type": name, "message": f"killed by signal {name}"}
    code = os.WEXITSTATUS(status)
    if code != 0:
        return {"status": "failed", "exception_type": "NoReport", "message": f"the test process exited with status {code}"}
    return {"status": "passed", "message": "the test process exited with status 0"}
