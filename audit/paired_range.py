"""The range of the paired test's p over every per-problem pattern that published totals allow.

From two published pass rates (and their runs) the pairing of problems is unknown, so the paired test's p is
not identified; this module computes its range: exact McNemar over every split at one run a side, the
sign-flip test over every fractional pattern with runs (its proofs in :func:`pairing_range`). The public
names are imported from :mod:`sotacheck.audit.paired`, which owns every paired test; the rule that decides on
a range is :func:`sotacheck.audit.claim_checks.range_verdict`.

References
----------
.. [1] McNemar, Q. (1947). Psychometrika 12(2).
.. [2] Chernoff, H. (1952). A measure of asymptotic efficiency for tests of a hypothesis based on the sum of
       observations. Ann. Math. Statist. 23(4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sotacheck.audit import distributions as dist
from sotacheck.audit import signflip
from sotacheck.core.errors import ArgumentError


def feasible_mcnemar(net: int, low: int, high: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(b, c, exact two-sided McNemar p) for every c in [low, high] with b = c + net.

    At p = 1/2 the two-sided binomial test (``scipy.stats.binomtest``) is min(1, 2·P(X ≤ min(b, c))),
    evaluated here for all c at once."""
    c = np.arange(low, high + 1)
    b = c + net
    return b, c, dist.binom_two_sided_half(b, b + c)


@dataclass(frozen=True)
class PairingRange:
    """The two-sided p of the paired test over every per-problem pattern some published totals allow.

    ``low`` ≤ p ≤ ``high`` for every allowed pattern; ``low_attained`` / ``high_attained`` say whether an
    allowed pattern reaches that end exactly (described in ``low_pattern`` / ``high_pattern``, from A's side:
    b problems only A solved, c only B, "+1/3" a problem A leads by a third of a problem). Where
    ``high`` is a bound that no constructed pattern reaches, ``high_seen`` is the largest p of an allowed
    pattern found (None when none was constructed): the true largest p lies in [``high_seen``, ``high``].
    ``test``: the test a rerun would use (exact McNemar with one run a side, else the sign-flip test on the
    per-problem mean differences, equal to McNemar at one run). ``unit``: 1 / lcm(runs), the lattice of
    the per-problem differences; ``observed``: the summed difference in lattice units (A − B)."""

    test: str
    low: float
    high: float
    low_attained: bool
    high_attained: bool
    low_pattern: str
    high_pattern: str
    high_seen: float | None
    unit: int
    observed: int


def mcnemar_range(net: int, low: int, high: int) -> PairingRange:
    """The exact McNemar p for every split c ∈ [``low``, ``high``] problems lost, b = c + ``net`` won (one run
    a side: every pattern the totals allow is such a split, so both ends are attained)."""
    b, c, p = feasible_mcnemar(net, low, high)
    at_low, at_high = int(np.argmin(p)), int(np.argmax(p))
    return PairingRange("exact McNemar", float(p[at_low]), float(p[at_high]), True, True,
                        f"b = {b[at_low]}, c = {c[at_low]}", f"b = {b[at_high]}, c = {c[at_high]}", float(p[at_high]),
                        1, net)


def chernoff_envelope(observed: int, total: float, unit: int) -> float:
    """An upper bound of the two-sided sign-flip p of every pattern of per-problem differences ``D_i`` (in
    lattice units, |D_i| ≤ ``unit``) with sum ``observed`` and Σ|D_i| ≤ ``total``.

    For λ ≥ 0, P(S ≥ s) ≤ e^(−λs)·Π cosh(λD_i) (Chernoff), and log cosh is convex with log cosh 0 = 0, so
    log cosh(λ|D_i|) ≤ (|D_i| / unit)·log cosh(λ·unit): the product is at most cosh(λ·unit)^(total / unit),
    the moment generating function of ``total / unit`` whole problems. Minimised over λ this is
    exp(−N·KL((1 + q)/2 ‖ 1/2)) with N = ``total`` / ``unit``, q = |s| / ``total``; doubled for two sides."""
    s = abs(observed)
    if s == 0 or total <= 0:
        return 1.0
    n_whole, q = total / unit, min(1.0, s / total)
    kl = (1 + q) / 2 * np.log1p(q) + ((1 - q) / 2 * np.log1p(-q) if q < 1 else 0.0)
    return float(min(1.0, 2 * np.exp(-n_whole * kl)))


