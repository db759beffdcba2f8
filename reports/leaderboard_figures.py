"""Leaderboard figures as inline SVG (matplotlib, Okabe–Ito palette): the rank plot, the matrix of
significant pairwise wins and the systems × problems heat map. Drawing only: every number comes from the
:class:`~sotacheck.audit.leaderboard_results.Leaderboard` object.

The figures grow with the number of systems (one row per system, small type) so that 60 systems stay
readable; long names are cut to :data:`LABEL_CHARS` characters and the full name is the label's SVG
``<title>`` (a tooltip in a browser).
"""

from __future__ import annotations

from html import escape

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, PercentFormatter

from sotacheck.audit.leaderboard_results import Leaderboard
from sotacheck.reports.figures import OKABE_ITO, svg_text

LABEL_CHARS = 32
ROW_IN = 0.17  # inches per system row
FIGURE_WIDTH_IN = 9.6  # with its labels, about the width of the page's column: shown at its own size
TOP_COLOUR, REST_COLOUR = OKABE_ITO[5], OKABE_ITO[0]  # vermillion: the top group; blue: the others
WIN, LOSS, NOT_SIGNIFICANT, NOT_TESTED, SELF = 0, 1, 2, 3, 4
WIN_COLOURS = (OKABE_ITO[0], OKABE_ITO[1], "#ffffff", "#d9d9d9", "#4d4d4d")


def short_label(name: str, width: int = LABEL_CHARS) -> str:
    """``name`` cut to ``width`` characters, ending in ``…`` where it was cut."""
    return name if len(name) <= width else name[: width - 1] + "…"


def _font(n: int) -> float:
    return 8.0 if n <= 20 else 7.0 if n <= 45 else 6.5


def _system_ticks(ax: plt.Axes, board: Leaderboard, y: np.ndarray, prefix: str) -> dict[str, str]:
    """Label each system's row ``position. name`` (top group bold); returns gid → full name for the titles."""
    labels = [f"{s.position}. {short_label(s.system)}" for s in board.systems]
    ax.set_yticks(y, labels, fontsize=_font(board.n_systems))
    texts = ax.get_yticklabels()
    titles = {}
    for tick, text, system in zip(texts, labels, board.systems, strict=True):
        gid = f"{prefix}-{system.position}"
        tick.set_gid(gid)
        if system.in_top_group:
            tick.set_fontweight("bold")
        if text != f"{system.position}. {system.system}":
            titles[gid] = system.system
    return titles


def _titled(svg: str, titles: dict[str, str]) -> str:
    """Give each labelled group (by gid) its ``<title>``: the full name, shown on hover."""
    for gid, text in titles.items():
        svg = svg.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{escape(text)}</title>', 1)
    return svg


def _shade_rows(ax: plt.Axes, n: int) -> None:
    """Light bands on every other row: a row can be followed across panels at 60 systems."""
    for k in range(0, n, 2):
        ax.axhspan(k - 0.5, k + 0.5, color="#f2f2f2", zorder=0, lw=0)


def _height(n: int, extra: float = 1.5) -> float:
    return max(2.6, ROW_IN * n + extra)


def rank_plot(board: Leaderboard) -> str:
    """Systems sorted by pass rate: left, the pass rate with its interval; right, the simultaneous rank
    interval as a bar from its lowest to its highest rank. The top group is drawn in vermillion."""
    systems, n = board.systems, board.n_systems
    y = np.arange(n)[::-1].astype(float)
    colours = [TOP_COLOUR if s.in_top_group else REST_COLOUR for s in systems]
    fig, (left, right) = plt.subplots(1, 2, figsize=(FIGURE_WIDTH_IN, _height(n, 1.7)), sharey=True,
                                      gridspec_kw={"width_ratios": [3, 2], "wspace": 0.06})
    for ax in (left, right):
        _shade_rows(ax, n)
        ax.set_ylim(-0.6, n - 0.4)
    rates = np.array([s.pass_rate for s in systems])
    lows, highs = np.array([s.ci_low for s in systems]), np.array([s.ci_high for s in systems])
    left.hlines(y, lows, highs, colors=colours, lw=2.2, zorder=2)
    left.scatter(rates, y, c=colours, s=14, zorder=3, edgecolors="white", linewidths=0.5)
    span = (max(0.0, float(lows.min()) - 0.03), min(1.0, float(highs.max()) + 0.03))
    left.set_xlim(*span)
    left.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    left.set_xlabel(f"pass rate, {100 * board.confidence_level:g} % interval")
    left.grid(axis="x", alpha=0.3)
    titles = _system_ticks(left, board, y, "rank-label")
    ranks_low = np.array([s.rank_interval[0] for s in systems], dtype=float)
    ranks_high = np.array([s.rank_interval[1] for s in systems], dtype=float)
    right.barh(y, ranks_high - ranks_low + 0.8, left=ranks_low - 0.4, height=0.62, color=colours, alpha=0.85, zorder=2)
    right.scatter([s.position for s in systems], y, marker="|", color="black", s=30, zorder=3, linewidths=1)
    right.set_xlim(0.3, n + 0.7)
    step = max(1, int(MaxNLocator(nbins=6, steps=[1, 2, 5, 10]).tick_values(1, n)[1]))
    right.set_xticks([1, *range(step, n + 1, step)] if step > 1 else list(range(1, n + 1)))
    right.set_xlabel(f"rank interval (simultaneous, α = {board.alpha:g}); tick: position")
    right.grid(axis="x", alpha=0.3)
    right.tick_params(axis="y", length=0)
    left.legend(handles=[Patch(color=TOP_COLOUR, label=f"top group ({len(board.top_group)} of {n})"),
                         Patch(color=REST_COLOUR, label="beaten significantly by some system")],
                loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, frameon=False, fontsize=8, borderaxespad=0.2)
    return _titled(svg_text(fig), titles)


