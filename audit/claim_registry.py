"""The claims registry's schema: published SOTA claims as validated YAML (one file per paper).

A claim names its paper and section, the benchmark and its n, each side's number as published (runs,
spread, SD/SE when known), the baseline's provenance, and the check that applies (see
:mod:`sotacheck.audit.claims` for the checks and verdicts).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sotacheck.core.errors import InputError

CheckName = Literal["margin-vs-single", "two-proportions", "paired-reconstruction", "minimum-detectable-difference",
                    "comparator-kind", "identical-numbers", "benchmark-size", "reproduction", "average-margin",
                    "cost-bound", "decay-fit", "no-comparator", "rerun"]


class ClaimsError(InputError, ValueError):
    """A registry file that cannot be used; the message names the file, the claim id and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Side(_Strict):
    """One side of a comparison as published: a pass rate in percent unless ``unit`` says otherwise."""

    name: str
    value: float | None = None
    runs: int | None = Field(default=None, ge=1)
    spread: float | None = Field(default=None, ge=0)
    spread_kind: Literal["sd", "se", "unknown"] | None = None
    unit: Literal["percent", "calls", "tokens"] = "percent"
    provenance: Literal["own-run", "copied", "not-reproduced", "unknown"] | None = None
    kind: Literal["method", "base-model"] = "method"
    note: str | None = None

    @model_validator(mode="after")
    def _percent_range(self) -> Side:
        if self.unit == "percent" and self.value is not None and not 0 <= self.value <= 100:
            raise ValueError(f"value {self.value} is a percentage outside [0, 100]")
        if self.value is not None and self.value < 0:
            raise ValueError(f"value {self.value} is negative")
        return self


class Range(_Strict):
    low: float = Field(ge=0)
    high: float = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")
        return self


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
    id: str = Field(min_length=1)
    statement: str
    source: str
    benchmark: str
    n: int | None = Field(default=None, gt=0)
    method: Side
    baseline: Side | None = None
    check: CheckName
    margin: float | None = None
    regressions: Range | None = None
    differences: Range | None = None
    same_as: Reference | None = None
    reference: Reference | None = None
    reproduction: Side | None = None
    dataset: str | None = None
    shipped_n: int | None = Field(default=None, gt=0)
    shipped_source: str | None = None
    rerun: RerunArms | None = None
    note: str | None = None

    @field_validator("margin")
    @classmethod
    def _margin_range(cls, value: float | None) -> float | None:
        if value is not None and not -100 <= value <= 100:
            raise ValueError(f"margin {value} is a percentage outside [-100, 100]")
        return value

    @model_validator(mode="after")
    def _check_needs(self) -> Claim:
        needs: dict[str, tuple[str, ...]] = {
            "margin-vs-single": ("n", "baseline"), "two-proportions": ("n", "baseline"),
            "paired-reconstruction": ("n", "margin", "regressions"), "minimum-detectable-difference": ("n", "differences"),
            "comparator-kind": ("n", "baseline"), "identical-numbers": ("same_as",), "reproduction": ("n", "reproduction"),
            "rerun": ("rerun",),
        }
        missing = [f for f in needs.get(self.check, ()) if getattr(self, f) is None]
        if missing:
            raise ValueError(f"check {self.check!r} needs field(s) {', '.join(missing)}")
        if self.check in ("margin-vs-single", "two-proportions", "comparator-kind"):
            for side_name in ("method", "baseline"):
                side = getattr(self, side_name)
                if side is None or side.value is None:
                    raise ValueError(f"check {self.check!r} needs `{side_name}.value`")
        return self


class Paper(_Strict):
    id: str
    title: str
    arxiv: str
    seed: str


class Registry(_Strict):
    paper: Paper
    claims: list[Claim]

    @model_validator(mode="after")
    def _unique_ids(self) -> Registry:
        ids = [c.id for c in self.claims]
        duplicated = sorted({i for i in ids if ids.count(i) > 1})
        if duplicated:
            raise ValueError(f"duplicated claim id(s) {duplicated}")
        return self


def load_registry(path: str | Path) -> Registry:
    """Read and validate one registry file; errors name the file, the claim id and the field."""
    file = Path(path)
    if file.is_dir():
        raise ClaimsError(f"{file}: a directory, where a claims file is expected")
    if not file.is_file():
        raise ClaimsError(f"{file}: claims file does not exist")
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ClaimsError(f"{file}: not valid YAML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ClaimsError(f"{file}: not UTF-8 text (byte {exc.start}); a claims file is YAML") from None
    try:
        return Registry.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        location = list(error["loc"])
        claim_id = None
        if len(location) >= 2 and location[0] == "claims" and isinstance(location[1], int):
            claims = (raw or {}).get("claims") or []
            if location[1] < len(claims) and isinstance(claims[location[1]], dict):
                claim_id = claims[location[1]].get("id")
            location = location[2:]
        where = f"claim {claim_id!r}" if claim_id else "registry"
        field_name = ".".join(str(p) for p in location) or "(claim)"
        raise ClaimsError(f"{file}: {where}: field `{field_name}`: {error['msg']}") from None


def bundled_registries() -> list[Path]:
    """The claim registries that ship with sotacheck (``sotacheck.data/claims/*.yaml``), by file name."""
    folder = Path(str(resources.files("sotacheck.data") / "claims"))
    return sorted(folder.glob("*.yaml"))
