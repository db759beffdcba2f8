"""The test process's side of the unittest runner (standard library only): the seal installed (its hooks are
``_unittest_hooks.py``), the test machinery's snapshot and check, and the task's test methods run one by one on a
thread of their own (``_unittest_runner.py``'s docstring, steps 2 to 5).

Imported by the runner before it forks, so every test process starts with it loaded; nothing here runs in the
runner itself but :func:`machinery` (the pristine snapshot, taken before any fork)."""

from __future__ import annotations

import _thread
import os
import sys
import types
from typing import Any

from _unittest_classes import CHECK_FUNCTIONS, Classes, code_objects, program_class
from _unittest_hooks import MAX_REPORT, NONCE_BYTES, REPORT_EVENT, Sealed, install
from _unittest_libraries import Tracked, cell_contents, library_change

__all__ = ["MAX_REPORT", "NONCE_BYTES", "REPORT_EVENT", "Sealed", "machinery", "run_in_a_thread", "run_tests"]

_MACHINERY_PREFIXES = ("unittest", "numpy.testing", "pandas.testing", "pandas._testing")


# A namespace watched, as a tuple (nothing in it can be changed in place: a program that reaches the judge's frames
# reads it but cannot empty it): its name, its holder (a module or a class) and the holder's type, its bindings as
# (name, value) pairs and their names, the names a binding it gains would shadow (a builtin, for a module's globals;
# an inherited attribute, for a class: a gained name that shadows nothing cannot change code that ran before,
# ``__warningregistry__``, a test's own class attribute), and the insides of each function bound there (its defaults
# and the contents of its closure's cells, which change without a new binding).
Space = tuple[str, Any, type, tuple[tuple[str, Any], ...], frozenset[str], frozenset[str],
              tuple[tuple[str, Any, tuple[Any, ...]], ...]]
Watched = tuple[Space, ...]
# Modules whose functions unittest's assertions call (assertCountEqual's Counter, assertRegex's re, the diffs).
_ASSERTION_MODULES = frozenset(("difflib", "pprint", "collections", "collections.abc", "re", "functools",
                                "contextlib", "traceback", "reprlib", "math", "operator"))
_MISSING = object()

# The functions below that run once the program has (their frames are on the stack under the program's, so it can
# read their globals and locals, and rebind the globals and the builtins) use no name that is looked up at call time:
# every global and builtin they need is bound when they are defined, as a default argument (a tuple, which the seal
# keeps anyone from replacing on these functions), and their locals hold nothing that can be changed in place.


def _insides(function: types.FunctionType, map: Any = map, cell_contents: Any = cell_contents) -> tuple[Any, ...]:
    return (function.__defaults__, function.__kwdefaults__, *map(cell_contents, function.__closure__ or ()))


def _space(name: str, holder: Any, bindings: dict[str, Any], shadowable: frozenset[str], type: Any = type,
           tuple: Any = tuple, frozenset: Any = frozenset, _insides: Any = _insides,
           FunctionType: Any = types.FunctionType) -> Space:
    pairs = tuple(bindings.items())
    functions = tuple((key, value, _insides(value)) for key, value in pairs if type(value) is FunctionType)
    return name, holder, type(holder), pairs, frozenset(key for key, _ in pairs), shadowable, functions


def machinery() -> Watched:
    """The test machinery: ``builtins``, the modules of :data:`_MACHINERY_PREFIXES` and
    :data:`_ASSERTION_MODULES`, every class defined in them, and for a submodule the parent's binding of it
    (``numpy.testing``)."""
    builtins_module = sys.modules["builtins"]
    builtin_names = frozenset(vars(builtins_module))
    spaces = [_space("builtins", builtins_module, dict(vars(builtins_module)), frozenset())]
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or not (name.startswith(_MACHINERY_PREFIXES)
                                                             or name in _ASSERTION_MODULES):
            continue
        spaces.append(_space(name, module, dict(vars(module)), builtin_names))
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if isinstance(parent, types.ModuleType) and vars(parent).get(child) is module:
            spaces.append(_space(f"{name} (as {parent_name}.{child})", parent, {child: module}, frozenset()))
        for value in list(vars(module).values()):
            if type(value) is type and vars(value).get("__module__") == name:
                spaces.append(_space(f"{name}.{value.__qualname__}", value, dict(vars(value)), frozenset(dir(value))))
    return tuple(spaces)


