"""Runs combined once: one outcome table of every run given, its studies and each run's paper defaults, made
by :func:`combine` and read by every audit of those runs (the analysis, its decay fits, the leaderboards, the
claims, the report's inputs), so that no audit combines the same runs again.

A claim or a rank claim names its own runs: :meth:`CombinedRuns.parts` selects them from the combined table,
with their arms named as if those runs alone had been combined (:func:`combine_runs`' rule), without reading
the runs again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from sotacheck.audit.studies import RUN_COLUMN, Study, find_studies
from sotacheck.core.rundir import OutcomeError, Run

__all__ = ["CombinedRuns", "combine", "combine_runs", "paper_defaults"]


def _combine_frames(frames: Iterable[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """The rule of :func:`combine_runs` over (run name, its outcome table with ``arm`` as the run names it)."""
    seen: set[tuple[str, str]] = set()
    out: list[pd.DataFrame] = []
    for name, outcomes in frames:
        frame = outcomes.copy()
        frame["label"] = frame["arm"]  # the arm as its run names it, before any prefix
        frame[RUN_COLUMN] = len(out)
        keys = set(frame[["arm", "dataset"]].drop_duplicates().itertuples(index=False, name=None))
        if keys & seen:
            frame["arm"] = name + ":" + frame["arm"]
        seen |= set(frame[["arm", "dataset"]].drop_duplicates().itertuples(index=False, name=None))
        out.append(frame)
    if not out:
        raise OutcomeError("no runs given")
    return pd.concat(out, ignore_index=True)


def combine_runs(runs: Sequence[Run]) -> pd.DataFrame:
    """One outcome table from several runs. When a run uses an arm name an earlier run already used, *every*
    arm of that run is prefixed with the run's name, so a run's arms (a sweep's settings) stay together.
    Columns added: ``label`` (the arm as its run names it) and ``run_index`` (the run's position)."""
    return _combine_frames((run.name, run.outcomes) for run in runs)


def paper_defaults(runs: Sequence[Run]) -> dict[str, dict[str, Any]]:
    """Each pipeline's paper-default parameters as the runs recorded them (the first run naming a
    pipeline wins): the setting a sweep is compared against."""
    found: dict[str, dict[str, Any]] = {}
    for run in runs:
        for pipeline, params in run.manifest.pipeline_defaults.items():
            found.setdefault(pipeline, dict(params))
    return found


@dataclass(frozen=True, eq=False)
class CombinedRuns:
    """Runs combined once (:func:`combine`).

    Attributes
    ----------
    runs : tuple of Run
        The runs, in the order given.
    table : pandas.DataFrame
        :func:`combine_runs` of ``runs`` with a ``study`` column (the study id of each row). Read it, never
        change it: every audit of the runs shares it.
    studies : tuple of Study
        The studies of ``table`` (:func:`sotacheck.audit.studies.find_studies`), in order of first appearance.
    defaults : tuple of dict
        Per run, the paper-default parameters of each pipeline it recorded, else those of all the runs
        (:func:`paper_defaults`): what a sweep of that run is compared against.
    """

    runs: tuple[Run, ...]
    table: pd.DataFrame
    studies: tuple[Study, ...]
    defaults: tuple[dict[str, dict[str, Any]], ...]

    def parts(self, wanted: Iterable[Sequence[str]]) -> dict[tuple[str, ...], CombinedRuns | None]:
        """For each sequence of run names, those runs (each name: its runs in order) combined as if they alone
        had been given, selected from this table; ``None`` where none of the names is a run here. The parts
        keep this combination's studies (an arm's conditions do not depend on the other runs)."""
        out: dict[tuple[str, ...], CombinedRuns | None] = {}
        for names in map(tuple, wanted):
            if names in out:
                continue
            indexes = [i for name in names for i, run in enumerate(self.runs) if run.name == name]
            if not indexes:
                out[names] = None
                continue
            rows = [self.table[self.table[RUN_COLUMN] == i] for i in indexes]
            table = _combine_frames((self.runs[i].name, own.assign(arm=own["label"]))
                                    for i, own in zip(indexes, rows, strict=True))
            out[names] = CombinedRuns(tuple(self.runs[i] for i in indexes), table, self.studies,
                                      tuple(self.defaults[i] for i in indexes))
        return out


def combine(runs: Sequence[Run] | CombinedRuns) -> CombinedRuns:
    """``runs`` combined: their outcome table, its studies and each run's paper defaults (returned as they are
    when already combined).

    Raises
    ------
    OutcomeError
        No runs.
    """
    if isinstance(runs, CombinedRuns):
        return runs
    given = tuple(runs)
    table = combine_runs(given)
    defaults = tuple(paper_defaults([run]) or paper_defaults(given) for run in given)
    table["study"], studies = find_studies(list(given), table)
    return CombinedRuns(given, table, studies, defaults)
