"""The test process's side of the unittest runner (standard library only): the seal, the test machinery's
snapshot and check, and the task's test methods run one by one (``_unittest_runner.py``'s docstring, steps 2 to 5).

Imported by the runner before it forks, so every test process starts with it loaded; nothing here runs in the
runner itself but :func:`machinery` (the pristine snapshot, taken before any fork)."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import types
from typing import Any

REPORT_EVENT = "sotacheck.unittest.report"
NONCE_BYTES = 16
MAX_REPORT = 65536
_MACHINERY_PREFIXES = ("unittest", "numpy.testing", "pandas.testing", "pandas._testing")
# Audit events refused once sealed: each would reach the hook's closure or rewrite a running frame.
# (``gc.get_referents`` stays allowed: nothing the program can hold refers to the hook; pandas and others use it.)
_REFUSED = frozenset(("sys.settrace", "sys.setprofile", "sys.addaudithook", "gc.get_objects", "gc.get_referrers",
                      "ctypes.string_at", "ctypes.wstring_at", "ctypes.cdata"))
# Symbols that would reach the interpreter's state or raw memory behind the hook's back: the interpreter's own
# (a prefix), and libc's memory copies, file reads and raw system calls (exact names: threadpoolctl, which
# scikit-learn loads, looks up ``openblas_get_num_threads`` and the like). BigCodeBench's ctypes tasks only load a
# library by its path.
_REFUSED_PREFIXES = ("Py", "_Py", "ptrace", "process_vm_")
_REFUSED_SYMBOLS = frozenset((
    "memcpy", "memmove", "memccpy", "mempcpy", "bcopy", "strcpy", "strncpy", "stpcpy", "stpncpy", "strdup", "strndup",
    "wmemcpy", "wmemmove", "wcscpy", "wcsncpy", "wcsdup", "open", "open64", "openat", "openat64", "read", "pread",
    "pread64", "readv", "preadv", "preadv2", "syscall", "dlsym", "dlvsym", "dlopen", "mmap", "mmap64", "mprotect",
    "fopen", "fopen64", "fread"))
_ALLOWED_SYMBOLS = frozenset(("_Py_HashSecret",))  # numba reads it when imported
_REFUSED_ATTRIBUTES = frozenset(("__code__",))
# ctypes's own helpers that read or write raw memory (called through ``ctypes.call_function``).
_RAW_MEMORY = frozenset(getattr(ctypes, name) for name in ("_memmove_addr", "_memset_addr", "_cast_addr",
                                                           "_string_at_addr", "_wstring_at_addr"))


class Sealed(RuntimeError):
    """What the seal raises for a refused operation."""


# A namespace watched: its holder (a module or a class), a copy of its bindings, and the names a binding it gains
# would shadow (a builtin, for a module's globals; an inherited attribute, for a class): a gained name that
# shadows nothing cannot change code that ran before (``__warningregistry__``, a test's own class attribute).
Watched = dict[str, tuple[Any, dict[str, Any], frozenset[str]]]


def machinery() -> Watched:
    """The test machinery: ``builtins``, the modules of :data:`_MACHINERY_PREFIXES`, every class defined in them,
    and for a submodule the parent's binding of it (``numpy.testing``)."""
    builtins_module = sys.modules["builtins"]
    builtin_names = frozenset(vars(builtins_module))
    spaces: Watched = {"builtins": (builtins_module, dict(vars(builtins_module)), frozenset())}
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or not name.startswith(_MACHINERY_PREFIXES):
            continue
        spaces[name] = (module, dict(vars(module)), builtin_names)
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if isinstance(parent, types.ModuleType) and vars(parent).get(child) is module:
            spaces[f"{name} (as {parent_name}.{child})"] = (parent, {child: module}, frozenset())
        for value in list(vars(module).values()):
            if type(value) is type and vars(value).get("__module__") == name:
                spaces[f"{name}.{value.__qualname__}"] = (value, dict(vars(value)), frozenset(dir(value)))
    return spaces


