"""Run directories (``sotacheck.core.rundir``): writing one."""

from __future__ import annotations

import pandas as pd
import pytest

from sotacheck.core.rundir import OutcomeError, write_run


def _cells(arm: str, problems: list[str], passed: list[object], repeat: int = 0) -> list[dict[str, object]]:
    return [{"arm": arm, "dataset": "d", "problem": p, "repeat": repeat, "passed": v}
            for p, v in zip(problems, passed, strict=True)]


def test_write_run_refuses_to_overwrite_and_leaves_nothing_half_written(tmp_path) -> None:
    frame = pd.DataFrame(_cells("A", ["p1"], [True]))
    write_run(tmp_path / "r", frame, {})
    with pytest.raises(OutcomeError, match="already exists"):
        write_run(tmp_path / "r", frame, {})
    with pytest.raises(OutcomeError):
        write_run(tmp_path / "bad", pd.DataFrame({"arm": ["A"]}), {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]
