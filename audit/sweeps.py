"""Sensitivity sweeps: one row per setting of a swept parameter (hold budget, p×d, k×t), each with its
pass rate and CI, cost per problem, and its paired test against the default setting, Holm-corrected
across the sweep (a sweep is multiple testing)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd
from sotacheck.audit.analysis import compare_arms, summarise_arm
from sotacheck.audit.paired import holm

from sotacheck.core.rundir import OutcomeError

_BRACKETED = re.compile(r"^(?P<name>[^\[]+)\[(?P<params>.*)\]$")
_MAPCODER = re.compile(r"^MapCoder-(?P<k>\d+)-(?P<t>\d+)$")


def arm_parameters(arm: str) -> dict[str, str]:
    """Parameters encoded in an arm name: ``codesim[d=2,p=3]`` → {d: 2, p: 3}; MapCoder's released
    ``MapCoder-5-3`` → {k: 5, t: 3}. An arm with none gives {}."""
    match = _BRACKETED.match(arm)
    if match:
        pairs = [p.split("=", 1) for p in match.group("params").split(",") if p]
        if any(len(p) != 2 for p in pairs):
            raise OutcomeError(f"arm {arm!r}: parameters must be name=value pairs")
        return {k.strip(): v.strip() for k, v in pairs}
    match = _MAPCODER.match(arm)
    if match:
        return {"k": match.group("k"), "t": match.group("t")}
    return {}


def arm_family(arm: str) -> str:
    """An arm's name without its parameters, keeping a run prefix: ``codesim[d=2,p=3]`` → ``codesim``,
    ``MapCoder-5-3`` → ``MapCoder``, ``runA:pycapsule[max_attempts=8]`` → ``runA:pycapsule``. The settings of
    one sweep share a family; the same pipeline swept in two runs (prefixed by ``combine_runs``) does not."""
    run, colon, name = arm.rpartition(":")
    bare = name.split("-", 1)[0] if _MAPCODER.match(name) else name.split("[", 1)[0]
    return f"{run}{colon}{bare}"


@dataclass(frozen=True)
class SweepRow:
    arm: str
    setting: dict[str, str]
    is_default: bool
    n: int
    pass_rate: float
    ci_low: float
    ci_high: float
    calls_per_problem: float | None
    tokens_per_problem: float | None
    diff: float | None
    b_count: int | None
    c_count: int | None
    pvalue: float | None
    pvalue_holm: float | None


@dataclass(frozen=True)
class SweepResult:
    dataset: str
    parameters: tuple[str, ...]
    default_arm: str
    rows: tuple[SweepRow, ...]

    def frame(self) -> pd.DataFrame:
        records = [{**r.setting, **{k: v for k, v in r.__dict__.items() if k != "setting"}} for r in self.rows]
        return pd.DataFrame(records)


def sweep_table(table: pd.DataFrame, dataset: str, default_arm: str, arms: list[str] | None = None,
                confidence_level: float = 0.95, n_resamples: int = 10_000, seed: int = 0) -> SweepResult:
    """The sensitivity table of ``arms`` (default: every arm with parameters on ``dataset``)."""
    present = list(dict.fromkeys(table.loc[table["dataset"] == dataset, "arm"]))
    if default_arm not in present:
        raise OutcomeError(f"default arm {default_arm!r} is not on dataset {dataset!r}; arms: {present}")
    arms = arms or [a for a in present if arm_parameters(a)]
    if default_arm not in arms:
        arms = [default_arm, *arms]
    missing = [a for a in arms if a not in present]
    if missing:
        raise OutcomeError(f"sweep arm(s) {missing} not on dataset {dataset!r}")
    settings = {a: arm_parameters(a) for a in arms}
    every = tuple(dict.fromkeys(k for s in settings.values() for k in s))
    # The swept parameters are those that vary; one held fixed (the gate's base) is not an axis.
    names = tuple(n for n in every if len({s.get(n) for s in settings.values()}) > 1) or every
    others = [a for a in arms if a != default_arm]
    comparisons = {a: compare_arms(table, a, default_arm, dataset, confidence_level, n_resamples, seed)
                   for a in others}
    adjusted = dict(zip(others, holm([comparisons[a].pvalue for a in others]), strict=True)) if others else {}
    rows = []
    for arm in sorted(arms, key=lambda a: tuple(setting_sort_key(settings[a].get(n, "")) for n in names)):
        summary = summarise_arm(table, arm, dataset, confidence_level)
        tokens = None
        if summary.prompt_tokens_per_problem is not None and summary.completion_tokens_per_problem is not None:
            tokens = summary.prompt_tokens_per_problem + summary.completion_tokens_per_problem
        comparison = comparisons.get(arm)
        rows.append(SweepRow(
            arm, settings[arm], arm == default_arm, summary.n, summary.pass_rate, summary.ci_low,
            summary.ci_high, summary.calls_per_problem, tokens,
            comparison.diff if comparison else None, comparison.b_count if comparison else None,
            comparison.c_count if comparison else None, comparison.pvalue if comparison else None,
            float(adjusted[arm]) if comparison else None))
    return SweepResult(dataset, names, default_arm, tuple(rows))


def setting_sort_key(value: object) -> tuple[int, float | str]:
    """Numbers in numeric order, then other values (e.g. ``base=direct``) alphabetically."""
    try:
        return (0, float(str(value)))
    except ValueError:
        return (1, str(value))