def _class_bindings(classes: tuple[type, ...], tuple: Any = tuple, enumerate: Any = enumerate, dict: Any = dict,
                    vars: Any = vars, frozenset: Any = frozenset, dir: Any = dir, _space: Any = _space) -> Watched:
    return tuple(_space(f"test class {cls.__qualname__}#{index}", cls, dict(vars(cls)), frozenset(dir(cls)))
                 for index, cls in enumerate(classes))


def _changed(watched: Watched, type: Any = type, vars: Any = vars, len: Any = len, str: Any = str,
             zip: Any = zip, _insides: Any = _insides, _MISSING: Any = _MISSING) -> str | None:
    """The first binding of ``watched`` its holder no longer has, a shadowing one it gained, a holder whose type
    changed, or a function whose defaults or closure changed; compared by identity only (no ``==``, no hashing of
    the program's objects)."""
    for space, holder, holder_type, bindings, keys, shadowable, functions in watched:
        if type(holder) is not holder_type:
            return f"{space}'s type was replaced"
        live = vars(holder)
        for key, value in bindings:
            if live.get(key, _MISSING) is not value:
                return f"{space}.{key} was replaced"
        if len(live) != len(bindings):
            for key in [*live]:
                if type(key) is not str or (key not in keys and key in shadowable):
                    return f"{space} gained {key if type(key) is str else 'a name'}"
        for key, function, insides in functions:
            now = _insides(function)
            if len(now) != len(insides):
                return f"{space}.{key}'s defaults or closure changed"
            for before, after in zip(now, insides):
                if before is not after:
                    return f"{space}.{key}'s defaults or closure changed"
    return None


def _test_classes(cls: type, tuple: Any = tuple, getattr: Any = getattr) -> tuple[type, ...]:
    """The test class and the classes of its MRO the test module defined (not unittest's, not object)."""
    return tuple(klass for klass in cls.__mro__ if getattr(klass, "__module__", None) == "__test__")


def _marked(obj: Any, getattr: Any = getattr, Exception: Any = Exception) -> str | None:
    for marker, what in (("__unittest_skip__", "a skip marker"),
                         ("__unittest_expecting_failure__", "an expected-failure marker")):
        try:
            if marker in getattr(obj, "__dict__", {}):
                return what
        except Exception:  # a marker that cannot be read is itself a sign of tampering
            return "an unreadable marker"
    return None


def _message(exc: BaseException, type: Any = type, str: Any = str, Sealed: Any = Sealed,
             BaseException: Any = BaseException, modules: frozenset[str] = frozenset(
                 ("builtins", "unittest.case", "_Sealed", __name__))) -> str:
    """The exception's message, bounded; its ``str`` is the program's code for a class it made, so it is read
    only for the standard library's exception types."""
    if type(exc).__module__ in modules or type(exc) is Sealed:
        try:
            text = str(exc)
            return text[:2000] if type(text) is str else ""
        except BaseException:
            return ""
    return ""


Report = tuple[tuple[str, str], ...]  # a test's verdict as the reporting hook writes it
PASSED: Report = (("status", "passed"),)


def _failure(exc: BaseException, stage: str, type: Any = type, str: Any = str, BaseException: Any = BaseException,
             _message: Any = _message) -> Report:
    """The verdict for an exception out of ``stage``; its type's name read without running the program's code."""
    try:
        name = type(exc).__name__ if type(type(exc)) is type else "exception"
        name = name if type(name) is str else "exception"
    except BaseException:
        name = "exception"
    return ("status", "failed"), ("stage", stage), ("exception_type", name[:100]), ("message", _message(exc))


