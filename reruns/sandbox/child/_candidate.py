"""The candidate process: confine itself, load the candidate's program, then answer the test process's
calls over the channel, plain data in both directions (standard library only).

It runs in a process forked by the candidate launcher (``_jail.py``), which was forked from the
supervisor before the supervisor ever held a test: nothing of any test is in this process's memory, and
this process never sees a test's code, only the arguments a test passes. Whatever the candidate does to
this interpreter (trace functions, patched builtins, ``sys.exit``, threads, signal handlers) stays here:
the test process reads only the messages, through ``_wire``.
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import linecache
import marshal
import os
import resource
import sys
import types
from collections.abc import Callable
from typing import Any

import _stdin_tests
import _wire
from _procs import lock_own_keyrings
from _strict import CANDIDATE_FILE, describe, exception_message, own_frames

# This module's functions look builtins up in a copy taken at import, before any candidate code ran:
# a candidate that rebinds ``builtins.type`` changes what its own code sees, not what this code does.
__builtins__ = dict(vars(builtins))  # type: ignore[assignment]

CLONE_NEWNET = 0x40000000
PR_SET_KEEPCAPS = 8
PR_SET_DUMPABLE = 4
CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
MB = 1024 * 1024
_LIBC = ctypes.CDLL(None, use_errno=True)
# The channel descriptor in the candidate process, and the most a test may send in one message.
CHANNEL_FD = 3
MAX_REQUEST_BYTES = 256 * MB
# Module-level values of the candidate sent as data when loaded (larger ones as handles).
MAX_INLINE_GLOBAL_BYTES = 65536
# Mutable argument types whose new contents are sent back after a call (see ``_tester``).
MUTABLE = (list, dict, set, bytearray)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


# Built once, before any fork: making ctypes objects and resolving libc symbols costs a forked child a
# quarter of a millisecond.
_CAP_HEADER = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
_CAP_DATA = (_CapData * 2)()
_CAP_DATA[0].effective = _CAP_DATA[0].permitted = 1 << CAP_DAC_READ_SEARCH
PRCTL, _CAPSET, UNSHARE = _LIBC.prctl, _LIBC.capset, _LIBC.unshare


def _drop_privileges(uid: int, keep_read_search: bool) -> None:
    """Become ``uid``. Outside the jail the interpreter may live under a root-only path (a pyenv in
    /root), so CAP_DAC_READ_SEARCH is kept: it may still read (never write) such files. In the jail the
    interpreter's directories are reachable without it, and it is dropped with everything else (it
    would allow ``open_by_handle_at``, which reaches files outside a chroot)."""
    if keep_read_search:
        PRCTL(PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if keep_read_search and _CAPSET(ctypes.byref(_CAP_HEADER), _CAP_DATA) != 0:
        pass  # without the capability we are plain ``uid``: safer still, only imports may fail


def confine(limits: dict[str, Any], uid: int | None, isolate_network: bool, jail_root: str | None,
            workdir: str) -> None:
    """Everything the candidate process does to itself, once its job came, before it runs the program."""
    if isolate_network and os.geteuid() == 0:
        UNSHARE(CLONE_NEWNET)  # best effort: a fresh namespace has no interface but a down lo
    if jail_root is not None:
        os.chroot(jail_root)
    elif uid is not None and os.geteuid() == 0:
        os.chown(workdir, uid, uid)
    os.chdir(workdir)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(limits["cpu_time_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    memory = int(limits["memory_mb"]) * MB
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    file_bytes = int(limits["max_file_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))  # no POSIX message queue outlives us
    if uid is not None and os.geteuid() == 0:
        _drop_privileges(uid, keep_read_search=jail_root is None)
        lock_own_keyrings()  # view-only from the first execution on (the launcher empties any other key after each)
    processes = int(limits["max_processes"])
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    sys.setrecursionlimit(int(limits["recursion_limit"]))
    # SIGXFSZ is ignored already (set by the supervisor, inherited): an oversized write raises OSError.


class _Objects:
    """The objects of this process the test process holds handles on, by number."""

    def __init__(self) -> None:
        self.by_number: dict[int, Any] = {}

    def handle(self, value: Any) -> dict[str, Any]:
        number = len(self.by_number) + 1
        self.by_number[number] = value
        if isinstance(value, types.ModuleType):
            return {"~": "m", "v": value.__name__, "h": number}
        return {"~": "h", "v": number, "n": type(value).__name__}

    def lookup(self, tag: dict[str, Any]) -> Any:
        return self.by_number[int(tag["v"])]


def _import(tag: dict[str, Any]) -> Any:
    name = str(tag["v"])
    return sys.modules.get(name) or __import__(name)


# The candidate process's handles (none yet) and its reader of the test process's messages, made once here,
# before any fork: each candidate process starts with its own copy. Made in each of them instead, the
# decoder alone wrote some 40 pages that the fork shares, each a copy-on-write fault in every execution.
_OBJECTS = _Objects()
_DECODE = _wire.decoder(_OBJECTS.lookup, _import)


_OPERATIONS: dict[str, Callable[[Any, list[Any], dict[str, Any]], Any]] = {
    "call": lambda target, args, kwargs: target(*args, **kwargs),
    "getattr": lambda target, args, _: getattr(target, args[0]),
    "setattr": lambda target, args, _: setattr(target, args[0], args[1]),
    "iter": lambda target, _, __: iter(target),
    "next": lambda target, _, __: next(target),
    "len": lambda target, _, __: len(target),
    "getitem": lambda target, args, _: target[args[0]],
    "contains": lambda target, args, _: args[0] in target,
    "repr": lambda target, _, __: repr(target),
    "str": lambda target, _, __: str(target),
    "bool": lambda target, _, __: bool(target),
}


def _flush_output() -> None:
    """What the candidate printed is still in the streams' buffers: the supervisor counts it now."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # a stream the candidate closed or replaced
            pass


