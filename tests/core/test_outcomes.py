"""The outcome table (``sotacheck.core.outcomes``): ``normalise`` and its errors."""

from __future__ import annotations

import pandas as pd
import pytest

from sotacheck.core.rundir import OutcomeError, normalise


def _cells(arm: str, problems: list[str], passed: list[object], repeat: int = 0) -> list[dict[str, object]]:
    return [{"arm": arm, "dataset": "d", "problem": p, "repeat": repeat, "passed": v}
            for p, v in zip(problems, passed, strict=True)]


def test_labels_of_old_run_directories_are_structured_on_load() -> None:
    """A format-1 table (labels only) gets pipeline and typed param.* columns when read."""
    frame = pd.DataFrame({"arm": ["codesim[d=2,p=3]", "gate[base=direct,hold_budget=3]", "MapCoder-5-3"],
                          "dataset": "humaneval", "problem": "p1", "repeat": 0, "passed": [True, False, True]})
    table = normalise(frame, "old").set_index("arm")
    assert table.loc["codesim[d=2,p=3]", "pipeline"] == "codesim"
    assert table.loc["codesim[d=2,p=3]", "param.p"] == 3 and str(table["param.p"].dtype) == "Int64"
    assert table.loc["gate[base=direct,hold_budget=3]", "param.base"] == "direct"
    assert table.loc["MapCoder-5-3", "pipeline"] == "MapCoder-5-3"  # not a bracketed label: its own pipeline


def test_duplicated_cells_are_an_error_naming_the_cell() -> None:
    frame = pd.DataFrame(_cells("A", ["p1", "p1"], [True, False]))
    with pytest.raises(OutcomeError, match=r"here: duplicated cell arm='A' dataset='d' problem='p1' repeat=0"):
        normalise(frame, "here")


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"arm": ["A"], "dataset": ["d"], "problem": ["p"]}), r"missing column\(s\) repeat, passed"),
    (pd.DataFrame(_cells("A", ["p"], ["maybe"])), "cannot read 'maybe'"),
])
def test_bad_tables(frame, message) -> None:
    with pytest.raises((OutcomeError, ValueError), match=message):
        normalise(frame, "t")
