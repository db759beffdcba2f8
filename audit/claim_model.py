"""What a claims file records: what was published, never which test to run (the fields: ``docs/claims.md``).

A claim gives each side's number as published (n, runs, spread and its kind), the baseline's provenance and
kind, per-problem data where released (a run's arms or the discordant counts), and the benchmark;
:mod:`sotacheck.audit.claims` derives the checks that apply from these fields. ``check`` is an optional
request, shown and reported as such; it never changes a verdict.

A file's claims form a union on ``kind`` (:data:`ClaimEntry`), so that a claim of another shape (a rank claim
checked against a leaderboard) is one more variant.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationInfo, field_validator, model_validator

from sotacheck.core.deprecation import renamed_names

CheckName = Literal["margin-vs-single", "two-proportions", "paired-reconstruction", "paired-counts",
                    "minimum-detectable-difference", "comparator-kind", "identical-numbers", "benchmark-size",
                    "reproduction", "average-margin", "cost-bound", "decay-fit", "no-comparator", "setting", "rerun"]
PublishedKind = Literal["margin", "value", "benchmark-size", "fit", "setting"]
Assumption = Literal["nonnegative-correlation"]
"""A named assumption that narrows the range of pairings (docs/claims.md): ``nonnegative-correlation``, the
two systems' per-problem results are not negatively correlated (φ ≥ 0)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # NaN is an error, never a number


class Side(_Strict):
    """One side of a comparison as published: a pass rate in percent unless ``unit`` says otherwise."""

    name: str = Field(description="the system, as the paper names it")
    unit: Literal["percent", "calls", "tokens"] = "percent"
    value: float | None = Field(default=None, description="the published number (percent unless `unit` says)")
    runs: int | None = Field(default=None, ge=1, description="how many runs the number averages")
    spread: float | None = Field(default=None, ge=0, validate_default=True,
                                 description="the published ± over the runs (needs runs of at least 2)")
    spread_kind: Literal["sd", "se", "unknown"] | None = Field(
        default=None, description="whether `spread` is a standard deviation or a standard error (unknown: not said)")
    provenance: Literal["own-run", "copied", "not-reproduced", "unknown"] | None = Field(
        default=None, description="for a baseline: run by the authors, copied from another paper, never reproduced")
    kind: Literal["method", "base-model"] = Field(
        default="method", description="another method, or the base model without any method")
    note: str | None = None

    @field_validator("value")
    @classmethod
    def _value_range(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is not None and value < 0:
            raise ValueError(f"value {value:g} is negative")
        if value is not None and info.data.get("unit", "percent") == "percent" and value > 100:
            raise ValueError(f"value {value:g} is a percentage outside [0, 100]")
        return value

    @field_validator("spread")
    @classmethod
    def _spread_needs_runs(cls, spread: float | None, info: ValidationInfo) -> float | None:
        runs = info.data.get("runs") or 1
        if spread is not None and runs < 2:
            raise ValueError(f"a spread (±{spread:g}) needs `runs` of at least 2, got {info.data.get('runs')}")
        if spread is None and runs >= 2:
            raise ValueError(f"{runs} runs given without a spread: give the published ± (and spread_kind), or "
                             "leave runs out")
        return spread

    @field_validator("spread_kind")
    @classmethod
    def _kind_needs_spread(cls, kind: str | None, info: ValidationInfo) -> str | None:
        if kind is not None and info.data.get("spread") is None:
            raise ValueError(f"spread_kind {kind!r} given without a `spread`")
        return kind


class Range(_Strict):
    low: float = Field(ge=0)
    high: float = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")
        return self


class Discordant(_Strict):
    """Per-problem counts as published: problems only the method solved (b), only the baseline solved (c)."""

    b: int = Field(ge=0, description="problems the method solved and the baseline did not")
    c: int = Field(ge=0, description="problems the baseline solved and the method did not")


class Reference(_Strict):
    name: str
    value: float = Field(ge=0, le=100)
    source: str


class RerunArms(_Strict):
    run: str = Field(min_length=1, description="name of the run directory (runs/NAME) the arms come from")
    dataset: str
    method_arm: str
    baseline_arm: str


class Claim(_Strict):
    """A published claim: a margin of a method over a baseline, a single value, a benchmark size, a fit, a setting."""

    kind: PublishedKind = Field(default="margin", description="what the claim asserts")
    id: str = Field(min_length=1)
    statement: str = Field(description="the claim in the paper's words")
    source: str = Field(default="", description="where in the paper: section, table")
    benchmark: str
    n: int | None = Field(default=None, gt=0, description="problems in the benchmark as evaluated")
    method: Side
    baseline: Side | None = None
    check: CheckName | None = Field(default=None, description="optional: a check to show in any case; never "
                                                              "changes the verdict")
    margin: float | None = Field(default=None, description="the published margin in points, when the two "
                                                           "numbers are not given")
    regressions: Range | None = Field(default=None, description="published range of problems the baseline "
                                                                "solved and the method lost (c)")
    discordant: Discordant | None = None
    differences: Range | None = Field(default=None, description="published differences (points) reported "
                                                                "without tests, e.g. between ablations")
    same_as: Reference | None = None
    reference: Reference | None = None
    reproduction: Side | None = None
    dataset: str | None = Field(default=None, description="a benchmark sotacheck ships, to count its problems")
    shipped_n: int | None = Field(default=None, gt=0)
    shipped_source: str | None = None
    rerun: RerunArms | None = None
    assumptions: list[Assumption] = Field(default_factory=list, description="named assumptions that narrow the "
                                          "pairings the totals allow (off unless listed; named in the verdict)")
    note: str | None = None

    @field_validator("margin")
    @classmethod
    def _margin_range(cls, value: float | None) -> float | None:
        if value is not None and not -100 <= value <= 100:
            raise ValueError(f"margin {value} is a percentage outside [-100, 100]")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Claim:
        if self.discordant is not None and self.n is not None and self.discordant.b + self.discordant.c > self.n:
            raise ValueError(f"discordant b + c = {self.discordant.b + self.discordant.c} exceeds n = {self.n}")
        if self.discordant is not None and self.n is not None and self.baseline is not None:
            sides = (self.method, self.baseline)
            if all(s.value is not None and s.unit == "percent" and (s.runs or 1) == 1 for s in sides):
                net = round(self.method.value / 100 * self.n) - round(self.baseline.value / 100 * self.n)  # type: ignore[operator]
                if abs(self.discordant.b - self.discordant.c - net) > 1:
                    raise ValueError(f"discordant b − c = {self.discordant.b - self.discordant.c}, but the two values "
                                     f"differ by {net} problems of {self.n}")
        if self.kind == "benchmark-size" and self.dataset is None and self.shipped_n is None:
            raise ValueError("a benchmark-size claim needs `dataset` or `shipped_n` to count against")
        return self


class LeaderboardRef(_Strict):
    """The leaderboard a rank claim is checked against: runs whose arms are the systems."""

    runs: list[str] = Field(min_length=1, description="names of the run directories (runs/NAME) whose arms form "
                                                      "the leaderboard")
    dataset: str | None = Field(default=None, description="the benchmark on the board, when the runs hold several")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="the level: of each one-sided test "
                                                               "(intersection-union), or family-wise (leaderboard)")


