"""Fidelity of a run to the method it names: how many calls and tokens each problem took, and how many
replies the token limit cut.

A rerun that cuts a method's plans or code at ``max_tokens`` runs a different method; a rerun whose calls
per problem look nothing like the authors' logs probably does too. This module puts both in numbers, per
arm: calls per problem (mean, median, range and the most frequent counts, the figures the authors' logs
give: MapCoder's released ChatGPT HumanEval 5-5 run makes 12 calls on 112 problems and 41 on 21), prompt
and completion tokens per problem, and, where the run has a call table (a rerun's ``calls.parquet``), the
share of calls whose ``finish_reason`` is ``length``, overall and by stage. An arm with more than
:data:`TRUNCATION_WARNING_SHARE` of its calls cut gets a warning. Imported logs give calls and tokens per
problem but no finish reasons: their truncation is "not recorded", never 0.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from sotacheck.core.rundir import Run

TRUNCATION_WARNING_SHARE = 0.01
CUT_REASON = "length"  # OpenAI's (and llama.cpp's) finish_reason for a reply stopped by max_tokens


@dataclass(frozen=True)
class StageTruncation:
    """One stage's calls and how many of them the token limit cut."""

    stage: str
    calls: int
    cut: int

    @property
    def share(self) -> float:
        return self.cut / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class ArmFidelity:
    """One arm of one run: calls and tokens per problem, and truncation where the run records it.

    Parameters
    ----------
    run, arm, dataset : where the figures come from.
    cells : the arm's cells (all repeats).
    cells_with_calls : of those, the cells with a recorded call count (the calls figures are over these).
    calls_mean, calls_median, calls_min, calls_max : calls per cell; None when no cell records its calls.
    calls_counts : (calls, cells) pairs, the most frequent first (ties: fewer calls first).
    prompt_tokens_mean, completion_tokens_mean : tokens per cell; None when not recorded.
    calls_recorded : calls in the run's call table; None when the run has no call table.
    cut : of those, the ones whose reply the token limit stopped; None when there is no call table.
    by_stage : the cut calls' stages, each with its own count of calls (stages with no cut call left out).
    """

    run: str
    arm: str
    dataset: str
    cells: int
    calls_mean: float | None
    calls_median: float | None
    calls_min: int | None
    calls_max: int | None
    calls_counts: tuple[tuple[int, int], ...]
    prompt_tokens_mean: float | None
    completion_tokens_mean: float | None
    calls_recorded: int | None
    cut: int | None
    by_stage: tuple[StageTruncation, ...]
    cells_with_calls: int = 0

    @property
    def truncation_share(self) -> float | None:
        """The share of the arm's calls cut by the token limit; None when not recorded."""
        if self.calls_recorded is None or self.cut is None:
            return None
        return self.cut / self.calls_recorded if self.calls_recorded else 0.0

    @property
    def warning(self) -> str | None:
        """A one-line warning when more than ``TRUNCATION_WARNING_SHARE`` of the calls were cut."""
        share = self.truncation_share
        if share is None or share <= TRUNCATION_WARNING_SHARE:
            return None
        stages = ", ".join(f"{s.stage} {s.cut}/{s.calls}" for s in self.by_stage)
        return (f"{self.run}: arm {self.arm}: {100 * share:.1f} % of its calls ({self.cut} of {self.calls_recorded}) "
                f"were cut by the token limit ({stages}): the method ran with truncated replies")


def _is_cut(calls: pd.DataFrame) -> pd.Series:
    """Per call: whether the token limit stopped its reply."""
    return calls["finish_reason"].fillna("").astype(str) == CUT_REASON


def _mean(values: pd.Series) -> float | None:
    values = values.dropna()
    return float(values.astype(float).mean()) if len(values) else None


def _arm(run: Run, arm: str, dataset: str, cells: pd.DataFrame, calls: pd.DataFrame | None) -> ArmFidelity:
    counted = cells["calls"].dropna().astype(int) if "calls" in cells else pd.Series(dtype=int)
    frequency = sorted(Counter(counted.tolist()).items(), key=lambda item: (-item[1], item[0]))
    recorded = cut = None
    stages: tuple[StageTruncation, ...] = ()
    if calls is not None:
        own = calls[(calls["arm"] == arm) & (calls["dataset"] == dataset)]
        is_cut = _is_cut(own)
        recorded, cut = len(own), int(is_cut.sum())
        per_stage = own.assign(cut=is_cut).groupby("stage", sort=True)["cut"].agg(["size", "sum"])
        stages = tuple(StageTruncation(str(stage), int(row["size"]), int(row["sum"]))
                       for stage, row in per_stage.iterrows() if int(row["sum"]))
    return ArmFidelity(
        run=run.name, arm=arm, dataset=dataset, cells=len(cells), cells_with_calls=len(counted),
        calls_mean=float(counted.mean()) if len(counted) else None,
        calls_median=float(counted.median()) if len(counted) else None,
        calls_min=int(counted.min()) if len(counted) else None,
        calls_max=int(counted.max()) if len(counted) else None,
        calls_counts=tuple(frequency),
        prompt_tokens_mean=_mean(cells["prompt_tokens"]) if "prompt_tokens" in cells else None,
        completion_tokens_mean=_mean(cells["completion_tokens"]) if "completion_tokens" in cells else None,
        calls_recorded=recorded, cut=cut, by_stage=stages)


