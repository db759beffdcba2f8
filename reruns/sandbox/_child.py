"""The sandbox's child: confine itself, load the candidate, run each test, report events.

``run_job`` runs in a process just forked by the supervisor (``_zygote.py``). Standard library only:
the isolated interpreter cannot see sotacheck. Every event written to the result pipe carries a nonce
the supervisor chose; lines without it are ignored, and a child that never writes its final ``done``
event is never counted as passed.
"""

from __future__ import annotations

import ast
import builtins
import ctypes
import gc
import json
import linecache
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

CANDIDATE_FILE = "<candidate>"
# What compiling a candidate or a test may raise in the supervisor; the child then compiles it again and
# reports the error as the outcome.
COMPILE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
TEST_FILE = "<test>"
CLONE_NEWNET = 0x40000000
PR_SET_KEEPCAPS = 8
CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
MB = 1024 * 1024
_BUILTINS = builtins.__dict__
_LIBC = ctypes.CDLL(None, use_errno=True)


# Copies of the builtins made by the supervisor before any fork (``freeze_builtins``): one to restore
# the builtins module from, one for the tests' namespace. Copying them in every child would touch every
# builtin object, and so copy its page: a fifth of a millisecond per child.
_PRISTINE_BUILTINS: dict[str, Any] = {}
_TEST_BUILTINS: dict[str, Any] = {}


def freeze_builtins() -> None:
    """Take the two copies of the builtins; the supervisor calls this once, when they are final."""
    _PRISTINE_BUILTINS.update(_BUILTINS)
    _TEST_BUILTINS.update(_BUILTINS)


def _dict_version_reader() -> Callable[[dict[str, Any]], int] | None:
    """A reader of a dict's version tag (PEP 509; CPython 3.11 to 3.13 change it on every change of the
    dict), or None where this interpreter's dicts are not seen to behave so at start-up."""
    if sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] <= (3, 13):
        return None
    header = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)  # refcount and type

    def version(mapping: dict[str, Any]) -> int:
        return ctypes.c_uint64.from_address(id(mapping) + header + ctypes.sizeof(ctypes.c_ssize_t)).value

    probe: dict[str, Any] = {"a": 1}
    seen = {version(probe)}
    changes = (lambda: probe.__setitem__("a", 2), lambda: probe.__setitem__("b", 3), lambda: probe.pop("b"),
               lambda: probe.__delitem__("a"), lambda: probe.update(c=4), lambda: probe.setdefault("d", 5),
               probe.clear)
    for change in changes:
        change()
        if ctypes.c_ssize_t.from_address(id(probe) + header).value != len(probe) or version(probe) in seen:
            return None
        seen.add(version(probe))
    return version


_DICT_VERSION = _dict_version_reader()


class _BuiltinsGuard:
    """Puts the builtins module back as it was whenever the candidate (or a test) changed it, and only
    then (the change is seen from the dict's version tag; without a reader, it restores every time)."""

    def __init__(self) -> None:
        self._version = _DICT_VERSION(_BUILTINS) if _DICT_VERSION else None

    def restore(self) -> None:
        if _DICT_VERSION is None or _DICT_VERSION(_BUILTINS) != self._version:
            _BUILTINS.clear()  # dict methods only: no name lookups through what the candidate rebound
            _BUILTINS.update(_PRISTINE_BUILTINS)
            self._version = _DICT_VERSION(_BUILTINS) if _DICT_VERSION else None


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


# Built once in the supervisor, before any fork: making ctypes objects and resolving libc symbols
# costs a forked child a quarter of a millisecond.
_CAP_HEADER = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
_CAP_DATA = (_CapData * 2)()
_CAP_DATA[0].effective = _CAP_DATA[0].permitted = 1 << CAP_DAC_READ_SEARCH
_PRCTL, _CAPSET, _UNSHARE = _LIBC.prctl, _LIBC.capset, _LIBC.unshare


