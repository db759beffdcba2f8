"""What an executor is (:class:`Executor`) and what the orchestration gives it (:class:`CellBatch`); the
executors themselves are named in :data:`sotacheck.reruns.executors.EXECUTORS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.model.base import ChatModel
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.spec import RunSpec
from sotacheck.reruns.store.run_store import RunStore

__all__ = ["CellBatch", "CellItem", "Executor", "OnCell"]

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
