"""One margin claim from bare numbers ("is 96.5 vs 96.3 on 164 problems significant?"), through the same checks
and rule as a claims file (:mod:`sotacheck.audit.claims`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ValidationError

from sotacheck.audit.claim_model import Claim
from sotacheck.audit.claim_registry import ClaimsError
from sotacheck.audit.claims import ClaimVerdict, evaluate

COMPARE_ID = "compare"
# Where a field of the claim came from on the command line / in the call.
_ARGUMENTS = {"method.value": "A", "baseline.value": "B", "n": "--n", "method.runs": "--runs",
              "method.spread": "--sd/--se/--spread", "method.spread_kind": "--sd/--se/--spread",
              "discordant": "--discordant", "discordant.b": "--discordant", "discordant.c": "--discordant",
              "": "--discordant", "assumptions": "--assume", "assumptions.0": "--assume"}
Unit = Literal["percent", "fraction"]


def as_percentages(a: float, b: float, spreads: tuple[float | None, ...], unit: Unit | None
                   ) -> tuple[float, float, tuple[float | None, ...]]:
    """The two rates (and the spreads, in the same unit) in percent. ``unit`` None: percent, but two rates
    both at most 1 (not both 0) look like fractions and are refused with the fix named, never read silently
    as 0.951 %."""
    if unit not in (None, "percent", "fraction"):
        raise ClaimsError(f"claim {COMPARE_ID!r}: field `--unit`: expected 'percent' or 'fraction', got {unit!r}")
    if unit is None and all(math.isfinite(v) and 0 <= v <= 1 for v in (a, b)) and max(a, b) > 0:
        raise ClaimsError(f"claim {COMPARE_ID!r}: field `A`, `B`: {a:g} and {b:g} are both at most 1, so they look like "
                          f"fractions, but rates are read in percent: give {100 * a:g} {100 * b:g}, or pass --unit "
                          "fraction (unit='fraction'), or --unit percent if they are percentages below 1")
    if unit != "fraction":
        return a, b, spreads
    return 100 * a, 100 * b, tuple(None if v is None else 100 * v for v in spreads)


def compare_claim(a: float, b: float, n: int, runs: int | None = None, sd: float | None = None,
                  se: float | None = None, spread: float | None = None,
                  discordant: tuple[int, int] | None = None, assumptions: Sequence[str] = ()) -> dict[str, Any]:
    """The claim "A beats B on n problems" as a claims-file entry (validated by :func:`compare`)."""
    given = [kind for kind, value in (("sd", sd), ("se", se), ("unknown", spread)) if value is not None]
    if len(given) > 1:
        raise ClaimsError(f"claim {COMPARE_ID!r}: field `--sd/--se/--spread` (method.spread_kind): give one of --sd, --se or "
                          f"--spread, got {', '.join(given)}")
    method: dict[str, Any] = {"name": "A", "value": a, "runs": runs}
    if given:
        method |= {"spread": sd if sd is not None else se if se is not None else spread, "spread_kind": given[0]}
    claim: dict[str, Any] = {"id": COMPARE_ID, "statement": f"{a:g} beats {b:g} on {n} problems.",
                             "source": "command line", "benchmark": f"{n} problems", "n": n, "method": method,
                             "baseline": {"name": "B", "value": b}}
    if discordant is not None:
        claim["discordant"] = {"b": discordant[0], "c": discordant[1]}
    if assumptions:
        claim["assumptions"] = list(assumptions)
    return claim


def compare(a: float, b: float, n: int, runs: int | None = None, sd: float | None = None, se: float | None = None,
            spread: float | None = None, discordant: tuple[int, int] | None = None, unit: Unit | None = None,
            assumptions: Sequence[str] = ()) -> ClaimVerdict:
    """The verdict on "A beats B" on a benchmark of ``n`` problems, from what was published.

    Parameters
    ----------
    a, b : the two pass rates in percent (A the method's, B the baseline's).
    n : problems in the benchmark.
    runs : how many runs A averages; needs one of ``sd``, ``se`` or ``spread`` (± of unknown kind).
    discordant : (b, c), problems only A solved and only B solved, when per-problem results are known.
    unit : ``"fraction"`` reads ``a``, ``b`` and the spread as fractions; None (default) reads percent and
        refuses two rates both at most 1 (:func:`as_percentages`).
    assumptions : named assumptions that narrow the pairings (``"nonnegative-correlation"``); none by default.

    Returns
    -------
    sotacheck.audit.claims.ClaimVerdict
        The verdict, the deciding check and every other check, the minimum detectable difference among them.
    """
    a, b, (sd, se, spread) = as_percentages(a, b, (sd, se, spread), unit)
    raw = compare_claim(a, b, n, runs, sd, se, spread, discordant, assumptions)
    try:
        claim = Claim.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        argument = _ARGUMENTS.get(field, field)
        message = error["msg"].removeprefix("Value error, ")
        raise ClaimsError(f"claim {COMPARE_ID!r}: field `{argument}` ({field or 'claim'}): {message}") from None
    return evaluate(claim, COMPARE_ID)
