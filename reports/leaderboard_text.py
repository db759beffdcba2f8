"""A leaderboard as plain text for the terminal (``sotacheck leaderboard``): the answer first (the top
group), then one line per system; readable at 60 systems. Rendering only: every number comes from
:class:`sotacheck.audit.leaderboard_results.Leaderboard`."""

from __future__ import annotations

import math

from sotacheck.audit.leaderboard_results import Leaderboard, PairResolution
from sotacheck.reports.leaderboard_tables import best_set_note, rounding_note

LISTED_SUSPECTS = 8


def _points(value: float) -> str:
    return f"{100 * value:.1f}"


def headline(board: Leaderboard) -> str:
    """One sentence: who cannot be separated from #1, under which family."""
    top = board.systems[0].system
    family = f"{board.family}, α = {board.alpha:g}"
    if len(board.top_group) == 1:
        beaten = ("it beats every other system significantly" if board.systems[0].better_than == board.n_systems - 1
                  else "every other system is beaten significantly by at least one system")
        return f"{top} is alone in the top group: {beaten} ({family})."
    others = [name for name in board.top_group if name != top]
    if top not in board.top_group:  # cannot happen with rank intervals, kept for a smaller family
        return f"{len(board.top_group)} systems are in the top group ({family})."
    listed = ", ".join(others[:12]) + (", ..." if len(others) > 12 else "")
    return (f"{len(board.top_group)} of {board.n_systems} systems are in the top group: no test separates "
            f"{len(others)} of them from #1 ({top}): {listed} ({family}).")


def _p(value: float) -> str:
    """``p = 0.0312``; a p that underflowed is ``p < 1e-300``."""
    if value == 0.0:
        return "p < 1e-300 (below the floating-point range)"
    return f"p = {value:.3g}"


def _resolution(label: str, pair: PairResolution | None) -> str:
    if pair is None:
        return f"  {label}: no pair tested"
    if not math.isfinite(pair.mdd):
        return f"  {label} ({pair.a} vs {pair.b}): no difference detectable at 80 % power ({pair.method})"
    familywise = f"{_points(pair.mdd_familywise)} points" if math.isfinite(pair.mdd_familywise) \
        else "none detectable"
    return (f"  {label} ({pair.a} vs {pair.b}): {_points(pair.mdd)} points at α alone, {familywise} at "
            f"α / family size ({pair.method})")


def render_text(board: Leaderboard, pairs: bool = False) -> str:
    """The leaderboard as lines of text; ``pairs`` adds one line per tested pair."""
    samples = {s.samples for s in board.systems}
    per_problem = "one sample per problem" if samples == {"1"} else f"samples per problem: {', '.join(sorted(samples))}"
    lines = [f"leaderboard: {board.dataset}, {board.n_problems} problems shared by {board.n_systems} systems "
             f"({per_problem})",
             headline(board),
             best_set_note(board),
             f"any difference at all: {board.omnibus.test} = {board.omnibus.statistic:.2f}, df {board.omnibus.df}, "
             f"{_p(board.omnibus.pvalue)}",
             f"pairs: {board.pairs[0].test if board.pairs else 'none'}; {board.family}; rank intervals are "
             f"simultaneous at {100 * (1 - board.alpha):g} % (from the Holm-adjusted tests)", ""]
    width = max(6, *(len(s.system) for s in board.systems))
    level = f"{round(100 * board.confidence_level)}% CI"
    lines.append(f"  {'#':>3s}  {'system':{width}s} {'pass':>6s}  {level:<14s} {'rank':>7s} {'beats':>5s} "
                 f"{'beaten':>6s}")
    for s in board.systems:
        rank = f"{s.rank_interval[0]}–{s.rank_interval[1]}" if s.rank_interval[0] != s.rank_interval[1] \
            else str(s.rank_interval[0])
        mark = " *" if s.in_top_group else ""
        extra = "".join(part for part in (f"  ({len(s.left_out)} problems left out)" if s.left_out else "",
                                          f"  ({s.missing_cells} missing cells)" if s.missing_cells else ""))
        interval = f"[{_points(s.ci_low)}, {_points(s.ci_high)}]"
        lines.append(f"  {s.position:3d}  {s.system:{width}s} {_points(s.pass_rate):>6s}  {interval:<14s} "
                     f"{rank:>7s} {s.better_than:5d} {s.worse_than:6d}{mark}{extra}")
    lines.append(f"  (* top group; pass rates in points, {board.systems[0].ci_method} intervals, each for "
                 f"one system alone (marginal); rank: "
                 f"simultaneous interval; beats / beaten: significant pairwise results; missing cells: errored "
                 f"or dropped samples of the shared problems)")
    lines += ["", "what this benchmark can resolve (smallest difference detectable with 80 % power, at the pair's "
              "observed discordance):",
              _resolution("median pair", board.resolution.median_pair),
              _resolution("top pair", board.resolution.top_pair)]
    if board.suspect_problems:
        none = [s.problem for s in board.suspect_problems if s.reason == "solved by no system"]
        one = [f"{s.problem} ({s.solved_by[0]})" for s in board.suspect_problems if s.reason == "solved by one system only"]
        weak = [f"{s.problem} ({s.weak_test})" for s in board.suspect_problems if s.weak_test is not None]
        lines += ["", "suspect problems (a problem nobody solves often has a broken test):"]
        if none:
            lines.append(f"  solved by no system ({len(none)}): {', '.join(none[:LISTED_SUSPECTS])}"
                         + (", ..." if len(none) > LISTED_SUSPECTS else ""))
        if one:
            lines.append(f"  solved by one system only ({len(one)}): {', '.join(one[:LISTED_SUSPECTS])}"
                         + (", ..." if len(one) > LISTED_SUSPECTS else ""))
        if weak:
            lines.append(f"  tests accept a cheap wrong program ({len(weak)}): {', '.join(weak[:LISTED_SUSPECTS])}"
                         + (", ..." if len(weak) > LISTED_SUSPECTS else ""))
        judged = [s for s in board.suspect_problems if s.canonical_passed is not None]
        failing = [s.problem for s in judged if not s.canonical_passed]
        if judged:
            lines.append(f"  canonical solutions judged: {len(judged) - len(failing)} of {len(judged)} pass"
                         + (f"; failing: {', '.join(failing)}" if failing else ""))
    if board.differences:
        lines += ["", "what differs between systems (listed, not a reason to refuse):"]
        lines += [f"  {d}" for d in board.differences]
    if board.notes:
        lines += [""] + [f"note: {n}" for n in board.notes]
    rounding = rounding_note(board)
    if pairs:
        lines += ["", f"pairs ({len(board.pairs)}; p two-sided, p (Holm) adjusted over the family):"]
        aw = max(4, *(len(p.a) for p in board.pairs)) if board.pairs else 4
        bw = max(4, *(len(p.b) for p in board.pairs)) if board.pairs else 4
        lines.append(f"  {'a':{aw}s} {'b':{bw}s} {'diff':>6s} {'a only':>6s} {'b only':>6s} {'p':>9s} {'p (Holm)':>9s}")
        for p in board.pairs:
            a_only = "–" if p.a_only is None else str(p.a_only)
            b_only = "–" if p.b_only is None else str(p.b_only)
            lines.append(f"  {p.a:{aw}s} {p.b:{bw}s} {100 * p.difference:+6.1f} {a_only:>6s} {b_only:>6s} "
                         f"{p.pvalue:9.2e} {p.pvalue_adjusted:9.2e}" + (" significant" if p.significant else ""))
        if rounding:
            lines.append(f"  {rounding}")
    return "\n".join(lines) + "\n"