def _error_reply(exc: BaseException, max_chars: int, sequence: int) -> list[Any]:
    """The exception as plain data: its type's name, message and the candidate's frames."""
    try:
        reply = ["raise", sequence, type(exc).__name__, exception_message(exc)[: max_chars * 4], own_frames(exc),
                 isinstance(exc, MemoryError)]
    except BaseException:  # no memory left to describe it, or a message that cannot be made
        reply = ["raise", sequence, type(exc).__name__, "", [], isinstance(exc, MemoryError)]
    exc.__traceback__ = None
    return reply


def _encode_global(value: Any, objects: _Objects) -> Any:
    try:
        encoded = _wire.encode_value(value, objects.handle)
        if len(_wire.dumps(encoded)) <= MAX_INLINE_GLOBAL_BYTES:
            return encoded
    except (_wire.NotData, ValueError, RecursionError):
        pass
    return objects.handle(value)


def serve(channel: int, jail_root: str | None, workdir: str) -> None:
    """Wait for the job (the first message: program, limits, uid), confine, load the program and answer
    calls until the channel closes."""
    objects, decode = _OBJECTS, _DECODE
    first = _wire.receive(channel, MAX_REQUEST_BYTES)
    if first is None:  # the supervisor is gone (or stopping): a spare that never got a job
        if jail_root is None:
            try:
                os.rmdir(workdir)  # outside the jail its working directory is a real one in /tmp
            except OSError:
                pass
        os._exit(0)
    if not first.startswith(_wire.JOB_MARKER):  # never: only the test process writes this message
        os._exit(1)
    job = marshal.loads(first[len(_wire.JOB_MARKER):])
    limits = job["limits"]
    max_feedback_chars = int(limits["max_feedback_chars"])
    confine(limits, job.get("uid"), bool(job.get("isolate_network")), jail_root, workdir)
    code = job["code"]
    linecache.cache[CANDIDATE_FILE] = (len(code), None, code.splitlines(True), CANDIDATE_FILE)
    namespace: dict[str, Any] = {"__name__": "candidate", "__builtins__": builtins}
    program_mode = job.get("mode") == "program"  # a standard-input program, run by ``_stdin_tests``
    try:
        compiled = job.get("compiled")  # from the supervisor, which compiles faster (see ``_tester``)
        program = marshal.loads(compiled) if compiled else compile(code, CANDIDATE_FILE, "exec")
        if not program_mode:
            exec(program, namespace)
    except BaseException as exc:
        _flush_output()
        status = "memory_exceeded" if isinstance(exc, MemoryError) else "error"
        frames = own_frames(exc)
        message = exception_message(exc)
        exc.__traceback__ = None
        description = describe(type(exc).__name__, message, frames, max_feedback_chars,
                               isinstance(exc, RecursionError))
        _wire.send(channel, _wire.dumps(["load_error", status, _wire.encode_value(description, objects.handle)]))
        os._exit(0)
    if program_mode:
        _stdin_tests.serve_program(channel, program, max_feedback_chars)
    entry_point = job.get("entry_point")
    wanted = set(job.get("names") or ())
    every = "*" in wanted  # a pipeline's feedback: every name (see ``_tester``); the supervisor checks the names
    names = [[name, _encode_global(value, objects)] for name, value in list(namespace.items())
             if name == entry_point or name in wanted or (every and not name.startswith("__"))]
    _flush_output()
    _wire.send(channel, _wire.dumps(["loaded", names]))
    while True:
        request = _wire.receive(channel, MAX_REQUEST_BYTES)
        if request is None:
            os._exit(0)  # the tests are over; never wait for threads the candidate left running
        call = (marshal.loads(request[len(_wire.CALL_MARKER):]) if request.startswith(_wire.CALL_MARKER)
                else decode(request))
        _wire.send(channel, _wire.dumps(_answer(call, objects, max_feedback_chars)))