def _load(code: str, imports: str, test: str, class_name: str, watched: Watched, tracked: Tracked,
          pristine_modules: tuple[tuple[str, Any, type], ...], namespace: dict[str, Any], modules: dict[str, Any],
          classes: Classes, names: frozenset[str], roots: tuple[str, ...],
          sys: Any = sys, compile: Any = compile, exec: Any = exec, type: Any = type, issubclass: Any = issubclass,
          Sealed: Any = Sealed, _changed: Any = _changed, library_change: Any = library_change,
          program_class: Any = program_class, code_objects: Any = code_objects) -> tuple[type, frozenset[int]]:
    """Run the program, then the test module, in ``namespace`` (module docstring, step 3); the test class, and the
    identities of the test module's code objects (the test's own classes are not the program's).
    ``modules`` is the interpreter's module table as it was before the program ran. Everything it reads after the
    program ran is an argument, read from the job before."""
    builtins_module = namespace["__builtins__"]
    exec(compile(code, "__test__.py", "exec"), namespace)  # the program under test
    if sys.modules is not modules:
        raise Sealed("the program replaced sys.modules")
    unittest_module = None
    for name, pristine, pristine_type in pristine_modules:
        if modules.get(name) is not pristine:
            modules[name] = pristine  # the test module imports the real unittest, numpy..., as it would have
        if type(pristine) is not pristine_type:
            raise Sealed(f"the program changed the type of the module {name}")
        if name == "unittest":
            unittest_module = pristine
    namespace["__builtins__"] = builtins_module  # the test module's own builtins, not a copy the program made
    tampered = _changed(watched) or library_change(tracked)
    if tampered is not None:
        raise Sealed(f"the program changed the test machinery: {tampered}")
    rigged = program_class(classes, names, roots, frozenset())
    if rigged is not None:
        raise Sealed(rigged)
    if imports:  # the prompt's own imports again: the names the tests use are the real modules
        exec(compile(imports, "__test__.py", "exec"), namespace)
    test_code = compile(test, "__test__.py", "exec")
    exec(test_code, namespace)  # the benchmark's test module
    cls: Any = namespace.get(class_name)
    if type(cls) is not type or unittest_module is None or not issubclass(cls, unittest_module.TestCase):
        raise Sealed(f"{class_name} is not a unittest.TestCase class")
    return cls, code_objects(test_code)


def _out_of_reach(modules: dict[str, Any]) -> None:
    """Take the judge's own modules out of the program's way: out of the module table (an ``import`` of one
    finds nothing in the jail, a fresh copy elsewhere), the runner's script no longer ``__main__``, this folder
    off the path. (Frames still reach them, but nothing the judge reads once the program runs is looked up there.)"""
    main = modules.get("__main__")
    if isinstance(main, types.ModuleType):
        vars(main).pop("_unittest_seal", None)  # the runner's reference, reachable through its classes' methods
    for name in ("__main__", __name__, "_unittest_hooks", "_unittest_libraries", "_unittest_classes",
                 "_unittest_runner", "_unittest_jail", "_unittest_reports", "_mounts", "_hidden", "_procs"):
        modules.pop(name, None)
    modules["__main__"] = types.ModuleType("__main__")
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if entry != here]


def _retyped(pristine_modules: tuple[tuple[str, Any, type], ...], type: Any = type) -> str | None:
    """A module the runner loaded whose type is no longer its own (a subclass that answers attribute reads)."""
    for name, module, module_type in pristine_modules:
        if type(module) is not module_type:
            return f"the type of the module {name} was changed"
    return None


def _run_method(cls: type, method_name: str, watched: Watched, tracked: Tracked,
                pristine_modules: tuple[tuple[str, Any, type], ...], classes: Classes, names: frozenset[str],
                roots: tuple[str, ...], test_codes: frozenset[int], type: Any = type, vars: Any = vars,
                Sealed: Any = Sealed, FunctionType: Any = types.FunctionType, _changed: Any = _changed,
                library_change: Any = library_change, _retyped: Any = _retyped, _marked: Any = _marked,
                program_class: Any = program_class) -> None:
    """One test method as its own ``TestCase`` instance: ``setUp``, the method, ``tearDown``, the cleanups, with the
    machinery checked before and after (module docstring, steps 4 and 5) and, as soon as the method returns (before
    the collector can free a class it compared with), the classes the program made (``_unittest_classes.py``).
    Returns only when it passed."""
    tampered = _changed(watched) or library_change(tracked) or _retyped(pristine_modules)
    if tampered is not None:
        raise Sealed(f"the test machinery changed before the test: {tampered}")
    function: Any = None
    for klass in cls.__mro__:
        if method_name in vars(klass):
            function = vars(klass)[method_name]
            break
    if type(function) is not FunctionType:
        raise Sealed(f"{cls.__name__}.{method_name} is not a function")
    for obj, where in ((cls, "the test class"), (function, "the test method")):
        marker = _marked(obj)
        if marker is not None:
            raise Sealed(f"{where} carries {marker}")
    instance = cls(method_name)
    instance.setUp()
    try:
        function(instance)
        rigged = program_class(classes, names, roots, test_codes)
        if rigged is not None:
            raise Sealed(rigged)
    finally:
        instance.tearDown()
    while instance._cleanups:
        cleanup, args, kwargs = instance._cleanups.pop()
        cleanup(*args, **kwargs)
    tampered = _changed(watched) or library_change(tracked) or _retyped(pristine_modules)
    if tampered is not None:
        raise Sealed(f"the test machinery changed during the test: {tampered}")


