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
_ENCODE = json.encoder.encode_basestring_ascii  # the C function where the interpreter has it
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
    "fopen", "fopen64", "fread", "prctl"))  # prctl: PR_SET_DUMPABLE would open /proc/self/mem to the process
_PROC_FILES = frozenset(("mem", "pagemap", "environ"))
_ALLOWED_SYMBOLS = frozenset(("_Py_HashSecret",))  # numba reads it when imported
_REFUSED_ATTRIBUTES = frozenset(("__code__",))
# ctypes's own helpers that read or write raw memory (called through ``ctypes.call_function``).
_RAW_MEMORY = frozenset(getattr(ctypes, name) for name in ("_memmove_addr", "_memset_addr", "_cast_addr",
                                                           "_string_at_addr", "_wstring_at_addr"))


class Sealed(RuntimeError):
    """What the seal raises for a refused operation."""


# A namespace watched: its holder (a module or a class) and the holder's type, a copy of its bindings, the names a
# binding it gains would shadow (a builtin, for a module's globals; an inherited attribute, for a class: a gained
# name that shadows nothing cannot change code that ran before, ``__warningregistry__``, a test's own class
# attribute), and the insides of each function bound there (its defaults and the contents of its closure's cells,
# which change without a new binding).
Watched = dict[str, tuple[Any, type, dict[str, Any], frozenset[str], dict[str, tuple[Any, ...]]]]
# Modules whose functions unittest's assertions call (assertCountEqual's Counter, assertRegex's re, the diffs).
_ASSERTION_MODULES = frozenset(("difflib", "pprint", "collections", "collections.abc", "re", "functools",
                                "contextlib", "traceback", "reprlib", "math", "operator"))


def _insides(function: types.FunctionType) -> tuple[Any, ...]:
    cells = function.__closure__ or ()
    contents = []
    for cell in cells:
        try:
            contents.append(cell.cell_contents)
        except ValueError:  # an empty cell
            contents.append(_MISSING)
    return (function.__defaults__, function.__kwdefaults__, *contents)


def _space(holder: Any, bindings: dict[str, Any], shadowable: frozenset[str]) -> tuple[Any, ...]:
    functions = {key: _insides(value) for key, value in bindings.items() if type(value) is types.FunctionType}
    return holder, type(holder), bindings, shadowable, functions


def machinery() -> Watched:
    """The test machinery: ``builtins``, the modules of :data:`_MACHINERY_PREFIXES` and
    :data:`_ASSERTION_MODULES`, every class defined in them, and for a submodule the parent's binding of it
    (``numpy.testing``)."""
    builtins_module = sys.modules["builtins"]
    builtin_names = frozenset(vars(builtins_module))
    spaces: Watched = {"builtins": _space(builtins_module, dict(vars(builtins_module)), frozenset())}
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or not (name.startswith(_MACHINERY_PREFIXES)
                                                             or name in _ASSERTION_MODULES):
            continue
        spaces[name] = _space(module, dict(vars(module)), builtin_names)
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if isinstance(parent, types.ModuleType) and vars(parent).get(child) is module:
            spaces[f"{name} (as {parent_name}.{child})"] = _space(parent, {child: module}, frozenset())
        for value in list(vars(module).values()):
            if type(value) is type and vars(value).get("__module__") == name:
                spaces[f"{name}.{value.__qualname__}"] = _space(value, dict(vars(value)), frozenset(dir(value)))
    return spaces


def _class_bindings(classes: list[type]) -> Watched:
    return {f"test class {cls.__qualname__}#{index}": _space(cls, dict(vars(cls)), frozenset(dir(cls)))
            for index, cls in enumerate(classes)}


_MISSING = object()


def _changed(watched: Watched) -> str | None:
    """The first binding of ``watched`` its holder no longer has, a shadowing one it gained, a holder whose type
    changed, or a function whose defaults or closure changed; compared by identity only (no ``==``, no hashing of
    the program's objects)."""
    for space, (holder, holder_type, bindings, shadowable, functions) in watched.items():
        if type(holder) is not holder_type:
            return f"{space}'s type was replaced"
        live = vars(holder)
        for key, value in bindings.items():
            if live.get(key, _MISSING) is not value:
                return f"{space}.{key} was replaced"
        if len(live) != len(bindings):
            for key in list(live):
                if type(key) is not str or (key not in bindings and key in shadowable):
                    return f"{space} gained {key if type(key) is str else 'a name'}"
        for key, insides in functions.items():
            now = _insides(bindings[key])
            if len(now) != len(insides) or any(a is not b for a, b in zip(now, insides, strict=True)):
                return f"{space}.{key}'s defaults or closure changed"
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
    getframe, write, exit_now, getpid, realpath = sys._getframe, os.write, os._exit, os.getpid, os.path.realpath
    encode = _ENCODE  # the C encoder, captured now: json's module globals are the program's to rebind

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == REPORT_EVENT:
            if getframe(1) is not main_frame or len(args) != 2 or type(args[0]) is not int \
                    or args[0] != expected[0]:
                raise Sealed("a report may only come from the runner")
            expected[0] = expected[0] + 1
            # the writer's pid: a copy the program forked holds the same nonce, but only the runner's own child counts
            verdict = args[1]
            if type(verdict) is not dict:
                raise Sealed("a report is a verdict")
            body = ", ".join([f"{encode(key)}: {encode(value)}" for key, value in verdict.items()
                              if type(key) is str and type(value) is str])
            payload = f"{nonce.hex()} {getpid()} {args[0]} {{{body}}}\n".encode()
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
        if event == "open" and args and type(args[0]) in (str, bytes):
            path = args[0] if type(args[0]) is str else args[0].decode(errors="replace")
            # by its last component wherever it is (a dir_fd, //proc), and by where a link leads
            if path.rstrip("/").rsplit("/", 1)[-1] in _PROC_FILES or \
                    realpath(path).rsplit("/", 1)[-1] in _PROC_FILES:
                raise Sealed(f"the judge refuses opening {path}")

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


