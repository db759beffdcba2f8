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


def pvalue_text(p: float) -> str:
    """A p-value to three significant digits."""
    return f"{p:.3g}"


def best_set_note(board: Leaderboard) -> str:
    """``The best system is among these 2 with 95 % confidence: A, B (method).``"""
    level = f"{100 * (1 - board.alpha):g} %"
    k = len(board.best_set)
    among = f"is {board.best_set[0]}" if k == 1 else f"is among these {k}: {', '.join(board.best_set)}"
    return f"The best system {among}, with {level} confidence ({board.best_set_method})."


def rounding_note(board: Leaderboard) -> str | None:
    """Where unequal samples per problem made the test round the per-problem differences: how far at most."""
    rounded = [p.rounding for p in board.pairs if p.rounding > 0]
    if not rounded:
        return None
    return (f"{len(rounded)} pair(s) with unequal samples per problem: p is the exact sign-flip p of the per-problem "
            f"differences rounded to a lattice, which moves a mean difference by at most {100 * max(rounded):.2g} "
            f"points (per pair in the JSON's `rounding`).")


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
    return (f"Resolution (smallest difference detected with {power} power, at the pair's observed discordance): "
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
               f"share. Pass rate (%) with its {level} interval ({interval_method(board)}; marginal, one "
               f"system at a time). Rank interval: "
               f"simultaneous at α = {board.alpha:g}, from the pairwise tests ({pair_tests(board)}; {board.family}); "
               f"better / worse than: the systems it beats / that beat it significantly. Bold: the top group "
               f"({len(board.top_group)} of {board.n_systems}), the systems no other system beats significantly.")
    notes = (suspects_note(board), best_set_note(board), resolution_note(board),
             *(f"{note[:1].upper()}{note[1:]}." for note in board.notes))
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
        pvalue_text(p.pvalue), pvalue_text(p.pvalue_adjusted)))
        for p in pairs)
    counted = "solved by it only" if one_sample else "with its per-problem mean higher"
    shown = f"the {len(pairs)} significant pairs of the {len(board.pairs)} tested" if significant_only else \
        f"all {len(board.pairs)} tested pairs"
    caption = (f"Pairwise tests on {board.dataset} ({board.n_problems} shared problems), {shown}: A has the higher "
               f"or equal pass rate; difference A − B in points; A / B: problems {counted}; p two-sided "
               f"({pair_tests(board)}), Holm-adjusted over the family ({board.family}). Bold: significant at "
               f"α = {board.alpha:g}.")
    rounding = rounding_note(board)
    notes = (rounding,) if rounding else ()
    columns = ("A", "B", "Diff (pp)", "A only" if one_sample else "A higher", "B only" if one_sample else "B higher",
               "p", "p (Holm)")
    return Table(columns, rows, caption, label="tab:sotacheck-leaderboard-pairs", align="llrrrrr", notes=notes)


def leaderboard_csv_table(board: Leaderboard) -> Table:
    """The systems for the next program: one number per column (pass rate and its interval's ends in points,
    the rank interval's ends), the top group and the best set as ``true``/``false``, missing cells."""
    def flag(value: bool) -> str:
        return "true" if value else "false"

    rows = tuple(tuple(Cell(text) for text in (
        str(s.position), s.system, f"{100 * s.pass_rate:.3f}", f"{100 * s.ci_low:.3f}", f"{100 * s.ci_high:.3f}",
        str(s.rank_interval[0]), str(s.rank_interval[1]), str(s.better_than), str(s.worse_than),
        flag(s.in_top_group), flag(s.in_best_set), str(s.n_problems), s.samples, str(s.missing_cells)))
        for s in board.systems)
    columns = ("position", "system", "pass_rate", "ci_low", "ci_high", "rank_low", "rank_high", "better_than",
               "worse_than", "top_group", "best_set", "n_problems", "samples", "missing_cells")
    return Table(columns, rows, "", label="tab:sotacheck-leaderboard", align="rlrrrrrrrllrlr")


def render_leaderboard_table(board: Leaderboard, fmt: str = "latex", pairs: bool = False) -> str:
    """The systems table (or, with ``pairs``, the pairs table) as ``latex``, ``markdown`` or ``csv`` (the
    systems as :func:`leaderboard_csv_table`: one number per column)."""
    if fmt not in RENDERERS:
        raise ArgumentError(f"table format {fmt!r} is not one of {', '.join(RENDERERS)}")
    table = leaderboard_pairs_table(board) if pairs else (
        leaderboard_csv_table(board) if fmt == "csv" else leaderboard_table(board))
    return RENDERERS[fmt](table)
