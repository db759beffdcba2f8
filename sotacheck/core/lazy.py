"""Packages whose submodules are their public names, imported on first use (PEP 562).

A package's ``__init__`` states its public submodules in ``__all__`` and sets
``__getattr__ = lazy_submodules(__name__, __all__)``: ``import sotacheck.audit`` then stays as cheap as an
empty ``__init__`` (the CLI's start-up imports packages, not their statistics), while
``sotacheck.audit.analysis`` still works after it. Modules left out of ``__all__`` are internal: they may
change without notice.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType

__all__ = ["lazy_submodules"]


def lazy_submodules(package: str, names: Sequence[str]) -> Callable[[str], ModuleType]:
    """A module-level ``__getattr__`` for ``package`` that imports its submodule ``name`` when one of
    ``names`` is first looked up, and raises :class:`AttributeError` for any other name."""
    public = frozenset(names)

    def __getattr__(name: str) -> ModuleType:
        if name not in public:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return importlib.import_module(f"{package}.{name}")

    return __getattr__
