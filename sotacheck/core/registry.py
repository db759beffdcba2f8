"""One lazy registry type for every kind of plug-in (pipelines, model back-ends, import kinds, benchmarks and
CLI commands): a name maps to ``"module:attribute"`` and a one-line description, and the
module is imported only when the entry is first used, so that listing the names (``sotacheck --help``)
imports nothing.

Adding a plug-in is one file (the module that defines the object) and one line::

    IMPORTERS = Registry("import kind", {
        "csv": Entry("sotacheck.audit.importers.table:CSV", "a long table in CSV"),
    })

``get(name)`` imports the module, checks the object with the registry's ``check`` (e.g. that it is a pipeline
named ``name``), and returns it; an unknown name is a :class:`~sotacheck.core.errors.UsageError` listing the
choices. Tests and plug-ins add an entry with ``registry.entries[name] = Entry(...)`` (``monkeypatch.setitem``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

from sotacheck.core.errors import UsageError

T = TypeVar("T")


class Entry(NamedTuple):
    """One registered plug-in.

    Attributes
    ----------
    target : ``"package.module:ATTRIBUTE"``; without ``:ATTRIBUTE`` the registry's ``default_attribute``.
    description : one line, shown in listings without importing the module.
    """

    target: str
    description: str = ""


@dataclass
class Registry(Generic[T]):
    """Names → lazily imported objects.

    Parameters
    ----------
    kind : what an entry is, for messages (``"import kind"``: "unknown import kind 'x'; choose one of ...").
    entries : name → :class:`Entry` (or a bare target string), in the order listings show them.
    default_attribute : the attribute read from a target given without one.
    check : called with ``(name, obj)`` on first use; returns the object as typed, or raises ``TypeError``
        (a wrongly registered plug-in is a bug in the code, not the user's input).
    """

    kind: str
    entries: dict[str, Entry] = field(default_factory=dict)
    default_attribute: str | None = None
    check: Callable[[str, Any], T] | None = None

    def __post_init__(self) -> None:
        self.entries = {name: entry if isinstance(entry, Entry) else Entry(str(entry))
                        for name, entry in dict(self.entries).items()}

    def names(self) -> tuple[str, ...]:
        """Every registered name, in registration order (imports nothing)."""
        return tuple(self.entries)

    def descriptions(self) -> Mapping[str, str]:
        """name → its one-line description (imports nothing)."""
        return {name: entry.description for name, entry in self.entries.items()}

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, name: str) -> T:
        """The object registered as ``name``, its module imported on first use.

        Raises
        ------
        UsageError
            ``name`` is not registered (the message lists the choices).
        TypeError
            The target does not name an object, or ``check`` rejects it.
        """
        entry = self.entries.get(name)
        if entry is None:
            raise UsageError(f"unknown {self.kind} {name!r}; choose one of {', '.join(self.entries)}")
        module_name, _, attribute = entry.target.partition(":")
        attribute = attribute or self.default_attribute or ""
        if not attribute:
            raise TypeError(f"{self.kind} {name!r}: target {entry.target!r} names no attribute")
        try:
            found = getattr(importlib.import_module(module_name), attribute)
        except AttributeError:
            raise TypeError(f"{self.kind} {name!r}: {module_name} has no {attribute}") from None
        return self.check(name, found) if self.check is not None else found

    def load_all(self) -> list[T]:
        """Every registered object, in order (imports every module)."""
        return [self.get(name) for name in self.entries]


def named(cls: type[T], kind: str, what: str) -> Callable[[str, Any], T]:
    """A registry's ``check`` for plug-ins that carry their own name: the object must be a ``cls`` whose
    ``name`` is the name it is registered under (so that a copied registry line cannot serve another plug-in).

    Parameters
    ----------
    cls : the plug-in's type.
    kind : the registry's kind, for the message (``"pipeline"``).
    what : the type as the message says it (``"a Pipeline"``).
    """

    def check(name: str, found: Any) -> T:
        if not isinstance(found, cls) or getattr(found, "name", None) != name:
            raise TypeError(f"{kind} {name!r} must be registered to {what} named {name!r}, not {found!r}")
        return found

    return check