def win_grid(board: Leaderboard) -> np.ndarray:
    """Systems × systems in board order, each cell one of WIN (the row's system beats the column's
    significantly), LOSS, NOT_SIGNIFICANT, NOT_TESTED (the pair is not in the family) or SELF, as the
    board's pairs say."""
    n = board.n_systems
    index = {s.system: k for k, s in enumerate(board.systems)}
    grid = np.full((n, n), NOT_TESTED)
    np.fill_diagonal(grid, SELF)
    for pair in board.pairs:
        i, j = index[pair.a], index[pair.b]
        if not pair.significant:
            grid[i, j] = grid[j, i] = NOT_SIGNIFICANT
        else:
            winner, loser = (i, j) if pair.difference > 0 else (j, i)
            grid[winner, loser], grid[loser, winner] = WIN, LOSS
    return grid


def wins_matrix(board: Leaderboard) -> str:
    """Systems × systems in board order: a cell is blue where the row's system beats the column's
    significantly (after the family's Holm adjustment), orange where it is beaten, white where the pair is
    not significant and grey where the pair was not in the family."""
    n = board.n_systems
    grid = win_grid(board)
    side = max(3.6, 0.13 * n + 2.4)
    fig, ax = plt.subplots(figsize=(side + 1.2, side))
    ax.imshow(grid, cmap=ListedColormap(WIN_COLOURS), vmin=-0.5, vmax=len(WIN_COLOURS) - 0.5, interpolation="nearest")
    edges = np.arange(n + 1) - 0.5  # cell borders as two line collections (minor ticks cost a Tick each)
    ax.hlines(edges, -0.5, n - 0.5, color="#bfbfbf", lw=0.3)
    ax.vlines(edges, -0.5, n - 0.5, color="#bfbfbf", lw=0.3)
    titles = _system_ticks(ax, board, np.arange(n), "wins-label")
    every = 1 if n <= 80 else 5  # two-digit positions fit a cell up to about 80 systems
    ax.set_xticks(np.arange(n)[::every], [str(s.position) for s in board.systems][::every], fontsize=_font(n))
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("column: system by position", fontsize=8)
    ax.spines[["top", "right"]].set_visible(True)
    top = len(board.top_group)
    boxed = all(s.in_top_group for s in board.systems[:top])  # the top group is the first rows (the usual case)
    if boxed:
        ax.add_patch(plt.Rectangle((-0.5, -0.5), n, top, fill=False, ec=OKABE_ITO[7], lw=1.2))
    used = sorted(set(np.unique(grid).tolist()) - {SELF})
    names = {WIN: "row beats column", LOSS: "column beats row", NOT_SIGNIFICANT: "not significant",
             NOT_TESTED: "not in the family"}
    ax.legend(handles=[Patch(facecolor=WIN_COLOURS[k], edgecolor="#7f7f7f", label=names[k]) for k in used],
              loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=len(used), frameon=False, fontsize=8)
    box = "; box: the top group's rows" if boxed else ""
    ax.set_title(f"Significant wins ({board.family}, α = {board.alpha:g}){box}", fontsize=9, pad=18)
    return _titled(svg_text(fig), titles)


def difficulty_heatmap(board: Leaderboard) -> str:
    """Systems (rows, board order) × problems (columns, easiest to hardest): each cell is the system's
    share of samples solved on that problem (0/1 with one sample per problem)."""
    matrix = np.asarray(board.matrix, dtype=float)
    n, m = matrix.shape
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, _height(n, 1.4)))
    image = ax.imshow(matrix, aspect="auto", interpolation="nearest", cmap="cividis", vmin=0, vmax=1)
    titles = _system_ticks(ax, board, np.arange(n), "heat-label")
    if m <= 30:
        ax.set_xticks(np.arange(m), [short_label(p, 14) for p in board.problems], rotation=90, fontsize=6)
    else:
        step = int(MaxNLocator(nbins=6, steps=[1, 2, 5, 10]).tick_values(1, m)[1])
        shown = [1, *range(step, m + 1, step)]
        ax.set_xticks(np.array(shown) - 1, [str(k) for k in shown])
    ax.set_xlabel(f"problems, easiest → hardest by mean over systems (n = {m})")
    one_sample = all(s.samples == "1" for s in board.systems)
    bar = fig.colorbar(image, ax=ax, fraction=0.03, pad=0.01, label="" if one_sample else "share of samples solved")
    if one_sample:
        bar.set_ticks([0, 1], labels=["failed", "passed"])
    ax.set_title(f"{board.dataset}: per-problem results, systems by position", fontsize=9)
    return _titled(svg_text(fig), titles)
