"""Rank claims — "X is the best on B", or "X is better than each of these" — checked on per-problem results.

Two tests, named by the claim's ``test``:

- **intersection-union** (the default; a claim made in advance). One one-sided paired test of X against each
  competitor (the leaderboard's registered test: exact McNemar, or the sign-flip test with repeats), each at
  α. The claim is the intersection of "X beats each", so it is **supported** only when every test rejects;
  that keeps the level α with no multiplicity penalty (Berger 1982). **Contradicted** when some competitor
  beats X in its one-sided test at α / k (Bonferroni over the k competitors); otherwise **not significant**,
  naming the competitors X was not shown to beat.
- **leaderboard** (a claim picked by looking at the board). **Supported** only when X is alone in the top
  group (every other system beaten significantly by some system, Holm over all pairs, so X's rank is 1 with
  family-wise confidence 1 − α); **not significant** when others share the top group (named);
  **contradicted** when X is not in it (the systems significantly better named).

Either is **unverifiable** when the leaderboard's runs were not given.

References
----------
.. [1] Berger, R. L. (1982). Multiparameter hypothesis testing and acceptance sampling. Technometrics 24(4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.audit.claim_checks import CONTRADICTED, NOT_SIGNIFICANT, SUPPORTED, CheckResult
from sotacheck.audit.claim_model import RankClaim
from sotacheck.core.errors import InputError

if TYPE_CHECKING:  # pandas (the run directory's tables) only when a rank claim is checked
    from sotacheck.audit.combined import CombinedRuns

QUESTION = ("Is the system alone in the top group: do the pairwise tests (Holm over all pairs of the leaderboard) "
            "leave every other system beaten by some system?")
QUESTION_IU = ("Does the system beat each competitor in a one-sided paired test at α (intersection-union: every "
               "test must reject, no multiplicity adjustment)?")


def rank_check(claim: RankClaim, named: CombinedRuns | None) -> CheckResult:
    """The one check of a rank claim, by the claim's ``test`` (module docstring), on the runs its leaderboard
    names, combined (:meth:`sotacheck.audit.combined.CombinedRuns.parts`; None when none was given)."""
    board_ref = claim.leaderboard
    question = QUESTION_IU if claim.test == "intersection-union" else QUESTION
    given = {run.name for run in named.runs} if named is not None else set()
    missing = [name for name in board_ref.runs if name not in given]
    if missing:
        return CheckResult("rank", question, f"Needs the leaderboard's run(s) {', '.join(map(repr, missing))} (pass "
                           f"{' '.join(f'--runs runs/{m}' for m in missing)}).", None)
    assert named is not None
    if claim.test == "intersection-union":
        return _intersection_union(claim, named)
    return _top_group(claim, named)


def _field_error(claim: RankClaim, exc: InputError) -> InputError:
    return InputError(f"claim {claim.id!r}: field `leaderboard`: {exc}")


def _not_on_board(claim: RankClaim, field: str, name: str, names: list[str]) -> InputError:
    return InputError(f"claim {claim.id!r}: field `{field}`: {name!r} is not on the leaderboard of "
                      f"{', '.join(claim.leaderboard.runs)} (systems: {', '.join(names)})")


def _intersection_union(claim: RankClaim, named: CombinedRuns) -> CheckResult:
    import numpy as np

    from sotacheck.audit.leaderboard import count_outcomes, select_dataset
    from sotacheck.audit.paired import choose_pairwise_test

    alpha = claim.leaderboard.alpha
    try:
        table = named.table
        dataset = select_dataset(table, claim.leaderboard.dataset)
        counts = count_outcomes(table, dataset)
    except InputError as exc:
        raise _field_error(claim, exc) from None
    names = list(counts.systems)
    if claim.system not in names:
        raise _not_on_board(claim, "system", claim.system, names)
    for other in claim.better_than or []:
        if other not in names:
            raise _not_on_board(claim, "better_than", other, names)
    rivals = [n for n in (claim.better_than or names) if n != claim.system]
    if not rivals:
        raise InputError(f"claim {claim.id!r}: field `better_than`: names no system besides {claim.system!r}")
    test = choose_pairwise_test(counts.samples)
    me = names.index(claim.system)
    result = test.run(counts.passes, counts.samples, np.full(len(rivals), me), np.array([names.index(r) for r in rivals]))
    ahead = dict(zip(rivals, result.greater.tolist(), strict=True))  # one-sided p that the claim's system is better
    behind = dict(zip(rivals, result.less.tolist(), strict=True))
    rates = counts.means.mean(axis=1)
    shown = ", ".join(f"{r} (one-sided p = {ahead[r]:.2g})" for r in rivals)
    numbers = {"test": "intersection-union", "pair_test": result.test, "alpha": alpha,
               "pvalues": ahead, "n_problems": len(counts.problems),
               "pass_rates_pp": {n: 100 * float(rates[names.index(n)]) for n in [claim.system, *rivals]}}
    where = (f"{claim.system} ({100 * rates[me]:.1f} %) against {len(rivals)} system(s) on {len(counts.problems)} "
             f"shared problems of {dataset}, {result.test}, each one-sided at α = {alpha:g}")
    worse = [r for r in rivals if behind[r] <= alpha / len(rivals)]
    if worse:
        return CheckResult("rank", QUESTION_IU, f"{where}: significantly worse than {', '.join(worse)} (one-sided, "
                           f"α / {len(rivals)}, Bonferroni over the competitors).", CONTRADICTED,
                           numbers=numbers | {"significantly_better": worse})
    short = [r for r in rivals if ahead[r] > alpha]
    if short:
        return CheckResult("rank", QUESTION_IU, f"{where}: not shown better than {', '.join(short)}; {shown}.",
                           NOT_SIGNIFICANT, max(ahead.values()), numbers=numbers)
    return CheckResult("rank", QUESTION_IU, f"{where}: it beats each — {shown}; every test rejects "
                       f"(intersection-union, no multiplicity adjustment).", SUPPORTED, max(ahead.values()),
                       numbers=numbers)


def _top_group(claim: RankClaim, named: CombinedRuns) -> CheckResult:
    from sotacheck.audit.leaderboard import leaderboard  # pandas and the tests: only for a rank claim

    board_ref = claim.leaderboard
    try:
        board = leaderboard(named, board_ref.dataset, alpha=board_ref.alpha)
    except InputError as exc:
        raise _field_error(claim, exc) from None
    names = [s.system for s in board.systems]
    if claim.system not in names:
        raise _not_on_board(claim, "system", claim.system, names)
    row = board.system(claim.system)
    others = [name for name in board.top_group if name != claim.system]
    better = sorted({p.a if p.difference > 0 else p.b for p in board.pairs if p.significant
                     and claim.system in (p.a, p.b) and (p.b if p.difference > 0 else p.a) == claim.system})
    numbers = {"test": "leaderboard", "rank_interval": list(row.rank_interval), "top_group": list(board.top_group),
               "n_systems": board.n_systems, "n_problems": board.n_problems, "family": board.family,
               "pass_rate_pp": 100 * row.pass_rate}
    where = (f"{claim.system} ranks {row.position} of {board.n_systems} by pass rate ({100 * row.pass_rate:.1f} %) on "
             f"{board.n_problems} shared problems of {board.dataset}, rank interval {row.rank_interval[0]}–"
             f"{row.rank_interval[1]} ({board.family}, α = {board.alpha:g})")
    if not row.in_top_group:
        return CheckResult("rank", QUESTION, f"{where}; significantly worse than {', '.join(better)}.", CONTRADICTED,
                           numbers=numbers | {"significantly_better": better})
    if others:
        return CheckResult("rank", QUESTION, f"{where}; it cannot be separated from {', '.join(others)}.",
                           NOT_SIGNIFICANT, numbers=numbers)
    return CheckResult("rank", QUESTION, f"{where}; alone in the top group.", SUPPORTED, numbers=numbers)