def run_fidelity(run: Run) -> list[ArmFidelity]:
    """Every arm × dataset of one run, in the order of the outcome table."""
    table = run.outcomes
    pairs = list(dict.fromkeys(zip(table["arm"], table["dataset"], strict=True)))
    return [_arm(run, str(arm), str(dataset), table[(table["arm"] == arm) & (table["dataset"] == dataset)], run.calls)
            for arm, dataset in pairs]


def fidelity(runs: Sequence[Run]) -> list[ArmFidelity]:
    """:func:`run_fidelity` of each run, in order (runs are never pooled: each arm stays with its run)."""
    return [row for run in runs for row in run_fidelity(run)]


def truncation_warnings(rows: Sequence[ArmFidelity]) -> list[str]:
    """The warning lines of the arms over the threshold."""
    return [row.warning for row in rows if row.warning]


@dataclass(frozen=True)
class CellCalls:
    """One cell's model calls and verdict.

    Parameters
    ----------
    calls : model calls the cell made; None when its run does not record them.
    status : the cell's status (``passed``, ``failed``, ``error``, ...).
    cut : of its calls, those the token limit stopped; None when the run has no call table.
    """

    calls: int | None
    status: str
    cut: int | None


@dataclass(frozen=True)
class ProblemCalls:
    """One problem × repeat, with its cell in each column of a :class:`CallsByProblem` (None: not run)."""

    problem: str
    repeat: int
    cells: tuple[CellCalls | None, ...]


@dataclass(frozen=True)
class CallsByProblem:
    """Calls per problem, arm by arm: the distribution :class:`ArmFidelity` summarises, cell by cell.

    Parameters
    ----------
    columns : one per run × arm × dataset, in the runs' order, as (run, arm, dataset).
    rows : one per problem × repeat, problems in natural order (HumanEval/2 before HumanEval/10).
    """

    columns: tuple[tuple[str, str, str], ...]
    rows: tuple[ProblemCalls, ...]


def calls_by_problem(runs: Sequence[Run]) -> CallsByProblem:
    """Every cell's calls, cut replies and status, problem by problem, one column per arm of each run
    (never pooled across runs)."""
    columns: list[tuple[str, str, str]] = []
    found: dict[tuple[str, int], dict[int, CellCalls]] = {}
    for run in runs:
        cut = _cut_per_cell(run.calls)
        table = run.outcomes
        for (arm, dataset), cells in table.groupby(["arm", "dataset"], sort=False):
            column = len(columns)
            columns.append((run.name, str(arm), str(dataset)))
            counts = cells["calls"] if "calls" in cells else pd.Series(pd.NA, index=cells.index)
            for problem, repeat, status, calls in zip(cells["problem"], cells["repeat"], cells["status"], counts,
                                                      strict=True):
                key = (str(problem), int(repeat))
                found.setdefault(key, {})[column] = CellCalls(
                    None if pd.isna(calls) else int(calls), str(status),
                    None if cut is None else cut.get((str(arm), str(dataset), *key), 0))
    rows = tuple(ProblemCalls(problem, repeat, tuple(cells.get(c) for c in range(len(columns))))
                 for (problem, repeat), cells in sorted(found.items(), key=lambda item: _natural(*item[0])))
    return CallsByProblem(tuple(columns), rows)


def _natural(problem: str, repeat: int) -> tuple[tuple[tuple[int, int | str], ...], int]:
    parts = re.split(r"(\d+)", problem)
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in parts), repeat


def _cut_per_cell(calls: pd.DataFrame | None) -> dict[tuple[str, str, str, int], int] | None:
    if calls is None:
        return None
    counted = calls.assign(cut=_is_cut(calls)).groupby(["arm", "dataset", "problem", "repeat"], sort=False,
                                               as_index=False)["cut"].sum()
    return {(str(arm), str(dataset), str(problem), int(repeat)): int(number)
            for arm, dataset, problem, repeat, number in zip(counted["arm"], counted["dataset"], counted["problem"],
                                                             counted["repeat"], counted["cut"], strict=True)}
