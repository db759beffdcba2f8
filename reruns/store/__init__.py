"""The run store (``sotacheck.reruns.store``): every model call and cell of a run in SQLite (``run_store``),
written in group commits (``group_commit``), exported as the run directory's tables (``export``).

The public modules are ``__all__`` (``docs/python-api.md`` lists them), imported on first use; ``writes``
is ``run_store``'s internal, and so is ``call_index``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.lazy import lazy_submodules

if TYPE_CHECKING:
    from sotacheck.reruns.store import export, group_commit, run_store

__all__ = ["export", "group_commit", "run_store"]

__getattr__ = lazy_submodules(__name__, __all__)
