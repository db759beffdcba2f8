"""Leaderboard tables (LaTeX booktabs, Markdown, CSV through :mod:`sotacheck.reports.tables`): the systems
with their pass-rate and rank intervals, the top group in bold; every tested pair. Rendering only: every
number comes from the :class:`~sotacheck.audit.leaderboard_results.Leaderboard` object."""

from __future__ import annotations

import math

from sotacheck.audit.leaderboard_results import Leaderboard, PairResolution
from sotacheck.core.errors import ArgumentError
from sotacheck.reports.tables import RENDERERS, Cell, Table


def points(value: float, signed: bool = False) -> str:
    """A fraction as percentage points with one decimal (``0.85`` → ``85.0``)."""
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"


def p_value(p: float, exact: bool) -> str:
    """A p-value; a resampled one is marked ``≈`` (its Monte Carlo error is stated in the notes)."""
    return ("" if exact else "≈") + f"{p:.3g}"


def interval_method(board: Leaderboard) -> str:
    """The pass-rate interval method(s) of the board's systems, e.g. ``Wilson``."""
    return " / ".join(dict.fromkeys(s.ci_method for s in board.systems))


def pair_tests(board: Leaderboard) -> str:
    """The paired test(s) used, e.g. ``exact McNemar``."""
    return "; ".join(dict.fromkeys(p.test for p in board.pairs)) or "none"


def describe_mdd(resolution: PairResolution | None, label: str, alpha: float) -> str:
    """``the top pair (A vs B): 24.2 points at α = 0.05, 27.9 over the whole family`` (or undetectable)."""
    if resolution is None:
        return f"the {label}: not available"

    def shown(value: float) -> str:
        return f"{points(value)} points" if math.isfinite(value) else "undetectable"

    return (f"the {label} ({resolution.a} vs {resolution.b}): {shown(resolution.mdd)} at α = {alpha:g}, "
            f"{shown(resolution.mdd_familywise)} at the family-wise level ({resolution.method})")


def resolution_note(board: Leaderboard) -> str:
    power = f"{100 * board.resolution.power:g} %"
    return (f"Resolution (smallest difference detected with {power} power): "
            f"{describe_mdd(board.resolution.median_pair, 'median pair', board.alpha)}; "
            f"{describe_mdd(board.resolution.top_pair, 'top pair', board.alpha)}.")


def suspects_note(board: Leaderboard) -> str:
    none = sum(1 for s in board.suspect_problems if s.reason == "solved by no system")
    one = sum(1 for s in board.suspect_problems if s.reason == "solved by one system only")
    weak = sum(1 for s in board.suspect_problems if s.weak_test is not None)
    weak_part = f"; {weak} whose tests accept a cheap wrong program" if weak else ""
    return (f"Suspect problems: {len(board.suspect_problems)} ({none} solved by no system, {one} by one system "
            f"only{weak_part}); a problem nobody solves often has a broken test.")


def leaderboard_table(board: Leaderboard) -> Table:
    """Systems in board order: position, system, pass rate with its interval, simultaneous rank interval,
    how many systems it beats and how many beat it significantly. The top group's rows are bold."""
    rows = tuple(tuple(Cell(text, bold=s.in_top_group) for text in (
        str(s.position), s.system, f"{points(s.pass_rate)} [{points(s.ci_low)}, {points(s.ci_high)}]",
        f"[{s.rank_interval[0]}, {s.rank_interval[1]}]", str(s.better_than), str(s.worse_than)))
        for s in board.systems)
    level = f"{100 * board.confidence_level:g} %"
    caption = (f"Leaderboard on {board.dataset}: {board.n_systems} systems on the {board.n_problems} problems they "
               f"share. Pass rate (%) with its {level} interval ({interval_method(board)}). Rank interval: "
               f"simultaneous at α = {board.alpha:g}, from the pairwise tests ({pair_tests(board)}; {board.family}); "
               f"better / worse than: the systems it beats / that beat it significantly. Bold: the top group "
               f"({len(board.top_group)} of {board.n_systems}), the systems no other system beats significantly.")
    notes = (suspects_note(board), resolution_note(board), *(f"{note[:1].upper()}{note[1:]}." for note in board.notes))
    columns = ("#", "System", f"Pass rate [{level} CI]", "Rank interval", "Better than", "Worse than")
    return Table(columns, rows, caption, label="tab:sotacheck-leaderboard", align="rlrcrr", notes=notes)


def leaderboard_pairs_table(board: Leaderboard, significant_only: bool = False) -> Table:
    """Every tested pair (or only the significant ones): the difference in points, the problems only one
    solved (one sample per problem) or on which one's mean is higher (with repeats), p and Holm's p. Bold:
    significant after Holm."""
    one_sample = all(p.a_only is not None for p in board.pairs)
    pairs = [p for p in board.pairs if p.significant or not significant_only]
    rows = tuple(tuple(Cell(text, bold=p.significant) for text in (
        p.a, p.b, points(p.difference, signed=True),
        str(p.a_only if one_sample else p.a_higher), str(p.b_only if one_sample else p.b_higher),
        p_value(p.p, p.exact), p_value(p.p_adjusted, p.exact)))
        for p in pairs)
    counted = "solved by it only" if one_sample else "with its per-problem mean higher"
    shown = f"the {len(pairs)} significant pairs of the {len(board.pairs)} tested" if significant_only else \
        f"all {len(board.pairs)} tested pairs"
    caption = (f"Pairwise tests on {board.dataset} ({board.n_problems} shared problems), {shown}: A has the higher "
               f"or equal pass rate; difference A − B in points; A / B: problems {counted}; p two-sided "
               f"({pair_tests(board)}), Holm-adjusted over the family ({board.family}). Bold: significant at "
               f"α = {board.alpha:g}.")
    resampled = sum(not p.exact for p in board.pairs)
    notes = (f"≈: {resampled} p-value(s) resampled (Monte Carlo), not exact.",) if resampled else ()
    columns = ("A", "B", "Diff (pp)", "A only" if one_sample else "A higher", "B only" if one_sample else "B higher",
               "p", "p (Holm)")
    return Table(columns, rows, caption, label="tab:sotacheck-leaderboard-pairs", align="llrrrrr", notes=notes)


def render_leaderboard_table(board: Leaderboard, fmt: str = "latex", pairs: bool = False) -> str:
    """The systems table (or, with ``pairs``, the pairs table) as ``latex``, ``markdown`` or ``csv``."""
    if fmt not in RENDERERS:
        raise ArgumentError(f"table format {fmt!r} is not one of {', '.join(RENDERERS)}")
    table = leaderboard_pairs_table(board) if pairs else leaderboard_table(board)
    return RENDERERS[fmt](table)
