"""The libraries the tests call into, watched in the test process (standard library only; ``_unittest_seal.py``
checks them before and after each test, as it checks the test machinery).

A test's verdict also rests on the library functions it compares with (``np.allclose``, ``np.array_equal``,
``DataFrame.equals``, ``len(df)``): a program that rebinds one of them, or gives a class a method that shadows
one, buys a pass as surely as a no-op assertion. Watched, for each task: every name the test module uses (its
identifiers, from the judge's ``ast`` walk, ``unittest_sources.watched_libraries``) and the special methods that
comparisons, ``len``, ``in`` and truth call implicitly, in the namespaces of the modules the test module and the
prompt import (one level of their submodules too, for names: ``np.linalg.norm``) and of every class bound in those
modules, with its bases (not the interpreter's immutable types, which nothing can change): the classes a test
builds its expected values from (``pd.DataFrame(...)``); what the program returns is its own, rigged or not. An
absent name is watched too: gaining it is the change. What a watched function uses inside (a private global, a
helper it calls) is not watched.

The libraries the runner loaded are tracked there, once per task before the fork (a lazy name is loaded there
once); the test process tracks the ones it imports itself. Reading a binding in the test process touches the
object's reference count, a copy-on-write fault on its page: the set is kept to what the tests can reach (19,000
bindings for a pandas, scipy and matplotlib task with every submodule's classes, 3,500 without; 2 % of the
judge's time on the first 80 tasks instead of 6 %)."""

from __future__ import annotations

import importlib
import operator
import sys
import types
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

__all__ = ["Tracked", "catalogue", "cell_contents", "joined", "library_change", "track"]

_MISSING = object()

_IMPLICIT = frozenset(("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__",
                       "__contains__", "__iter__", "__next__", "__getitem__", "__hash__", "__float__", "__int__",
                       "__index__", "__round__", "__abs__", "__neg__", "__add__", "__sub__", "__mul__", "__truediv__",
                       "__str__", "__repr__", "__format__", "__array__", "__array_ufunc__", "__array_function__",
                       "__array_priority__", "__getattr__", "__getattribute__", "__instancecheck__",
                       "__subclasscheck__", "__enter__", "__exit__", "__call__", "__init__", "__new__", "__class__"))
_UNWATCHED_LIBRARIES = frozenset(("sys", "builtins", "__future__", "__main__", "__test__"))
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: the interpreter refuses any change to such a class
# A library namespace catalogued: its label, its holder (a module or a class) and, for a class, the names it has
# (``dir``: a name it lacks shadows nothing when gained) and the implicit special methods among them; for a module,
# None (its own bindings, read when watched) and its ``__getattr__`` (gaining one answers every missing name).
Holder = tuple[str, Any, "frozenset[str] | None", tuple[str, ...]]
_CATALOGUE: dict[str, tuple[Holder, ...]] = {}
# The bindings watched for one task, flat so that a check is a few C-level passes (``map`` with ``operator.is_``):
# the holders, their types and labels; per binding its namespace's ``get``, its name, the value it had (or _MISSING)
# and its holder's index; the functions among those values with their defaults and keyword defaults; and their
# closure cells with their contents.
Tracked = tuple[tuple[Any, ...], tuple[type, ...], tuple[str, ...], tuple[Any, ...], tuple[str, ...], tuple[Any, ...],
                tuple[int, ...], tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]
_OWNERS = 6  # Tracked's field of each binding's holder index
_MODULE_IMPLICIT = ("__getattr__",)
_call: Any = getattr(operator, "call", None) or (lambda function, *args: function(*args))  # operator.call: 3.11+

# Read by type and by ``vars`` only: a library's lazy object (Django's settings) runs code, and may raise, when
# ``isinstance`` or ``getattr`` asks it anything.
def _mutable_class(value: Any) -> bool:
    return issubclass(type(value), type) and not type.__getattribute__(value, "__flags__") & _IMMUTABLE_TYPE


def _is_submodule(value: Any, name: str) -> bool:
    if not issubclass(type(value), types.ModuleType):
        return False
    own = vars(value).get("__name__")
    return type(own) is str and own.startswith(f"{name}.")


def _catalogued(name: str, module: types.ModuleType) -> tuple[Holder, ...]:
    holders: list[Holder] = []
    seen: set[int] = set()
    modules = [module] + [value for value in list(vars(module).values()) if _is_submodule(value, name)]
    for each in modules:
        if id(each) in seen:
            continue
        seen.add(id(each))
        holders.append((str(vars(each).get("__name__", name)), each, None, _MODULE_IMPLICIT))
        if each is not module:  # a submodule's names only: the classes a test builds its expected values from are
            continue  # the ones it names, bound in what it imports (what the program returns is its own, rigged or not)
        for value in list(vars(each).values()):
            if not _mutable_class(value):
                continue
            for klass in type.__getattribute__(value, "__mro__"):
                if id(klass) in seen or not _mutable_class(klass):
                    continue
                seen.add(id(klass))
                try:
                    names = frozenset(name for name in dir(klass) if type(name) is str)
                except Exception:  # a library class whose dir() fails: watch its own bindings only
                    names = frozenset(key for key in vars(klass) if type(key) is str)
                holders.append((f"{vars(klass).get('__module__', '?')}.{klass.__qualname__}", klass, names,
                                tuple(_IMPLICIT.intersection(names))))
    return tuple(holders)