def _pattern_text(won: int, lost: int, e: int, unit: int, sign: int) -> str:
    """A pattern of whole problems and at most one fractional one, built from the side ahead's view (b won, c
    lost, e), told from A's (``sign`` −1: A is behind, so b and c swap and e changes sign)."""
    b, c = (won, lost) if sign > 0 else (lost, won)
    return f"b = {b}, c = {c} whole problems" + (f" and one problem {sign * e:+d}/{unit}" if e else "")


def _whole_with_remainder(n: int, single: int, observed: int, unit: int, min_shared: float,
                          single_behind: bool) -> tuple[float, int, int, int] | None:
    """The largest sign-flip p among the allowed patterns made of whole problems (b won, c lost, the rest
    equal) and at most one problem with a fractional difference ``e`` ∈ (−unit, unit), when one side has one
    run (``single`` problems solved; ``single_behind``: it is the side behind) and the other ``unit`` runs.
    ``min_shared``: the least Σ a_i·b_i allowed (the assumption of non-negative correlation; 0 without).

    A fractional problem is the side with runs solving part of its runs: e > 0 needs the single side to
    fail it (behind) or pass it (ahead), e < 0 the other way; each bound on c below counts the problems
    both sides solve (≥ 0) and those both fail (≥ 0)."""
    best: tuple[float, int, int, int] | None = None  # (p, won, lost, e)
    remainder = observed % unit
    for e in ([remainder, remainder - unit] if remainder else [0]):
        net, positive, negative = (observed - e) // unit, int(e > 0), int(e < 0)
        if single_behind:
            c_high = min(single - negative, n - single - positive - net)
        else:
            c_high = min(n - single - negative, single - net - positive)
        if net < 0 or c_high < 0:
            continue
        c = np.arange(c_high + 1)
        if single_behind:
            shared = single - c - negative + negative * (unit + e) / unit
        else:
            shared = single - c - net - positive + positive * (unit - e) / unit
        c = c[shared >= min_shared - 1e-9]
        if not e:  # whole problems only: the sign-flip test is exact McNemar
            p = dist.binom_two_sided_half(c + net, 2 * c + net)
        else:  # the exact lattice distribution, where it is small enough to compute
            p = np.array([signflip.two_sided(np.concatenate([np.full(ci + net, unit), np.full(ci, -unit), [e]]))
                          if unit * (2 * ci + net + 1) <= signflip.MAX_LATTICE else -1.0 for ci in c])
        if c.size and p.max() >= 0 and (best is None or p.max() > best[0]):
            at = int(np.argmax(p))
            best = (float(p[at]), int(c[at]) + net, int(c[at]), e)
    return best


