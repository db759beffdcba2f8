"""Sensitivity sweeps: one row per setting of a swept parameter (hold budget, p×d, k×t), each with its
pass rate and CI, cost per problem, and its paired test against the default setting, Holm-corrected
across the sweep (a sweep is multiple testing)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from sotacheck.audit.analysis import (
    Comparison,
    NotCompared,
    UnscoredArm,
    compare_if_possible,
    summarise_arm,
    unscored_arm,
)
from sotacheck.audit.paired import holm
from sotacheck.core.arms import parameters_of
from sotacheck.core.deprecation import renamed_attribute
from sotacheck.core.rundir import OutcomeError


def arm_setting(table: pd.DataFrame, arm: str) -> dict[str, Any]:
    """An arm's parameters, read from its ``param.*`` columns: ``codesim[d=2,p=3]`` → {d: 2, p: 3}
    (typed as stored); an arm with none gives {}."""
    rows = table.loc[table["arm"] == arm]
    if rows.empty:
        raise OutcomeError(f"no arm {arm!r} in the table")
    return parameters_of({str(k): v for k, v in rows.iloc[0].items()})


def arm_family(table: pd.DataFrame, arm: str) -> str:
    """The sweep an arm belongs to: its pipeline, with the run's name when ``combine_runs`` prefixed the run
    (the same pipeline swept in two runs is two sweeps)."""
    rows = table.loc[table["arm"] == arm]
    if rows.empty:
        raise OutcomeError(f"no arm {arm!r} in the table")
    row = rows.iloc[0]
    prefix = arm[: -len(row["label"])] if "label" in row and arm != row["label"] else ""
    return f"{prefix}{row['pipeline']}"


def decay_arms(table: pd.DataFrame, dataset: str) -> list[tuple[int, str]]:
    """The arms to fit a debug-decay curve to, with their ``max_attempts``: for a ``max_attempts`` sweep only
    its largest setting (each smaller one is a prefix of it), per family and setting of the other parameters."""
    cells = table[(table["dataset"] == dataset) & table["first_pass_attempt"].notna()]
    largest: dict[tuple[str, tuple[tuple[str, Any], ...]], tuple[int, str]] = {}
    for arm in dict.fromkeys(cells["arm"]):
        params = arm_setting(table, arm)
        if "max_attempts" not in params:
            continue
        others = tuple(sorted((k, v) for k, v in params.items() if k != "max_attempts"))
        key = (arm_family(table, arm), others)
        largest[key] = max(largest.get(key, (-1, arm)), (int(params["max_attempts"]), arm))
    return list(largest.values())


def find_sweeps(table: pd.DataFrame, dataset: str, defaults: Mapping[str, Mapping[str, Any]],
                confidence_level: float = 0.95, n_resamples: int = 10_000, seed: int = 0) -> list[SweepResult]:
    """Every sweep on ``dataset``: the arms of one family (see :func:`arm_family`) with parameters, when
    there are at least two. Each is compared with the setting equal to its pipeline's paper defaults
    (``defaults``: pipeline → parameters, as the runs recorded them), else with its first setting."""
    arms = list(dict.fromkeys(table.loc[table["dataset"] == dataset, "arm"]))
    families: dict[str, list[str]] = {}
    for arm in arms:
        if arm_setting(table, arm):
            families.setdefault(arm_family(table, arm), []).append(arm)
    found = []
    for family, members in families.items():
        if len(members) < 2:
            continue
        paper = defaults.get(family.rpartition(":")[2], {})
        default = next((a for a in members if paper and all(arm_setting(table, a).get(k) == v
                                                            for k, v in paper.items())), members[0])
        found.append(sweep_table(table, dataset, default, members, confidence_level, n_resamples, seed))
    return found


@dataclass(frozen=True)
class SweepRow:
    arm: str
    setting: dict[str, Any]
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
    pvalue_adjusted: float | None  # Holm over the sweep's comparisons with its default setting

    pvalue_holm = renamed_attribute("pvalue_holm", "pvalue_adjusted")


@dataclass(frozen=True)
class SweepResult:
    dataset: str
    parameters: tuple[str, ...]
    default_arm: str
    rows: tuple[SweepRow, ...]
    unscored: tuple[UnscoredArm, ...] = ()  # settings without a complete result: no row
    not_compared: tuple[NotCompared, ...] = ()  # settings that could not be compared with the reference


def sweep_table(table: pd.DataFrame, dataset: str, default_arm: str, arms: list[str] | None = None,
                confidence_level: float = 0.95, n_resamples: int = 10_000, seed: int = 0) -> SweepResult:
    """The sensitivity table of ``arms`` (default: every arm with parameters on ``dataset``)."""
    present = list(dict.fromkeys(table.loc[table["dataset"] == dataset, "arm"]))
    if default_arm not in present:
        raise OutcomeError(f"default arm {default_arm!r} is not on dataset {dataset!r}; arms: {present}")
    arms = arms or [a for a in present if arm_setting(table, a)]
    if default_arm not in arms:
        arms = [default_arm, *arms]
    missing = [a for a in arms if a not in present]
    if missing:
        raise OutcomeError(f"sweep arm(s) {missing} not on dataset {dataset!r}")
    settings = {a: arm_setting(table, a) for a in arms}
    every = tuple(dict.fromkeys(k for s in settings.values() for k in s))
    # The swept parameters are those that vary; one held fixed (the gate's base) is not an axis.
    names = tuple(n for n in every if len({s.get(n) for s in settings.values()}) > 1) or every
    lacking = {a: u for a in arms if (u := unscored_arm(table, a, dataset))}
    made = {a: compare_if_possible(table, a, default_arm, dataset, confidence_level, n_resamples, seed)
            for a in arms if a != default_arm}
    comparisons = {a: c for a, c in made.items() if isinstance(c, Comparison)}
    others = list(comparisons)
    adjusted = dict(zip(others, holm([comparisons[a].pvalue for a in others]), strict=True)) if others else {}
    rows = []
    for arm in sorted(arms, key=lambda a: tuple(setting_sort_key(settings[a].get(n, "")) for n in names)):
        if arm in lacking:
            continue
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
    return SweepResult(dataset, names, default_arm, tuple(rows), tuple(lacking.values()),
                       tuple(c for c in made.values() if isinstance(c, NotCompared)))


def setting_sort_key(value: object) -> tuple[int, float | str]:
    """Numbers in numeric order, then other values (e.g. ``base=direct``) alphabetically."""
    try:
        return (0, float(str(value)))
    except ValueError:
        return (1, str(value))