def _drop_privileges(uid: int) -> None:
    """Become ``uid``, keeping only CAP_DAC_READ_SEARCH: the interpreter may still read (never write)
    files under root-only paths such as a pyenv in /root, but cannot signal or touch other users'
    processes and files."""
    _PRCTL(PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if _CAPSET(ctypes.byref(_CAP_HEADER), _CAP_DATA) != 0:
        # Without the capability we are plain ``uid``: safer still, only imports may fail.
        pass


def _confine(job: dict[str, Any]) -> None:
    limits = job["limits"]
    if job.get("isolate_network") and os.geteuid() == 0:
        _UNSHARE(CLONE_NEWNET)  # best effort: a fresh namespace has no interface but a down lo
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(limits["cpu_time_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    memory = int(limits["memory_mb"]) * MB
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    file_bytes = int(limits["max_file_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    uid = job.get("uid")
    if uid is not None and os.geteuid() == 0:
        _drop_privileges(uid)
    processes = int(limits["max_processes"])
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    # SIGXFSZ is ignored already (set by the supervisor, inherited): an oversized write raises OSError.


_PLAIN_MODULES = ("collections", "fractions", "decimal", "datetime")


def _is_plain(value: Any, depth: int = 0) -> bool:
    """Values whose equality a candidate cannot rig: C-defined types, a few stdlib classes, and
    containers of them. A Python class defined by the candidate (e.g. ``__eq__`` always True) is not."""
    if depth > 50:
        return True
    kind = type(value)
    heap_type = bool(kind.__flags__ & (1 << 9))
    if heap_type:
        module = sys.modules.get(kind.__module__)
        if kind.__module__ not in _PLAIN_MODULES or getattr(module, kind.__qualname__, None) is not kind:
            return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_is_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(_is_plain(k, depth + 1) and _is_plain(v, depth + 1) for k, v in value.items())
    return True


def _strict_eq(left: Any, right: Any) -> bool:
    for side in (left, right):
        if not _is_plain(side):
            raise AssertionError(f"compared a value of non-plain type {type(side).__name__!r}")
    return bool(left == right)


def _strict_ne(left: Any, right: Any) -> bool:
    return not _strict_eq(left, right)


def _strict_truth(value: Any) -> bool:
    if not _is_plain(value):
        raise AssertionError(f"truth of a value of non-plain type {type(value).__name__!r}")
    return bool(value)


_STRICT_HELPERS = {ast.Eq: "__sotacheck_eq__", ast.NotEq: "__sotacheck_ne__"}
_WRAPPED_TRUTH = (ast.Call, ast.Name, ast.Attribute, ast.Subscript)


def _helper_call(helper: str, args: list[ast.expr], where: ast.expr) -> ast.Call:
    """``helper(*args)`` placed where ``where`` was (so no ``fix_missing_locations`` pass is needed)."""
    place: dict[str, Any] = {"lineno": where.lineno, "col_offset": where.col_offset,
                             "end_lineno": where.end_lineno, "end_col_offset": where.end_col_offset}
    return ast.Call(ast.Name(helper, ast.Load(), **place), args, [], **place)


def _strict(node: Any) -> Any:
    """Rewrites ``a == b`` / ``a != b`` and bare ``assert x`` in test code to the strict helpers, children
    first; returns the node to put in ``node``'s place. A plain recursive walk: ``ast.NodeTransformer``
    and ``fix_missing_locations`` made compiling the tests twice as slow."""
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list:
            for index, item in enumerate(value):
                if isinstance(item, ast.AST):
                    value[index] = _strict(item)
        elif isinstance(value, ast.AST):
            setattr(node, field, _strict(value))
    kind = type(node)
    if kind is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in _STRICT_HELPERS:
        return _helper_call(_STRICT_HELPERS[type(node.ops[0])], [node.left, node.comparators[0]], node)
    if kind is ast.Assert:
        test = node.test
        if isinstance(test, _WRAPPED_TRUTH):
            node.test = _helper_call("__sotacheck_truth__", [test], test)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test.operand = _helper_call("__sotacheck_truth__", [test.operand], test.operand)
    return node


def register_test_source(source: str, index: int) -> str:
    """The file name test ``index`` is compiled under, its lines registered for tracebacks."""
    filename = f"{TEST_FILE}[{index}]"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def compile_test(source: str, index: int) -> Any:
    """Test code with strict comparisons (see ``_strict``); raises what ``compile`` raises."""
    filename = register_test_source(source, index)
    tree = _strict(ast.parse(source, filename))
    return compile(tree, filename, "exec")


def _describe(exc: BaseException, limits: dict[str, Any]) -> dict[str, Any]:
    """Exception type, truncated message, and the traceback filtered to the candidate's/test's frames."""
    max_chars = int(limits["max_feedback_chars"])
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename.startswith((CANDIDATE_FILE, TEST_FILE))]
    if isinstance(exc, RecursionError):
        frames = frames[:3] + frames[-3:] if len(frames) > 6 else frames
    lines = traceback.format_list(frames)
    message = str(exc)
    if isinstance(exc, SyntaxError):
        message = f"{exc.msg} (line {exc.lineno}: {(exc.text or '').strip()})"
    if len(message) > max_chars // 2:
        message = message[: max_chars // 2] + "... [truncated]"
    text = "".join(lines) + f"{type(exc).__name__}: {message}"
    if len(text) > max_chars:
        text = "... [truncated]\n" + text[-max_chars:]
    return {"exception_type": type(exc).__name__, "message": message, "feedback": text}


def _status_of(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "memory_exceeded"
    if isinstance(exc, AssertionError):
        return "failed"
    return "error"


def _flush_output() -> None:
    """What the candidate printed is still in the streams' buffers: ``os._exit`` would drop it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # a stream the candidate closed or replaced
            pass


def run_job(job: dict[str, Any], result_fd: int) -> None:
    """In a freshly forked child: confine, load the candidate, run each test, report, and exit."""
    nonce = job.pop("nonce")
    limits = job["limits"]

    def emit(*events: dict[str, Any]) -> None:
        """One write per step (not per event): each write wakes the supervisor."""
        for event in events:
            event["nonce"] = nonce
        os.write(result_fd, "".join(json.dumps(event) + "\n" for event in events).encode())

    os.chdir(job["workdir"])
    _confine(job)
    if not _PRISTINE_BUILTINS:  # run without the supervisor's ``freeze_builtins``
        freeze_builtins()
    builtins_guard = _BuiltinsGuard()
    sys.setrecursionlimit(int(limits["recursion_limit"]))

    candidate_ns: dict[str, Any] = {"__name__": "candidate", "__builtins__": builtins}
    code = job["code"]
    linecache.cache[CANDIDATE_FILE] = (len(code), None, code.splitlines(True), CANDIDATE_FILE)
    try:  # the supervisor counts time from the fork as loading time until the first test starts
        exec(job.get("compiled_code") or compile(code, CANDIDATE_FILE, "exec"), candidate_ns)
    except BaseException as exc:
        builtins_guard.restore()
        status = "memory_exceeded" if isinstance(exc, MemoryError) else "error"
        _flush_output()
        emit({"event": "loaded", "status": status, **_describe(exc, limits)}, {"event": "done"})
        os._exit(0)
    # The candidate may have rebound builtins; the harness and the tests use the originals.
    builtins_guard.restore()
    pending: list[dict[str, Any]] = [{"event": "loaded", "status": "ok"}]  # written with the next event

    test_ns: dict[str, Any] = {"__name__": "__test__", "__builtins__": _TEST_BUILTINS}
    for name, value in candidate_ns.items():
        if name == job.get("entry_point") or (not name.startswith("__") and name not in _PRISTINE_BUILTINS):
            test_ns[name] = value
    test_ns.update(__sotacheck_eq__=_strict_eq, __sotacheck_ne__=_strict_ne,
                   __sotacheck_truth__=_strict_truth)
    # Compiled by the supervisor before the fork where it could (see ``_testcache``):
    # the AST rewrite costs about a millisecond in a fresh child, a third of that in the warm supervisor.
    precompiled = job.get("compiled_tests") or []
    for index, source in enumerate(job["tests"]):
        emit(*pending, {"event": "start", "test": index})
        started = time.perf_counter()
        try:
            if index == 0 and job.get("setup"):
                exec(compile(job["setup"], f"{TEST_FILE}[setup]", "exec"), test_ns)
            compiled = precompiled[index] if index < len(precompiled) else None
            if compiled is None:
                compiled = compile_test(source, index)
            else:
                register_test_source(source, index)
            exec(compiled, test_ns)
        except BaseException as exc:
            outcome = {"status": _status_of(exc), **_describe(exc, limits)}
        else:
            outcome = {"status": "passed"}
        finally:
            builtins_guard.restore()
        pending = [{"event": "end", "test": index, "duration_s": time.perf_counter() - started, **outcome}]
        if outcome["status"] == "memory_exceeded":
            gc.collect()
    _flush_output()
    emit(*pending, {"event": "done"})
    os._exit(0)  # never wait for threads the candidate left running