def _class_bindings(classes: list[type]) -> Watched:
    return {f"test class {cls.__qualname__}#{index}": (cls, dict(vars(cls)), frozenset(dir(cls)))
            for index, cls in enumerate(classes)}


_MISSING = object()


def _changed(watched: Watched) -> str | None:
    """The first binding of ``watched`` its holder no longer has, or a shadowing one it gained; compared by identity
    only (no ``==``, no hashing of the program's objects)."""
    for space, (holder, bindings, shadowable) in watched.items():
        live = vars(holder)
        for key, value in bindings.items():
            if live.get(key, _MISSING) is not value:
                return f"{space}.{key} was replaced"
        if len(live) != len(bindings):
            for key in list(live):
                if type(key) is not str or (key not in bindings and key in shadowable):
                    return f"{space} gained {key if type(key) is str else 'a name'}"
    return None


def _seal(main_frame: types.FrameType, report_fd: int, nonce_fd: int, first: int) -> None:
    """Install the audit hook that holds the nonce and the report pipe (module docstring, step 2); it writes one
    record per test method, in order from ``first``, each a line ``nonce pid index verdict-json``."""
    nonce = b""
    while len(nonce) < NONCE_BYTES:
        chunk = os.read(nonce_fd, NONCE_BYTES - len(nonce))
        if not chunk:
            os._exit(71)
        nonce += chunk
    os.close(nonce_fd)
    expected = [first]  # the index of the one report the runner's frame may write next
    getframe, write, dumps, exit_now, getpid = sys._getframe, os.write, json.dumps, os._exit, os.getpid

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == REPORT_EVENT:
            if getframe(1) is not main_frame or len(args) != 2 or type(args[0]) is not int \
                    or args[0] != expected[0]:
                raise Sealed("a report may only come from the runner")
            expected[0] = expected[0] + 1
            # the writer's pid: a copy the program forked holds the same nonce, but only the runner's own child counts
            payload = f"{nonce.hex()} {getpid()} {args[0]} ".encode() + dumps(args[1]).encode() + b"\n"
            if len(payload) > MAX_REPORT:
                exit_now(72)
            write(report_fd, payload)
            return
        if event in _REFUSED:
            raise Sealed(f"the judge refuses {event}")
        if event == "ctypes.dlsym" and len(args) > 1 and type(args[1]) is str and args[1] not in _ALLOWED_SYMBOLS \
                and (args[1] in _REFUSED_SYMBOLS or args[1].startswith(_REFUSED_PREFIXES)):
            raise Sealed(f"the judge refuses ctypes access to {args[1]}")
        if event == "ctypes.call_function" and args and type(args[0]) is int and args[0] in _RAW_MEMORY:
            raise Sealed("the judge refuses ctypes's raw memory helpers")
        if event == "object.__setattr__" and len(args) > 1 and type(args[1]) is str and args[1] in _REFUSED_ATTRIBUTES:
            raise Sealed(f"the judge refuses replacing {args[1]}")
        if event == "open" and args and type(args[0]) is str and args[0].startswith("/proc/") and \
                args[0].rstrip("/").rsplit("/", 1)[-1] in ("mem", "pagemap", "environ"):
            raise Sealed(f"the judge refuses opening {args[0]}")

    sys.addaudithook(hook)


def _test_classes(cls: type) -> list[type]:
    """The test class and the classes of its MRO the test module defined (not unittest's, not object)."""
    return [klass for klass in cls.__mro__ if getattr(klass, "__module__", None) == "__test__"]


def _marked(obj: Any) -> str | None:
    for marker, what in (("__unittest_skip__", "a skip marker"),
                         ("__unittest_expecting_failure__", "an expected-failure marker")):
        try:
            if marker in getattr(obj, "__dict__", {}):
                return what
        except Exception:  # a marker that cannot be read is itself a sign of tampering
            return "an unreadable marker"
    return None


def _failure(exc: BaseException, stage: str) -> dict[str, Any]:
    """The verdict for an exception out of ``stage``; its type's name read without running the program's code."""
    try:
        name = type(exc).__name__ if type(type(exc)) is type else "exception"
        name = name if type(name) is str else "exception"
    except BaseException:
        name = "exception"
    return {"status": "failed", "stage": stage, "exception_type": name[:100], "message": _message(exc)}


