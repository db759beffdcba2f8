"""What a leaderboard lists about each system besides its results: the conditions its run records (model,
endpoint, sampling, judge) and the per-system facts an imported table gave (model, method, release date,
open weights, harness, ...). On a leaderboard these differ by design; they are listed, never a reason to
refuse a comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sotacheck.audit.combined import CombinedRuns
from sotacheck.audit.studies import RUN_COLUMN
from sotacheck.core.rundir import Run


@dataclass(frozen=True)
class SystemFacts:
    """Per system: ``conditions`` (model, endpoint, sampling, judge as recorded) and ``meta`` (the input's
    per-system columns)."""

    conditions: dict[str, dict[str, str]] = field(default_factory=dict)
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)


def _declared(run: Run) -> dict[str, Any]:
    systems = getattr(run.manifest, "systems", None)
    if systems is None:
        systems = (run.manifest.model_extra or {}).get("systems")
    return systems if isinstance(systems, dict) else {}


def system_conditions(combined: CombinedRuns, dataset: str) -> SystemFacts:
    """The facts of every arm of ``combined`` on ``dataset``: its conditions are its study's (the arms of a study
    share them, :mod:`sotacheck.audit.studies`), its declared facts its run's."""
    facts = SystemFacts()
    table, studies = combined.table, {study.id: study for study in combined.studies}
    rows = table.loc[table["dataset"] == dataset, ["arm", "label", RUN_COLUMN, "study"]].drop_duplicates("arm")
    for arm, label, index, study_id in rows.itertuples(index=False, name=None):
        study = studies[str(study_id)]
        facts.conditions[str(arm)] = {"model": study.model, "endpoint": study.endpoint, "sampling": study.sampling,
                                      "judge": study.judge}
        declared = _declared(combined.runs[int(index)]).get(str(label))
        if isinstance(declared, dict) and declared:
            facts.meta[str(arm)] = dict(declared)
    return facts


def system_differences(facts: SystemFacts) -> list[str]:
    """One line per condition or fact that is not the same for every system, e.g.
    ``sampling: 3 settings (temperature=0.0, ...; ...)``."""
    out = []
    for source in (facts.conditions, facts.meta):
        keys = sorted({key for values in source.values() for key in values})
        for key in keys:
            seen = {str(values.get(key, "not given")) for values in source.values()}
            if len(seen) > 1:
                shown = "; ".join(sorted(seen)[:3]) + ("; ..." if len(seen) > 3 else "")
                out.append(f"{key}: {len(seen)} values ({shown})")
    return out
