"""Sweeps (``sotacheck.audit.sweeps``): an arm's family and its settings."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sotacheck.core.rundir import normalise


def test_arm_family_keeps_a_sweeps_settings_together() -> None:
    """Families and settings come from the pipeline and param.* columns, never from the label; a run
    prefixed by combine_runs is its own family."""
    from sotacheck.audit.analysis import combine_runs
    from sotacheck.audit.importers.mapcoder import mapcoder_arm_columns
    from sotacheck.audit.sweeps import arm_family, arm_setting
    from sotacheck.core.arms import arm_columns
    from sotacheck.core.rundir import Run, manifest_of

    def run(name: str, identities: list[dict[str, object]]) -> Run:
        rows = [{**identity, "dataset": "humaneval", "problem": "p1", "repeat": 0, "passed": True}
                for identity in identities]
        return Run(Path(name), normalise(pd.DataFrame(rows), name), manifest_of({}, name=name))

    first = run("sweep-a", [arm_columns("codesim", {"d": 2, "p": 3}), mapcoder_arm_columns("MapCoder-5-3"),
                            arm_columns("pycapsule", {"max_attempts": 8}), arm_columns("direct", {})])
    second = run("sweep-b", [arm_columns("pycapsule", {"max_attempts": 8}), mapcoder_arm_columns("MapCoder-5-3")])
    table = combine_runs([first, second])
    assert arm_family(table, "codesim[d=2,p=3]") == "codesim"
    assert arm_setting(table, "codesim[d=2,p=3]") == {"d": 2, "p": 3}
    assert arm_family(table, "MapCoder-5-3") == "MapCoder"
    assert arm_setting(table, "MapCoder-5-3") == {"k": 5, "t": 3}
    assert arm_family(table, "sweep-b:pycapsule[max_attempts=8]") == "sweep-b:pycapsule"
    assert arm_family(table, "sweep-b:MapCoder-5-3") == "sweep-b:MapCoder"
    assert arm_family(table, "direct") == "direct" and arm_setting(table, "direct") == {}
