"""Old names kept for one release after a rename (issue #47), each use warned about.

A public name users may have written (a result's attribute, a module's class or function, a keyword argument)
keeps working for one release under its old spelling, and every use of the old spelling emits a
:class:`DeprecationWarning` that names the new one. Nothing else refers to the old names: they are not in any
``__all__``, and the package's own code uses the new ones. (The command line's old spellings are hidden options
that say so on standard error: :func:`sotacheck.cli.options.deprecated_alias`; a JSON output's renamed key is
written under both names for the release: :func:`with_old_keys`.)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["renamed_attribute", "renamed_keywords", "renamed_names", "warn_renamed", "with_old_keys"]


def warn_renamed(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` was renamed ``new`` (a :class:`DeprecationWarning` pointing at the caller's caller)."""
    warnings.warn(f"{old} is deprecated: it was renamed {new}; the old name goes in the next release",
                  DeprecationWarning, stacklevel=stacklevel)


def renamed_attribute(old: str, new: str) -> Any:
    """A read-only property ``old`` of a class whose attribute was renamed ``new``: it returns ``new``'s value
    and warns. Typed ``Any`` so that it can sit in a dataclass's body beside the fields (it is no field)::

        p = renamed_attribute("p", "pvalue")
    """

    def get(self: Any) -> Any:
        owner = type(self).__name__
        warn_renamed(f"{owner}.{old}", f"{owner}.{new}")
        return getattr(self, new)

    return property(get, doc=f"Deprecated: the old name of ``{new}`` (warns).")


def renamed_keywords(**renamed: str) -> Callable[[F], F]:
    """A function whose keyword arguments were renamed (``old="new"``): a call with an old keyword warns and
    passes its value as the new one; giving both is a :class:`TypeError`. The signature shown (``help``,
    ``inspect.signature``) is the new one::

        @renamed_keywords(samples="sample_count")
        def import_logs(kind, *, sample_count=None): ...
    """

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renamed.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{function.__name__}() got both {old}= (its old name) and {new}=")
                    warn_renamed(f"{function.__name__}({old}=...)", f"{new}=...")
                    kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def renamed_names(module: str, renamed: Mapping[str, str], namespace: Mapping[str, Any],
                  fallback: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` (PEP 562) for ``module`` whose public names were renamed: looking up an
    old name of ``renamed`` (old → new) warns and returns the new name's object from ``namespace`` (the module's
    ``globals()``); any other name goes to ``fallback`` (the module's own lazy ``__getattr__``), else is an
    :class:`AttributeError`."""

    def __getattr__(name: str) -> Any:
        if name in renamed:
            warn_renamed(f"{module}.{name}", f"{module}.{renamed[name]}")
            new = renamed[name]
            return namespace[new] if new in namespace else (fallback(new) if fallback else namespace[new])
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def with_old_keys(record: Mapping[str, Any], renamed: Mapping[str, str]) -> dict[str, Any]:
    """A JSON object with each renamed key (``renamed``: old → new) also under its old name, with the same value,
    after the object's own keys: a script that reads the old key keeps working for the release (JSON has no
    warning to give; the docs list the old keys as deprecated). A new key the object lacks adds nothing."""
    return {**record, **{old: record[new] for old, new in renamed.items() if new in record and old not in record}}