class RankClaim(_Strict):
    """A claim about a rank: "X is the best on B" (or "X is better than each of these").

    ``test: intersection-union`` (the default, for a claim made in advance): one-sided paired tests of X
    against each competitor, each at alpha, supported only when every one rejects (Berger 1982).
    ``test: leaderboard``: supported only when X is alone in the leaderboard's top group (Holm over all pairs;
    for a claim found by looking at the board). docs/claims.md, "Rank claims"."""

    kind: Literal["rank"]
    id: str = Field(min_length=1)
    statement: str = Field(description="the claim in the paper's words")
    source: str = Field(default="", description="where in the paper: section, table")
    benchmark: str
    system: str = Field(min_length=1, description="the system claimed to be the best, as named on the leaderboard")
    leaderboard: LeaderboardRef
    better_than: list[str] | None = Field(
        default=None, min_length=1, description="the competitors, as named on the leaderboard (default: every "
                                                "other system on it)")
    test: Literal["intersection-union", "leaderboard"] = Field(
        default="intersection-union", description="intersection-union: one-sided paired tests against each "
        "competitor, each at alpha, all must reject (a claim made in advance); leaderboard: alone in the "
        "top group under Holm over all pairs (exploration)")
    check: Literal["rank"] | None = Field(default=None, description="optional; a rank claim has one check")
    note: str | None = None


def _variant(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return "rank" if kind == "rank" else "published"


ClaimEntry = Annotated[Annotated[Claim, Tag("published")] | Annotated[RankClaim, Tag("rank")],
                      Discriminator(_variant)]
"""One claim of a file; new claim shapes join as further tagged variants of this union."""


class Paper(_Strict):
    id: str
    title: str | None = None
    arxiv: str | None = None
    seed: str | None = Field(default=None, description="sotacheck's own registry: the review the numbers come from")


class ClaimRegistry(_Strict):
    """A claims file: one paper's claims (``Registry`` until #47: the plug-in registries are
    :class:`sotacheck.core.registry.Registry`)."""

    paper: Paper
    claims: list[ClaimEntry]

    @model_validator(mode="after")
    def _unique_ids(self) -> ClaimRegistry:
        ids = [c.id for c in self.claims]
        duplicated = sorted({i for i in ids if ids.count(i) > 1})
        if duplicated:
            raise ValueError(f"duplicated claim id(s) {duplicated}")
        return self


__getattr__ = renamed_names(__name__, {"Registry": "ClaimRegistry"}, globals())  # the old name, for one release