def _answer(request: list[Any], objects: _Objects, max_feedback_chars: int) -> list[Any]:
    """One operation; ``watched``: the positions of mutable arguments the test holds a reference to,
    whose new contents go back if the call changed them; the reply repeats the call's sequence number."""
    operation, number, args, kwargs, watched, sequence = request
    target = objects.by_number[int(number)]
    before = {int(index): _wire.dumps(_wire.encode_value(args[int(index)], objects.handle))
              for index in watched if type(args[int(index)]) in MUTABLE}
    try:
        value = _OPERATIONS[operation](target, args, kwargs)
        encoded = _result(value, objects)
        changed = []
        for index, old in before.items():
            new = _wire.encode_value(args[index], objects.handle)
            if _wire.dumps(new) != old:
                changed.append([index, new])
        reply = ["ok", sequence, encoded, changed]
    except BaseException as exc:
        reply = _error_reply(exc, max_feedback_chars, sequence)
        del exc
        gc.collect()  # a MemoryError's frames may hold what filled the memory
    _flush_output()
    return reply


def _result(value: Any, objects: _Objects) -> Any:
    try:
        return _wire.encode_value(value, objects.handle)
    except (_wire.NotData, RecursionError, ValueError):
        return objects.handle(value)  # a cyclic or too deeply nested value stays here


def warm_up() -> None:
    """Answer sample calls here, in the launcher, before any candidate process is forked: CPython (3.11
    on) rewrites bytecode as it first runs it, and in a forked process every such rewrite would be a
    copied page, in every execution."""
    objects = _Objects()
    decode = _wire.decoder(objects.lookup, _import)
    sample = [[1, 2.5, "a", None, True], (1, -2), {"k": {1, 2}, 3: frozenset()}, b"x", 10 ** 5]
    target = objects.handle(lambda *args, **kwargs: (list(args), kwargs))
    for _ in range(16):
        request = _wire.dumps(["call", target["v"], _wire.encode_value(sample, objects.handle),
                               _wire.encode_value({"key": 1}, objects.handle), [0], 1])
        _wire.dumps(_answer(decode(request), objects, 2000))
        _encode_global(sample, objects)
    objects.by_number.clear()
