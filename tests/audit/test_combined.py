"""Runs combined once (``sotacheck.audit.combined``): the parts a claim reads are what combining those runs alone
gives, and every audit given the combination reads it instead of combining again (issue #47)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sotacheck.audit.combined import CombinedRuns, combine, combine_runs
from sotacheck.core.rundir import Run, load_run, manifest_of, normalise

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"


def _run(name: str, arms: list[str], problems: tuple[str, ...] = ("p1", "p2", "p3")) -> Run:
    rows = [{"arm": arm, "dataset": "humaneval", "problem": problem, "repeat": 0, "passed": (i + j) % 2 == 0}
            for i, arm in enumerate(arms) for j, problem in enumerate(problems)]
    return Run(Path(name), normalise(pd.DataFrame(rows), name), manifest_of({}, name=name))


@pytest.mark.parametrize("names", [("b",), ("a", "b"), ("b", "a"), ("c", "b"), ("a", "a"), ("b", "x")])
def test_a_part_is_those_runs_combined_alone(names: tuple[str, ...]) -> None:
    """Arms prefixed as combine_runs prefixes them among the runs named, not among all the runs given."""
    runs = [_run("a", ["direct", "cot"]), _run("b", ["direct", "mine"]), _run("c", ["mine"])]
    part = combine(runs).parts([names])[names]
    named = [run for name in names for run in runs if run.name == name]
    assert part is not None and part.runs == tuple(named)
    pd.testing.assert_frame_equal(part.table.drop(columns="study"), combine_runs(named))


def test_no_run_named_is_no_part() -> None:
    assert combine([_run("a", ["direct"])]).parts([("x",), ()]) == {("x",): None, (): None}


def test_the_combination_is_read_as_it_is() -> None:
    runs = [load_run(RECORDINGS / "methods-qwen05b")]
    combined = combine(runs)
    assert combine(combined) is combined and isinstance(combined, CombinedRuns)
    assert list(combined.table.columns[-3:]) == ["label", "run_index", "study"]
    assert [s.id for s in combined.studies] == sorted(set(combined.table["study"]))
