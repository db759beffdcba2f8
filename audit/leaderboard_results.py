"""The result types of a leaderboard audit (:func:`sotacheck.audit.leaderboard.leaderboard`), and their JSON
contract (:meth:`Leaderboard.to_json`), which other tools may read:

.. code-block:: text

    {"dataset", "n_problems", "n_systems", "alpha", "family", "family_size", "confidence_level",
     "omnibus": {"test", "statistic", "df", "pvalue", "p"},
     "systems": [{"system", "position", "pass_rate", "ci": [lo, hi], "ci_method", "rank_interval": [lo, hi],
                  "in_top_group", "in_best_set", "better_than", "worse_than", "n_problems", "samples",
                  "missing_cells", "left_out", "meta", "conditions"}],
     "pairs": [{"a", "b", "a_only", "b_only", "a_higher", "b_higher", "difference", "pvalue",
                "pvalue_adjusted", "significant", "test", "rounding", "exact", "p", "p_adjusted"}],
     "top_group": [...], "best_set": [...], "best_set_method", "resolution": {...},
     "suspect_problems": [{"problem", "reason", "solved_by", "canonical_passed", "weak_test"}],
     "differences": [...], "notes": [...]}

``a_only``/``b_only`` are the discordant problem counts with one sample per problem (null with repeats);
``a_higher``/``b_higher`` count the problems on which one system's mean is higher (with any number of
samples); ``pvalue`` is the unadjusted two-sided p, ``pvalue_adjusted`` Holm over the family (``family``);
``p`` and ``p_adjusted`` are their old names (before #47), the same values, deprecated: they go in the next
release. ``rounding`` is how far the tested (lattice-rounded) mean difference can be from the real one, 0 with
equal samples per problem, and ``exact`` says it is 0; ``missing_cells`` counts a system's errored or dropped
cells on the shared problems; ``best_set`` is the confidence set for the best system (``best_set_method``). Pass rates,
differences and intervals are fractions in [0, 1] (the text and tables show points).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from sotacheck.core.deprecation import renamed_attribute, with_old_keys

# JSON keys renamed in #47 (old → new), written under both names for one release (docs/leaderboards.md)
OLD_PAIR_KEYS = {"p": "pvalue", "p_adjusted": "pvalue_adjusted"}
OLD_OMNIBUS_KEYS = {"p": "pvalue"}


@dataclass(frozen=True)
class SystemResult:
    """One system on the leaderboard.

    Attributes
    ----------
    system : its name (the arm; ``run:arm`` where two runs use the same arm name).
    position : 1-based place when sorted by pass rate (ties keep the order of the names).
    pass_rate, ci_low, ci_high : pass rate on the shared problems and its interval (``ci_method``).
    rank_interval : (lowest, highest) rank, simultaneous over all systems at the family's level.
    in_top_group : no system is significantly better than this one.
    better_than, worse_than : the number of systems it beats, and that beat it, significantly.
    n_problems : the shared problems it was scored on; ``samples``: samples per problem ("10", "1–10").
    in_best_set : in the confidence set for the best system (:attr:`Leaderboard.best_set`).
    missing_cells : cells of the shared problems short of its most samples on a problem (errors, dropped).
    left_out : its problems that not every system has (not used), by id.
    meta : per-system facts from the input (model, method, release date, open weights, harness, ...).
    conditions : model, endpoint, sampling and judge as its run records them.
    """

    system: str
    position: int
    pass_rate: float
    ci_low: float
    ci_high: float
    ci_method: str
    rank_interval: tuple[int, int]
    in_top_group: bool
    better_than: int
    worse_than: int
    n_problems: int
    samples: str
    in_best_set: bool = False
    missing_cells: int = 0
    left_out: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    conditions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PairResult:
    """One tested pair (``a`` has the higher or equal pass rate).

    ``a_only``/``b_only``: problems only one of them solved (one sample per problem; None with repeats);
    ``a_higher``/``b_higher``: problems where one's per-problem mean is higher; ``difference`` =
    pass rate of a − of b; ``pvalue`` two-sided, unadjusted; ``pvalue_adjusted`` Holm over the family;
    ``significant``: ``pvalue_adjusted`` < alpha; ``test``: the registered test that gave ``pvalue``
    (:data:`sotacheck.audit.paired.PAIRWISE_TESTS`); ``rounding``: the largest change that rounding the
    per-problem differences to the test's lattice made to the mean difference (unequal samples per problem;
    ``pvalue`` is then the exact p of the rounded statistic), 0 otherwise. ``p`` and ``p_adjusted``: the old
    names, deprecated."""

    a: str
    b: str
    a_only: int | None
    b_only: int | None
    a_higher: int
    b_higher: int
    difference: float
    pvalue: float
    pvalue_adjusted: float
    significant: bool
    test: str
    rounding: float = 0.0

    p = renamed_attribute("p", "pvalue")
    p_adjusted = renamed_attribute("p_adjusted", "pvalue_adjusted")

    @property
    def exact(self) -> bool:
        """The p is the exact p of the unrounded mean difference (no rounding was needed)."""
        return self.rounding == 0.0


@dataclass(frozen=True)
class OmnibusResult:
    """Any difference among the systems at all: Cochran's Q with one sample per problem, Friedman's test
    with the tie correction on the per-problem means with repeats (which equals Cochran's Q on 0/1 data).
    ``p``: the old name of ``pvalue``, deprecated."""

    test: str
    statistic: float
    df: int
    pvalue: float

    p = renamed_attribute("p", "pvalue")


@dataclass(frozen=True)
class PairResolution:
    """The smallest pass-rate difference one pair's paired test detects with 80 % power, at the observed
    spread of its per-problem differences: at level alpha (one planned comparison) and at alpha / family
    size (what Holm's first step asks over the whole family). ``inf`` when undetectable."""

    a: str
    b: str
    mdd: float
    mdd_familywise: float
    method: str


@dataclass(frozen=True)
class Resolution:
    """What the benchmark can resolve: the MDD for the median pair (by discordance) and the top pair."""

    median_pair: PairResolution | None
    top_pair: PairResolution | None
    power: float = 0.8


@dataclass(frozen=True)
class SuspectProblem:
    """A problem worth a look: solved by no system or by one only (a broken or over-strict test is the
    usual cause of the first), or whose tests accept a cheap wrong program (``weak_test``: which one, from
    ``sotacheck judge --suspect-tests``), with the canonical solution's verdict where it was judged."""

    problem: str
    reason: str
    solved_by: tuple[str, ...]
    canonical_passed: bool | None = None
    weak_test: str | None = None


@dataclass(frozen=True)
class Leaderboard:
    """A leaderboard audit: systems sorted by pass rate with simultaneous rank intervals, every pair tested
    within one named family, the top group, the confidence set for the best (``best_set``, by
    ``best_set_method``), the benchmark's resolution and its suspect problems.

    ``matrix`` holds each system's per-problem mean (systems in ``systems`` order × ``problems``, the
    problems sorted from easiest to hardest), for the heat map; ``family`` says which pairs were tested
    and how they were adjusted."""

    dataset: str
    n_problems: int
    alpha: float
    confidence_level: float
    family: str
    systems: tuple[SystemResult, ...]
    pairs: tuple[PairResult, ...]
    omnibus: OmnibusResult
    top_group: tuple[str, ...]
    best_set: tuple[str, ...]
    best_set_method: str
    resolution: Resolution
    suspect_problems: tuple[SuspectProblem, ...]
    differences: tuple[str, ...]
    notes: tuple[str, ...]
    problems: tuple[str, ...] = ()
    matrix: tuple[tuple[float, ...], ...] = ()

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    def system(self, name: str) -> SystemResult:
        """The row of system ``name`` (KeyError naming the systems when absent)."""
        for row in self.systems:
            if row.system == name:
                return row
        raise KeyError(f"no system {name!r} on this leaderboard; systems: {', '.join(s.system for s in self.systems)}")

    def to_json(self, include_matrix: bool = False) -> dict[str, Any]:
        """The JSON contract (module docstring); infinities become null, never NaN."""
        body: dict[str, Any] = {
            "dataset": self.dataset, "n_problems": self.n_problems, "n_systems": self.n_systems,
            "alpha": self.alpha, "family": self.family, "family_size": len(self.pairs),
            "confidence_level": self.confidence_level, "omnibus": with_old_keys(asdict(self.omnibus), OLD_OMNIBUS_KEYS),
            "systems": [{**{k: v for k, v in asdict(s).items() if k not in ("ci_low", "ci_high")},
                         "ci": [s.ci_low, s.ci_high], "rank_interval": list(s.rank_interval),
                         "left_out": list(s.left_out)} for s in self.systems],
            "pairs": [with_old_keys(asdict(p) | {"exact": p.exact}, OLD_PAIR_KEYS) for p in self.pairs],
            "top_group": list(self.top_group), "best_set": list(self.best_set),
            "best_set_method": self.best_set_method,
            "resolution": asdict(self.resolution),
            "suspect_problems": [asdict(s) | {"solved_by": list(s.solved_by)} for s in self.suspect_problems],
            "differences": list(self.differences), "notes": list(self.notes),
        }
        if include_matrix:
            body["problems"] = list(self.problems)
            body["matrix"] = [list(row) for row in self.matrix]
        return _finite(body)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
