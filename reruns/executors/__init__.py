"""Where a run's cells execute: this process (``local``) or a Ray cluster (``ray``). The orchestration
(``reruns/run.py``) calls one small protocol and never knows which; neither executor imports it.

An executor is not part of the run spec: it never changes a result, so a run started on one resumes on
the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sotacheck.core.errors import UsageError
from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.model.base import ChatModel
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.spec import RunSpec
from sotacheck.reruns.store.run_store import RunStore

__all__ = ["NAMES", "CellBatch", "CellItem", "Executor", "OnCell", "make_executor"]

NAMES = ("local", "ray")
CellItem = tuple[Arm, Problem, int]
OnCell = Callable[[int, int, int], None]
"""Called after each cell with the calls it made, the calls sent to the model for it, and its tokens."""


@dataclass(frozen=True)
class CellBatch:
    """The cells still to run, and what running them needs. ``groups`` are (problem, repeat) groups whose
    arms run in order, so that a sweep's settings find an earlier setting's replies in the store."""

    run_dir: Path
    spec: RunSpec
    dataset: Dataset
    model: ChatModel
    store: RunStore
    replay: bool
    groups: list[list[CellItem]]


class Executor(Protocol):
    """Runs cells; ``connect`` fails fast (before any model call) when it cannot run anything."""

    def connect(self) -> None: ...

    async def run_cells(self, batch: CellBatch, on_cell: OnCell) -> tuple[int, int]:
        """Run every cell of ``batch``; returns (calls made, calls sent to the model)."""
        ...

    def close(self) -> None: ...


def make_executor(name: str, ray_address: str | None = None) -> Executor:
    """The executor called ``name`` (``local`` or ``ray``); Ray is imported only for ``ray``."""
    if name == "local":
        from sotacheck.reruns.executors.local import LocalExecutor

        return LocalExecutor()
    if name == "ray":
        from sotacheck.reruns.executors.ray import RayExecutor

        return RayExecutor(ray_address)
    raise UsageError(f"--executor {name!r}: expected 'local' or 'ray'")