def _load(job: dict[str, Any], namespace: dict[str, Any], modules: dict[str, Any]) -> type:
    """Run the program, then the test module, in ``namespace`` (module docstring, step 3); the test class.
    ``modules`` is the interpreter's module table as it was before the program ran."""
    machinery = job["_machinery"]
    pristine_modules = job["_modules"]
    builtins_module = namespace["__builtins__"]
    exec(compile(job["code"], "__test__.py", "exec"), namespace)  # the program under test
    if sys.modules is not modules:
        raise Sealed("the program replaced sys.modules")
    for name, (pristine, pristine_type) in pristine_modules.items():
        if modules.get(name) is not pristine:
            modules[name] = pristine  # the test module imports the real unittest, numpy..., as it would have
        if type(pristine) is not pristine_type:
            raise Sealed(f"the program changed the type of the module {name}")
    namespace["__builtins__"] = builtins_module  # the test module's own builtins, not a copy the program made
    tampered = _changed(machinery)
    if tampered is not None:
        raise Sealed(f"the program changed the test machinery: {tampered}")
    if job.get("imports"):  # the prompt's own imports again: the names the tests use are the real modules
        exec(compile(job["imports"], "__test__.py", "exec"), namespace)
    exec(compile(job["test"], "__test__.py", "exec"), namespace)  # the benchmark's test module
    cls = namespace.get(job["class"])
    if type(cls) is not type or not issubclass(cls, pristine_modules["unittest"][0].TestCase):
        raise Sealed(f"{job['class']} is not a unittest.TestCase class")
    return cls


def _out_of_reach(modules: dict[str, Any]) -> None:
    """Take the judge's own modules out of the program's way: out of the module table (an ``import`` of one
    finds nothing in the jail, a fresh copy elsewhere), the runner's script no longer ``__main__``, this folder
    off the path. (Frames and raw memory still reach them: docs/bigcodebench.md says so.)"""
    main = modules.get("__main__")
    if isinstance(main, types.ModuleType):
        vars(main).pop("_unittest_seal", None)  # the runner's reference, reachable through its classes' methods
    for name in ("__main__", __name__, "_unittest_runner", "_unittest_jail", "_unittest_reports", "_mounts", "_hidden", "_procs"):
        modules.pop(name, None)
    modules["__main__"] = types.ModuleType("__main__")
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if entry != here]


def _retyped(pristine_modules: dict[str, tuple[Any, type]]) -> str | None:
    """A module the runner loaded whose type is no longer its own (a subclass that answers attribute reads)."""
    for name, (module, module_type) in pristine_modules.items():
        if type(module) is not module_type:
            return f"the type of the module {name} was changed"
    return None


def _run_method(cls: type, method_name: str, watched: Watched, pristine_modules: dict[str, tuple[Any, type]]) -> None:
    """One test method as its own ``TestCase`` instance: ``setUp``, the method, ``tearDown``, the cleanups, with the
    machinery checked before and after (module docstring, steps 4 and 5). Returns only when it passed."""
    tampered = _changed(watched) or _retyped(pristine_modules)
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
    tampered = _changed(watched) or _retyped(pristine_modules)
    if tampered is not None:
        raise Sealed(f"the test machinery changed during the test: {tampered}")


def run_tests(job: dict[str, Any], first: int, report_fd: int, nonce_fd: int) -> None:
    """The test process's whole life after the fork: seal, load the program and the test module once, run each
    test method from ``first`` on in order (as BigCodeBench's one process per task does), one report each, exit."""
    _seal(sys._getframe(), report_fd, nonce_fd, first)
    methods = job["methods"]
    module = types.ModuleType("__test__")
    namespace = module.__dict__
    modules = sys.modules
    builtins_module = modules["builtins"]
    namespace.update({"__builtins__": builtins_module, "__file__": "__test__.py", "__package__": None,
                      "__doc__": None, "sys": sys, "os": os, "environ": os.environ})
    modules["__test__"] = module
    _out_of_reach(modules)
    cls: type | None = None
    loading: dict[str, Any] = {"status": "failed"}
    try:
        cls = _load(job, namespace, modules)
        watched = {**job["_machinery"], **_class_bindings(_test_classes(cls))}
    except BaseException as exc:  # the program or the test module cannot load: every test fails the same way
        loading = _failure(exc, "loading the program and the test module")
    index = first
    while index < len(methods):
        if cls is None:
            verdict = loading
        else:
            try:
                if namespace.get("__builtins__") is not builtins_module:
                    raise Sealed("the test module's builtins were replaced")
                _run_method(cls, methods[index], watched, job["_modules"])
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


