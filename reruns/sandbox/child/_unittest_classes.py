"""The classes the program made, checked for code of its own that decides a comparison (standard library only;
``_unittest_seal.py`` runs the check after the program loads and after each test, before the test's report).

A value whose class answers ``==`` with ``True`` whatever it is compared with passes ``assertEqual`` against any
expected value: the program decides the test's comparison, not the test. So does a class whose truth, size,
membership, numeric conversion (``assertAlmostEqual`` rounds ``first - second``), ``isinstance`` answer
(``__class__``, a metaclass's ``__instancecheck__``), attribute reads, numpy protocol or ``__exit__`` is the program's
code, and a subclass of a library class (``DataFrame``, ``str``) whose method of a name the test uses (``equals``,
``shape``) is the program's. None of BigCodeBench's canonical solutions defines a special method but ``__init__``.

**A class the program made** is one that did not exist when the program started (every class then alive is kept,
so no new one can take an old one's identity); found by walking ``type.__subclasses__`` from ``object``, which
reaches every live class, however it was made (a ``class`` statement, ``type(...)``, a metaclass). One of its
deciding special methods (:data:`DECIDING`), or a name the test uses that shadows its base's, is **the program's
code** when it is, once unwrapped (``staticmethod``, ``classmethod``, ``property``, ``functools.partial``,
``cached_property``, ``lru_cache``, a bound method and the like): a Python function whose code was not compiled
from a library file (one under the interpreter's or the environment's library folders; code compiled from a
string counts as a library's only where its globals are those of a module loaded from such a file, as
``dataclasses`` and ``namedtuple`` make them), an object of a class the program made (a mock's own child mock
excepted), a callable that does not bind as a method, for a deciding special method
(``bool``, ``operator.truth``, a ufunc: ``x == y`` calls it with ``y`` alone), or a built-in type's method bound
under another name (``__eq__ = int.__ne__``). A class a library makes while the tests run (a lazy import,
matplotlib's backend class) has a library's code and passes. The seal refuses compiling or building code under a
library file's name (``compile``, ``code.replace``) while the program runs, but for the import system compiling
that file's own bytes.

Everything is read by identity, exact type and the interpreter's own descriptors (never ``getattr`` on the
program's classes, whose metaclass could answer): nothing of the program's runs during the check.

Not seen (docs/bigcodebench.md): a class the program made out of a library's functions only (``__eq__`` bound to a
library function that happens to return a true value), a ``unittest.mock`` object it configured, a class it built
from code in a library module's globals or in a module it dressed as a library's, code whose file name it forged
through ``marshal``, and a class collected before the check (a thread or a finalizer of its own that runs the
collector between the test's comparison and the check)."""

from __future__ import annotations

import functools
import itertools
import operator
import sys
import types
from typing import Any

__all__ = ["CHECK_FUNCTIONS", "DECIDING", "Classes", "code_objects", "every_class", "library_roots", "program_class",
           "snapshot"]

# Special methods through which a value decides a comparison, a truth test, a size, a membership, a numeric
# conversion, an ``isinstance`` check, an attribute read, a numpy call, whether an exception propagates, or what an
# object of the class answers when another class calls it as its special method. Narrower than
# ``_unittest_libraries._IMPLICIT`` on purpose: rebinding any special method of a library class is tampering, but a
# class of the program's own may define ``__repr__``, ``__iter__`` or ``__init__`` and be honest.
DECIDING = frozenset(("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__",
                      "__length_hint__", "__contains__", "__int__", "__float__", "__index__", "__complex__",
                      "__round__", "__trunc__", "__floor__", "__ceil__", "__abs__", "__sub__", "__rsub__",
                      "__getattribute__", "__getattr__", "__class__", "__instancecheck__", "__subclasscheck__",
                      "__array__", "__array_ufunc__", "__array_function__", "__exit__", "__aexit__", "__call__"))

# The classes alive before the program ran: their identities (``object.__hash__``, a pointer's hash, raises no
# audit event and runs no metaclass code) and the classes themselves, kept alive so that no identity is reused; and
# ``unittest.mock``'s base class, where it is loaded (a mock makes a class of its own for each mock object, and sets
# a configured special method there as a child mock: the tests' own mocks do it too).
Classes = tuple[frozenset[int], tuple[type, ...], "type | None"]