def _load(job: dict[str, Any], namespace: dict[str, Any]) -> type:
    """Run the program, then the test module, in ``namespace`` (module docstring, step 3); the test class."""
    machinery = job["_machinery"]
    pristine_modules = job["_modules"]
    exec(compile(job["code"], "__test__.py", "exec"), namespace)  # the program under test
    for name, pristine in pristine_modules.items():
        if sys.modules.get(name) is not pristine:
            sys.modules[name] = pristine  # the test module imports the real unittest, as it would have
    tampered = _changed(machinery)
    if tampered is not None:
        raise Sealed(f"the program changed the test machinery: {tampered}")
    exec(compile(job["test"], "__test__.py", "exec"), namespace)  # the benchmark's test module
    cls = namespace.get(job["class"])
    if type(cls) is not type or not issubclass(cls, pristine_modules["unittest"].TestCase):
        raise Sealed(f"{job['class']} is not a unittest.TestCase class")
    return cls


def _run_method(cls: type, method_name: str, watched: Watched) -> None:
    """One test method as its own ``TestCase`` instance: ``setUp``, the method, ``tearDown``, the cleanups, with the
    machinery checked before and after (module docstring, steps 4 and 5). Returns only when it passed."""
    tampered = _changed(watched)
    if tampered is not None:
        raise Sealed(f"the test machinery changed before the test: {tampered}")
    function = None
    for klass in cls.__mro__:
        if method_name in vars(klass):
            function = vars(klass)[method_name]
            break
    if type(function) is not types.FunctionType:
        raise Sealed(f"{cls.__name__}.{method_name} is not a function")
    for obj, where in ((cls, "the test class"), (function, "the test method")):
        marker = _marked(obj)
        if marker is not None:
            raise Sealed(f"{where} carries {marker}")
    instance = cls(method_name)
    instance.setUp()
    try:
        function(instance)
    finally:
        instance.tearDown()
    while instance._cleanups:
        cleanup, args, kwargs = instance._cleanups.pop()
        cleanup(*args, **kwargs)
    tampered = _changed(watched)
    if tampered is not None:
        raise Sealed(f"the test machinery changed during the test: {tampered}")


def run_tests(job: dict[str, Any], first: int, report_fd: int, nonce_fd: int) -> None:
    """The test process's whole life after the fork: seal, load the program and the test module once, run each
    test method from ``first`` on in order (as BigCodeBench's one process per task does), one report each, exit."""
    _seal(sys._getframe(), report_fd, nonce_fd, first)
    methods = job["methods"]
    module = types.ModuleType("__test__")
    namespace = module.__dict__
    namespace.update({"__builtins__": sys.modules["builtins"], "__file__": "__test__.py", "__package__": None,
                      "__doc__": None, "sys": sys, "os": os, "environ": os.environ})
    sys.modules["__test__"] = module
    cls: type | None = None
    loading: dict[str, Any] = {"status": "failed"}
    try:
        cls = _load(job, namespace)
        watched = {**job["_machinery"], **_class_bindings(_test_classes(cls))}
    except BaseException as exc:  # the program or the test module cannot load: every test fails the same way
        loading = _failure(exc, "loading the program and the test module")
    index = first
    while index < len(methods):
        if cls is None:
            verdict = loading
        else:
            try:
                _run_method(cls, methods[index], watched)
                verdict = {"status": "passed"}
            except BaseException as exc:  # every way out of a test but returning is a failure
                verdict = _failure(exc, "running the test")
        sys.audit(REPORT_EVENT, index, verdict)
        index += 1
    os._exit(0)


def _message(exc: BaseException) -> str:
    """The exception's message, bounded; its ``str`` is the program's code for a class it made, so it is read
    only for the standard library's exception types."""
    if type(exc).__module__ in ("builtins", "unittest.case", "_Sealed", __name__) or type(exc) is Sealed:
        try:
            text = str(exc)
            return text[:2000] if type(text) is str else ""
        except BaseException:
            return ""
    return ""


