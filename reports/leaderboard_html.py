"""A leaderboard as HTML: a self-contained page (inline SVG, no scripts, fonts or CDN) and the same
content as a fragment the main report can include. The first screen is the answer — who is in the top
group, whether #1 is alone, the omnibus test and what the benchmark can resolve — then the rank plot, the
table, the matrix of significant wins, the heat map, suspect problems, what differs between systems and the
notes. Rendering only: every number comes from the
:class:`~sotacheck.audit.leaderboard_results.Leaderboard` object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

from sotacheck.audit.leaderboard_results import Leaderboard
from sotacheck.reports import leaderboard_figures as figures
from sotacheck.reports.files import write_atomically
from sotacheck.reports.leaderboard_tables import (
    best_set_note,
    leaderboard_pairs_table,
    leaderboard_table,
    resolution_note,
)

TEMPLATES = Path(__file__).with_name("templates")
LISTED = 6  # the first screen names the top group up to this many systems


@dataclass(frozen=True)
class Figure:
    key: str
    title: str
    alt: str
    svg: str


def _names(names: tuple[str, ...]) -> str:
    if len(names) > LISTED:
        return f"{', '.join(names[:LISTED])} and {len(names) - LISTED} more (see the table)"
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def headline(board: Leaderboard) -> str:
    """The answer in one sentence: how many systems are in the top group and whether #1 is alone in it."""
    top, n, k = board.systems[0], board.n_systems, len(board.top_group)
    scope = f"({board.family}, α = {board.alpha:g})"
    if k == 1:
        if top.better_than == n - 1:
            return f"{top.system} is alone in the top group: it beats each of the other {n - 1} systems significantly {scope}."
        return (f"{top.system} is alone in the top group: no system beats it significantly, and each of the other "
                f"{n - 1} is beaten significantly by some system {scope}.")
    return (f"{k} of {n} systems are in the top group, where no other system beats them significantly {scope}: "
            f"#1, {top.system}, is not alone.")


def top_group_line(board: Leaderboard) -> str:
    """Who is in the top group, and how many systems #1 beats."""
    top, n = board.systems[0], board.n_systems
    return (f"Top group: {_names(board.top_group)}. #1, {top.system}, beats {top.better_than} of the other {n - 1} "
            f"significantly.")


def _p(p: float) -> str:
    return "p < 1e-300 (below the floating-point range)" if p == 0 else f"p = {p:.3g}"


def omnibus_sentence(board: Leaderboard) -> str:
    """The omnibus test first: is there any difference among the systems at all."""
    o = board.omnibus
    verdict = ("the systems differ" if o.pvalue < board.alpha
               else f"no evidence at α = {board.alpha:g} that the systems differ at all")
    return f"Omnibus test, {o.test}: statistic {o.statistic:.2f}, df = {o.df}, {_p(o.pvalue)}: {verdict}."


def leaderboard_figures(board: Leaderboard) -> list[Figure]:
    """The three figures, drawn from ``board``."""
    n, m = board.n_systems, board.n_problems
    return [
        Figure("rank", "Rank plot", f"Pass rate with its interval and simultaneous rank interval of each of the {n} "
               f"systems, sorted by pass rate, the top group in vermillion", figures.rank_plot(board)),
        Figure("wins", "Significant pairwise wins", f"{n} by {n} matrix: blue where the row's system beats the "
               f"column's significantly, orange where it is beaten, white where not significant",
               figures.wins_matrix(board)),
        Figure("heat", "Per-problem results by difficulty", f"Heat map of {n} systems by {m} problems sorted from "
               f"easiest to hardest, each cell the share of samples solved", figures.difficulty_heatmap(board)),
    ]


def _environment() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]))


def _context(board: Leaderboard) -> dict[str, object]:
    return {"b": board, "slug": re.sub(r"[^A-Za-z0-9_-]+", "-", board.dataset).strip("-") or "board",
            "headline": headline(board), "top_line": top_group_line(board), "omnibus": omnibus_sentence(board),
            "resolution": resolution_note(board), "table": leaderboard_table(board),
            "pairs": leaderboard_pairs_table(board), "figures": leaderboard_figures(board),
            "canonical": any(s.canonical_passed is not None for s in board.suspect_problems),
            "left_out": [s for s in board.systems if s.left_out], "best_set": best_set_note(board),
            "missing": [s for s in board.systems if s.missing_cells],
            "cut": any(len(s.system) > figures.LABEL_CHARS for s in board.systems)}


def leaderboard_section(board: Leaderboard, heading_level: int = 2) -> str:
    """The leaderboard as an HTML fragment (a ``<section class="leaderboard">``) for another page; its
    styles are :func:`leaderboard_style`."""
    return _environment().get_template("leaderboard_section.html.j2").render(h=heading_level, **_context(board))


def leaderboard_style() -> str:
    """The ``<style>`` element the section's classes need (put it in the page's ``<head>``)."""
    return _environment().get_template("leaderboard_style.html.j2").render()


def render_leaderboard_page(board: Leaderboard, title: str | None = None) -> str:
    """A whole, self-contained HTML page for one leaderboard."""
    page_title = title or f"sotacheck leaderboard: {board.dataset}"
    return _environment().get_template("leaderboard.html.j2").render(
        title=page_title, style=leaderboard_style(), section=leaderboard_section(board, heading_level=2))


def render_leaderboard_html(board: Leaderboard, path: str | Path, title: str | None = None) -> Path:
    """Write the page to ``path`` atomically (a failure leaves no half-written file); returns the path."""
    return write_atomically(Path(path), render_leaderboard_page(board, title))