def catalogue(libraries: list[str], import_missing: bool = False) -> dict[str, tuple[Holder, ...]]:
    """The namespaces of each module of ``libraries`` that is loaded (or, with ``import_missing``, that imports):
    the module's and its submodules' one level down, and every mutable class bound in the module with its bases.
    Kept per module for the runner's life (it never runs a program: its libraries stay pristine)."""
    found: dict[str, tuple[Holder, ...]] = {}
    for name in libraries:
        if name in _UNWATCHED_LIBRARIES:
            continue
        if name in _CATALOGUE:
            found[name] = _CATALOGUE[name]
            continue
        module: Any = sys.modules.get(name)
        if module is None and import_missing:
            try:
                module = importlib.import_module(name)
            except BaseException:  # not a module (``from X import function``) or not importable: the tests say
                continue
        if issubclass(type(module), types.ModuleType):
            try:
                found[name] = _CATALOGUE[name] = _catalogued(name, module)
            except Exception:  # a library that cannot be read without running it: not watched (docs/bigcodebench.md)
                continue
    return found


def track(catalogued: dict[str, tuple[Holder, ...]], names: frozenset[str]) -> Tracked:
    """What to watch for one task, with the values it has now, before the program runs: in each catalogued class,
    the ``names`` the test uses and the implicit special methods, those of them it has (a name it lacks shadows
    nothing when it gains it); in each module, the ``names`` it binds and its ``__getattr__``, and where it has one
    (a lazy module: ``sklearn.datasets``), every name, after asking it for them once (as the tests would: a lazy
    submodule is loaded now, not counted as gained later)."""
    holders: list[Any] = []
    labels: list[str] = []
    getters: list[Any] = []
    keys: list[str] = []
    owners: list[int] = []
    seen: set[int] = set()
    for holder_list in catalogued.values():
        for label, holder, has, implicit in holder_list:
            if id(holder) in seen:
                continue
            seen.add(id(holder))
            live = vars(holder)
            if has is None and "__getattr__" in live:
                for key in names.difference(live):
                    try:
                        getattr(holder, key)
                    except BaseException:  # a name it does not have: its absence is what is watched
                        pass
                chosen = [*names, *implicit]
            elif has is None:
                chosen = [*names.intersection(live), *implicit]
            else:
                chosen = [*names.intersection(has), *implicit]
            owners.extend(repeat(len(holders), len(chosen)))
            getters.extend(repeat(live.get, len(chosen)))
            keys.extend(chosen)
            holders.append(holder)
            labels.append(label)
    values = tuple(map(_call, getters, keys, repeat(_MISSING)))
    functions, defaults, kwdefaults, cells, contents = [], [], [], [], []
    for value in values:
        if type(value) is types.FunctionType and id(value) not in seen:
            seen.add(id(value))
            functions.append(value)
            defaults.append(value.__defaults__)
            kwdefaults.append(value.__kwdefaults__)
            for cell in value.__closure__ or ():
                cells.append(cell)
                contents.append(cell_contents(cell))
    return (tuple(holders), tuple(map(type, holders)), tuple(labels), tuple(getters), tuple(keys), values,
            tuple(owners), tuple(functions), tuple(defaults), tuple(kwdefaults), tuple(cells), tuple(contents))


def joined(first: Tracked, second: Tracked) -> Tracked:
    """Both sets of bindings as one (the runner's, tracked before the fork, and the test process's own)."""
    offset = len(first[0])  # the second's owners index its own holders, which now follow the first's
    parts: list[Any] = [a + b for a, b in zip(first, second, strict=True)]
    before: Any = first[_OWNERS]
    after: Any = second[_OWNERS]
    parts[_OWNERS] = before + tuple(owner + offset for owner in after)
    return tuple(parts)


def cell_contents(cell: Any, ValueError: Any = ValueError, _MISSING: Any = _MISSING) -> Any:
    """A closure cell's contents, or the missing marker for an empty cell (filling it is a change too)."""
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


def library_change(tracked: Tracked, all: Any = all, map: Any = map, type: Any = type, is_: Any = is_,
                   repeat: Any = repeat, zip: Any = zip, call: Any = _call,
                   defaults_of: Any = attrgetter("__defaults__"), kwdefaults_of: Any = attrgetter("__kwdefaults__"),
                   cell_contents: Any = cell_contents, _MISSING: Any = _MISSING, modules: Any = sys.modules,
                   ModuleType: Any = types.ModuleType) -> str | None:
    """The first watched library binding that changed (replaced, removed or gained), a holder whose type changed, or
    a watched function whose defaults or closure changed; by identity only, in C-level passes. A module that gained
    its own submodule (``import sklearn.datasets`` binds ``datasets`` in ``sklearn``) has not changed."""
    holders, holder_types, labels, getters, keys, values, owners, functions, defaults, kwdefaults, cells, contents = \
        tracked
    if not all(map(is_, map(type, holders), holder_types)):
        for holder, holder_type, label in zip(holders, holder_types, labels):
            if type(holder) is not holder_type:
                return f"{label}'s type was replaced"
    if not all(map(is_, map(call, getters, keys, repeat(_MISSING)), values)):
        for getter, key, value, owner in zip(getters, keys, values, owners):
            now = getter(key, _MISSING)
            if now is value or (value is _MISSING and type(now) is ModuleType
                                and modules.get(f"{labels[owner]}.{key}") is now):
                continue
            return f"{labels[owner]}.{key} was {'added' if value is _MISSING else 'replaced'}"
    if not (all(map(is_, map(defaults_of, functions), defaults))
            and all(map(is_, map(kwdefaults_of, functions), kwdefaults))):
        return "a library function's defaults changed"
    if not all(map(is_, map(cell_contents, cells), contents)):
        return "a library function's closure changed"
    return None