_CLASS_DICT = type.__dict__["__dict__"].__get__  # a class's own namespace, past any metaclass property
_CLASS_MRO = type.__dict__["__mro__"].__get__
_CLASS_QUALNAME = type.__dict__["__qualname__"].__get__
_SUBCLASSES = type.__dict__["__subclasses__"]
_SLOTS = (types.WrapperDescriptorType, types.MethodDescriptorType)  # int.__ne__, str.startswith
_UNWRAPS = ((staticmethod, "__func__"), (classmethod, "__func__"), (types.MethodType, "__func__"),
            (property, "fget"), (types.DynamicClassAttribute, "fget"), (functools.partial, "func"),
            (functools.partialmethod, "func"), (functools.cached_property, "func"),
            (functools.singledispatchmethod, "func"), (type(functools.lru_cache(None)(len)), "__wrapped__"))


def library_roots() -> tuple[str, ...]:
    """The folders whose files are libraries' (the interpreter's standard library and the environment's
    site-packages): read in the runner, before any program runs."""
    import os
    import sysconfig

    roots = {os.path.realpath(path) for key in ("stdlib", "platstdlib", "purelib", "platlib")
             if (path := sysconfig.get_paths().get(key))}
    roots |= {os.path.realpath(path) for path in sys.path if path.endswith(("site-packages", "dist-packages"))}
    return (*sorted(root.rstrip("/") + "/" for root in roots), "<frozen ")


def snapshot() -> Classes:
    """The classes alive now, as :data:`Classes`: taken in the test process before the program runs."""
    mock = sys.modules.get("unittest.mock")
    alive = every_class()
    return frozenset(alive), tuple(alive.values()), getattr(mock, "NonCallableMock", None)


def every_class(object_type: type = object, hash_of: Any = object.__hash__, subclasses: Any = _SUBCLASSES,
                len: Any = len) -> dict[int, type]:
    """Every live class (``type.__subclasses__`` from ``object``, transitively), by identity, in the walk's order."""
    alive = {hash_of(object_type): object_type}
    found = [object_type]
    index = 0
    while index < len(found):
        for sub in subclasses(found[index]):
            key = hash_of(sub)
            if key not in alive:
                alive[key] = sub
                found.append(sub)
        index += 1
    return alive


def code_objects(code: types.CodeType, CodeType: Any = types.CodeType, type: Any = type,
                 hash_of: Any = object.__hash__) -> frozenset[int]:
    """The identities of ``code`` and of every code object nested in it (its functions', its classes')."""
    found = {hash_of(code)}
    stack = [code]
    while stack:
        for constant in stack.pop().co_consts:
            if type(constant) is CodeType:
                found.add(hash_of(constant))
                stack.append(constant)
    return frozenset(found)


def _library_modules(modules: Any, roots: tuple[str, ...], ModuleType: Any = types.ModuleType,
                     type: Any = type, str: Any = str, hash_of: Any = object.__hash__) -> frozenset[int]:
    """The identities of the namespaces of the modules loaded from a library file."""
    found = set()
    for module in list(modules.values()):
        if type(module) is ModuleType:
            space = module.__dict__
            file = space.get("__file__")
            if type(file) is str and file.startswith(roots):
                found.add(hash_of(space))
    return frozenset(found)