def run_tests(job: dict[str, Any], first: int, report_fd: int, nonce_fd: int, len: Any = len, tuple: Any = tuple,
              BaseException: Any = BaseException, Sealed: Any = Sealed, PASSED: Report = PASSED,
              audit: Any = sys.audit, exit_now: Any = os._exit, report_event: str = REPORT_EVENT,
              _load: Any = _load, _class_bindings: Any = _class_bindings, _test_classes: Any = _test_classes,
              _failure: Any = _failure, _run_method: Any = _run_method, frozenset: Any = frozenset) -> None:
    """The test process's whole life after the fork: seal, load the program and the test module once, run each
    test method from ``first`` on in order (as BigCodeBench's one process per task does), one report each, exit.
    What it needs of ``job`` is read into immutable locals before the program runs (the program can reach ``job``
    through the frames)."""
    install(sys._getframe(), report_fd, nonce_fd, first, _JUDGE_FUNCTIONS, tuple(job["_roots"]))
    code, imports, test, class_name = job["code"], job.get("imports") or "", job["test"], job["class"]
    methods, machinery, pristine_modules = tuple(job["methods"]), job["_machinery"], job["_modules"]
    tracked = job["_tracked"]  # the libraries the tests import (the runner's, and those the child imported)
    classes, names, roots = job["_classes"], frozenset(job["names"]), tuple(job["_roots"])
    known = frozenset(name for name, _, _ in pristine_modules)  # and what the child imported: a fake put back too
    pristine_modules += tuple((name, module, type(module)) for name, module in list(sys.modules.items())
                              if name not in known and name != "__main__")
    del known
    module = types.ModuleType("__test__")
    namespace = module.__dict__
    modules = sys.modules
    builtins_module = modules["builtins"]
    namespace.update({"__builtins__": builtins_module, "__file__": "__test__.py", "__package__": None,
                      "__doc__": None, "sys": sys, "os": os, "environ": os.environ})
    modules["__test__"] = module
    _out_of_reach(modules)
    del job
    cls: type | None = None
    test_codes: frozenset[int] = frozenset()
    watched: Watched = ()
    loading: Report = (("status", "failed"),)
    try:
        cls, test_codes = _load(code, imports, test, class_name, machinery, tracked, pristine_modules, namespace,
                                modules, classes, names, roots)
        watched = machinery + _class_bindings(_test_classes(cls))
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
                _run_method(cls, methods[index], watched, tracked, pristine_modules, classes, names, roots,
                            test_codes)
                verdict = PASSED
            except BaseException as exc:  # every way out of a test but returning is a failure
                verdict = _failure(exc, "running the test")
        audit(report_event, index, verdict)
        index += 1
    exit_now(0)


def run_in_a_thread(job: dict[str, Any], first: int, report_fd: int, nonce_fd: int, stack_bytes: int) -> None:
    """:func:`run_tests` on a thread of its own (with the stack the task's limits give the process), this main
    thread waiting until it ends the process: signal handlers are the main thread's alone, so the program, which
    runs on the other, cannot install one (``signal.signal`` raises there), and no handler of its runs with a
    frame of the judge's. An exception out of the tests' thread ends the process with status 70 (a crash)."""
    try:
        _thread.stack_size(stack_bytes)
    except (ValueError, OverflowError):
        pass
    never = _thread.allocate_lock()
    never.acquire()
    _thread.start_new_thread(_tests_thread, (job, first, report_fd, nonce_fd))
    try:
        never.acquire()  # never released: the tests' thread ends the process (os._exit)
    finally:
        os._exit(70)


def _tests_thread(job: dict[str, Any], first: int, report_fd: int, nonce_fd: int, exit_now: Any = os._exit,
                  run_tests: Any = run_tests) -> None:
    try:
        run_tests(job, first, report_fd, nonce_fd)
    finally:
        exit_now(70)  # run_tests ends the process itself (status 0) after its last report


# the functions whose defaults hold what they read once the program runs: the seal refuses replacing them
_JUDGE_FUNCTIONS = (*CHECK_FUNCTIONS, _insides, _space, _class_bindings, _changed, cell_contents, library_change, _test_classes,
                    _marked, _message, _failure, _load, _retyped, _run_method, run_tests, _tests_thread)
