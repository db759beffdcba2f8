"""Where a run's cells execute: this process (``local``) or a Ray cluster (``ray``). The orchestration
(``reruns/run.py``) calls one small protocol (:class:`~sotacheck.reruns.executors.base.Executor`) and never knows
which; neither executor imports it.

An executor is not part of the run spec: it never changes a result, so a run started on one resumes on
the other.

The executors are named in one registry, :data:`EXECUTORS`; the API's checks and the CLI's ``--executor`` choice
read their names from it, so that adding an executor is one module and one entry::

    EXECUTORS.entries["mine"] = Entry("mypackage.executor:MyExecutor", "cells on my cluster")

An entry names a class (or any callable) taking the cluster's address (``--ray-address``; None for the default)
and returning an :class:`~sotacheck.reruns.executors.base.Executor`. This module imports no executor, nor the
harness: listing the names (``sotacheck --help``) stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sotacheck.core.registry import Entry, Registry

if TYPE_CHECKING:
    from sotacheck.reruns.executors.base import CellBatch, CellItem, Executor, OnCell

__all__ = ["EXECUTORS", "CellBatch", "CellItem", "Executor", "OnCell", "make_executor"]

EXECUTORS: Registry[Callable[[str | None], Executor]] = Registry("executor", {
    "local": Entry("sotacheck.reruns.executors.local:LocalExecutor", "this machine"),
    "ray": Entry("sotacheck.reruns.executors.ray:RayExecutor", "cells as Ray tasks; pip install 'sotacheck[ray]'"),
})
"""Every executor, by the name ``--executor`` takes, in the order the CLI lists them (the first is the default)."""


def make_executor(name: str, ray_address: str | None = None) -> Executor:
    """The executor registered as ``name`` in :data:`EXECUTORS`, for the cluster at ``ray_address``; its module
    (Ray's, for ``ray``) is imported only then.

    Raises
    ------
    UsageError
        ``name`` is not registered (the message lists the choices).
    """
    return EXECUTORS.get(name)(ray_address)


def __getattr__(name: str) -> Any:
    """The protocol's names (:mod:`.base`), imported on first use: they import the harness."""
    if name in ("CellBatch", "CellItem", "Executor", "OnCell"):
        return getattr(importlib.import_module("sotacheck.reruns.executors.base"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
