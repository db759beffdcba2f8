"""Rank claims — "X is the best on B" — checked against a leaderboard (:mod:`sotacheck.audit.leaderboard`).

The rule: **supported** only when X is alone in the top group (every other system is beaten significantly by
some system, Holm over all pairs, so X's rank is 1 with family-wise confidence 1 − α); **not significant**
when X is in the top group with others (named: the systems it cannot be separated from); **contradicted**
when X is not in the top group at all (named: the systems significantly better); **unverifiable** when the
leaderboard's runs were not given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.audit.claim_checks import CONTRADICTED, NOT_SIGNIFICANT, SUPPORTED, CheckResult
from sotacheck.audit.claim_model import RankClaim
from sotacheck.core.errors import InputError

if TYPE_CHECKING:  # pandas (the run directory's tables) only when a rank claim is checked
    from sotacheck.core.rundir import Run

QUESTION = ("Is the system alone in the top group: do the pairwise tests (Holm over all pairs of the leaderboard) "
            "leave every other system beaten by some system?")


def rank_check(claim: RankClaim, runs: list[Run]) -> CheckResult:
    """The one check of a rank claim: the leaderboard of the claim's runs, and where the system stands on it."""
    from sotacheck.audit.leaderboard import leaderboard  # pandas and the tests: only for a rank claim

    board_ref = claim.leaderboard
    named = [run for name in board_ref.runs for run in runs if run.name == name]
    missing = [name for name in board_ref.runs if not any(run.name == name for run in runs)]
    if missing:
        return CheckResult("rank", QUESTION, f"Needs the leaderboard's run(s) {', '.join(map(repr, missing))} (pass "
                           f"{' '.join(f'--runs runs/{m}' for m in missing)}).", None)
    try:
        board = leaderboard(named, board_ref.dataset, alpha=board_ref.alpha)
    except InputError as exc:
        raise InputError(f"claim {claim.id!r}: field `leaderboard`: {exc}") from None
    names = [s.system for s in board.systems]
    if claim.system not in names:
        raise InputError(f"claim {claim.id!r}: field `system`: {claim.system!r} is not on the leaderboard of "
                         f"{', '.join(board_ref.runs)} (systems: {', '.join(names)})")
    row = board.system(claim.system)
    others = [name for name in board.top_group if name != claim.system]
    better = sorted({p.a if p.difference > 0 else p.b for p in board.pairs if p.significant
                     and claim.system in (p.a, p.b) and (p.b if p.difference > 0 else p.a) == claim.system})
    numbers = {"rank_interval": list(row.rank_interval), "top_group": list(board.top_group),
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