def _programs_code(name: str, value: Any, known: frozenset[int], mock: type | None, roots: tuple[str, ...],
                   test_codes: frozenset[int], library_spaces: list[Any], modules: Any, type: Any = type,
                   str: Any = str, callable: Any = callable, hash_of: Any = object.__hash__,
                   FunctionType: Any = types.FunctionType, getattr: Any = getattr, range: Any = range, any: Any = any,
                   map: Any = map, contains: Any = operator.contains, is_: Any = operator.is_,
                   repeat: Any = itertools.repeat, _UNWRAPS: Any = _UNWRAPS, _CLASS_MRO: Any = _CLASS_MRO,
                   _CLASS_DICT: Any = _CLASS_DICT, _SLOTS: Any = _SLOTS, DECIDING: frozenset[str] = DECIDING,
                   _library_modules: Any = _library_modules) -> bool:
    """Whether ``value``, bound as ``name`` in a class the program made, is the program's code (module
    docstring)."""
    for _ in range(16):
        for wrapper, attribute in _UNWRAPS:
            if type(value) is wrapper:
                value = getattr(value, attribute)
                break
        else:
            break
    if value is None or not callable(value):
        return False
    if type(value) is FunctionType:
        code = value.__code__
        if hash_of(code) in test_codes:  # the test module's own (a helper class of the tests, TestCases.setUp)
            return False
        filename = code.co_filename
        if type(filename) is not str or not (filename.startswith(roots) or filename.startswith("<")):
            return True  # compiled from the program's source ("__test__.py") or a file it wrote
        if filename.startswith(roots):
            return False
        if not library_spaces:  # code compiled from a string: a library's only in a library module's globals
            library_spaces.append(_library_modules(modules, roots))
        return hash_of(value.__globals__) not in library_spaces[0]
    kind = type(value)
    if kind is _SLOTS[0] or kind is _SLOTS[1]:  # a built-in type's own method (identity: no metaclass ``==`` runs)
        return value.__name__ != name  # the program's choice where it answers another name (``__eq__ = int.__ne__``)
    if hash_of(kind) not in known:  # an object of a class made since: the program's, called for the special method,
        # unless it is a mock's own child (a subclass the program made with a method of its own is caught as that class)
        return not any(map(is_, _CLASS_MRO(kind), repeat(mock)))
    if name not in DECIDING:  # a library's class or function bound under a name the test uses (matplotlib's
        return False  # backend class binds FigureCanvas): the library's own
    # a library's descriptor (a slot wrapper, a C method, a mock's proxy) binds as a method; bool, operator.truth or a
    # ufunc does not, and is called with the other operand alone
    return not any(map(contains, map(_CLASS_DICT, _CLASS_MRO(kind)), repeat("__get__")))


def program_class(before: Classes, names: frozenset[str], roots: tuple[str, ...], test_codes: frozenset[int],
                  modules: Any = sys.modules, every_class: Any = every_class, hash_of: Any = object.__hash__,
                  type: Any = type, str: Any = str, list: Any = list, map: Any = map, filter: Any = filter,
                  DECIDING: frozenset[str] = DECIDING, _CLASS_DICT: Any = _CLASS_DICT,
                  _CLASS_MRO: Any = _CLASS_MRO, _CLASS_QUALNAME: Any = _CLASS_QUALNAME,
                  _programs_code: Any = _programs_code) -> str | None:
    """The first class made since ``before`` that carries the program's code in a deciding special method or in a
    name of ``names`` (those the test uses) that shadows an attribute of a class that existed before; a
    description, or None. ``test_codes``: the test module's code objects (:func:`code_objects`), not the
    program's."""
    known, _, mock = before
    library_spaces: list[Any] = []
    alive = every_class()
    made = alive.keys() - known  # by identity, in one C-level pass: the classes made since ``before``
    for klass in map(alive.__getitem__, filter(made.__contains__, alive)):  # in the walk's order: the same each run
        bases = [base for base in _CLASS_MRO(klass)[1:] if hash_of(base) in known]
        for name, value in list(_CLASS_DICT(klass).items()):
            if type(name) is not str:
                continue
            if name not in DECIDING and (name not in names or not [base for base in bases
                                                                   if name in _CLASS_DICT(base)]):
                continue
            if _programs_code(name, value, known, mock, roots, test_codes, library_spaces, modules):
                label = _CLASS_QUALNAME(klass)  # a str subclass of the program's would run its code when sliced
                label = label[:100] if type(label) is str else "a class"
                return f"a class the program made ({label}) decides {name} with code of its own"
    return None


# the functions the check runs once the program has: the seal refuses replacing their defaults
CHECK_FUNCTIONS = (every_class, code_objects, _library_modules, _programs_code, program_class)