def pairing_range(n: int, passes_a: int, passes_b: int, runs_a: int = 1, runs_b: int = 1, *,
                  losses: tuple[int, int] | None = None, nonnegative_correlation: bool = False) -> PairingRange:
    """The range of the paired test's p over every per-problem pattern that published totals allow.

    Parameters
    ----------
    n : int
        Problems in the benchmark.
    passes_a, passes_b : int
        Each side's passes summed over its runs (k problems × runs).
    runs_a, runs_b : int
        Runs each side's number averages; per-problem outcomes are then fractions k / runs.
    losses : (int, int), optional
        Published bounds on c, the problems B solved and A did not (one run a side only).
    nonnegative_correlation : bool
        The named assumption that the two sides' per-problem results are not negatively correlated
        (Σ a_i·b_i ≥ A·B / n; with one run a side: both solved ≥ kA·kB / n). Off by default.

    Returns
    -------
    PairingRange

    Notes
    -----
    One run a side: the patterns are the splits c = max(0, −net) … min(kB, n − kA) (b = c + net), and the
    exact McNemar p of each is computed (:func:`mcnemar_range`).

    With runs, a problem's outcome is a fraction and the test a rerun would use is the sign-flip test on the
    per-problem differences d_i (multiples of 1 / L, L = lcm(runs); integers D_i = L·d_i, |D_i| ≤ L, with
    the observed sum s = Σ D_i fixed by the totals). Both ends are proved, not searched:

    * Low end: p ≥ min(1, 2^(1 − min(s, M))), M the most problems the side ahead can lead on. (i) P(S ≥ s) ≥
      2^(−m₊), m₊ ≤ M the problems with D_i > 0: every sign pattern keeping those positive reaches S ≥ s.
      (ii) P(S ≥ s) ≥ 2^(−s): for integers with sum s and y ≥ 0, s − y ≥ 1, P(Σ_{i∈F} D_i ≤ y) ≥ 2^(−(s−y))
      over uniform random subsets F (induction removing a positive D_k = u: if s − u − y ≥ 1 the half
      without k alone gives 2^(−(s−y)+u)/2; if not, the complement of F shows P(Σ_F ≤ y) ≥ 1/2 for the rest,
      and at s − y = 1 the two halves add to P(Σ_F ≤ 0) + P(Σ_F ≥ 1) = 1), and S ≥ s ⇔ Σ_{flipped} D ≤ 0.
      With one run behind, min(s, M) problems each +1/L (or M problems sharing s) are allowed and attain it;
      with one run ahead, s ≤ M problems each +1/L do.
    * High end: :func:`chernoff_envelope` with Σ|D_i| ≤ L·min(A + B, 2n − A − B) (Σ|a_i − b_i| =
      A + B − 2Σ min(a_i, b_i) and min(a_i, b_i) ≥ max(0, a_i + b_i − 1); under the assumption also
      min(a_i, b_i) ≥ a_i·b_i, so ≤ A + B − 2AB/n). The largest p is *not* always at whole problems: at
      n = 8, three runs against one, totals 8/3 vs 4, the pattern (−3, −3, −3, −3, 2, 2, 2, 2) gives
      0.703 against 0.6875 for the best with at most one fractional problem (brute-force enumeration,
      ``tests/audit/test_paired_range.py``), so the high end is this bound, and ``high_seen`` the largest p
      of the whole-problem patterns with at most one fractional problem (when one side has one run).
    """
    for name, value in (("n", n), ("runs_a", runs_a), ("runs_b", runs_b)):
        if value < 1:
            raise ArgumentError(f"`{name}` must be at least 1, got {value}")
    for name, value, runs in (("passes_a", passes_a, runs_a), ("passes_b", passes_b, runs_b)):
        if not 0 <= value <= n * runs:
            raise ArgumentError(f"`{name}` must be in 0..{n * runs} ({n} problems × {runs} runs), got {value}")
    if runs_a == runs_b == 1:
        net = passes_a - passes_b
        low, high = max(0, -net), min(passes_b, n - passes_a)
        if nonnegative_correlation:
            high = min(high, passes_b - int(np.ceil(passes_a * passes_b / n - 1e-9)))
        if losses is not None:
            low, high = max(low, losses[0]), min(high, losses[1])
        if low > high:
            raise ArgumentError(f"no pairing of {passes_a} and {passes_b} solved of {n} has {losses} problems lost")
        return mcnemar_range(net, low, high)
    unit = int(np.lcm(runs_a, runs_b))
    observed = unit // runs_a * passes_a - unit // runs_b * passes_b
    ahead, behind = ((passes_a, runs_a), (passes_b, runs_b)) if observed >= 0 else ((passes_b, runs_b), (passes_a, runs_a))
    s = abs(observed)
    test = "sign-flip on the per-problem mean differences"
    if s == 0:
        return PairingRange(test, 1.0, 1.0, True, True, "every pattern (equal totals)", "every pattern (equal totals)",
                            1.0, unit, 0)
    total_a, total_b = passes_a / runs_a, passes_b / runs_b
    spread = min(total_a + total_b, 2 * n - total_a - total_b)
    if nonnegative_correlation:
        spread = min(spread, total_a + total_b - 2 * total_a * total_b / n)
    bound = chernoff_envelope(s, unit * spread, unit)
    leads = min(ahead[0], n - max(0, behind[0] - (behind[1] - 1) * n))
    steps = min(s, leads)
    least = float(min(1.0, 2.0 ** (1 - steps)))
    sign = 1 if observed > 0 else -1
    low_pattern = (f"{steps} problems each {sign:+d}/{unit}" if steps == s else
                   f"{steps} problems sharing {sign * s:+d}/{unit}, at most 1 each")
    seen = None
    if behind[1] == 1 or ahead[1] == 1:
        min_shared = total_a * total_b / n if nonnegative_correlation else 0.0
        single_behind = behind[1] == 1
        found = _whole_with_remainder(n, (behind if single_behind else ahead)[0], s, unit, min_shared, single_behind)
        if found is not None:
            seen, high_pattern = found[0], _pattern_text(*found[1:], unit, sign)
    if seen is None:
        high_pattern = "no pattern constructed"
    # the low end's pattern exists with one run behind (any steps), or one run ahead when steps == s: then s
    # problems the side ahead solves and the side behind solves in all runs but one, the rest equal
    reached = behind[1] == 1 or (ahead[1] == 1 and steps == s)
    return PairingRange(test, least, max(bound, seen or 0.0), reached, seen is not None and seen >= bound,
                        low_pattern, high_pattern, seen, unit, observed)
