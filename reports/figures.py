"""Figures as inline SVG (matplotlib, Okabe–Ito colour-blind-safe palette). Plotting only: every number
comes from ``audit``."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt
import numpy as np

OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
plt.rcParams.update({"font.size": 9, "svg.fonttype": "none", "axes.spines.top": False, "axes.spines.right": False,
                     "font.family": "sans-serif"})


def svg_text(figure: plt.Figure) -> str:
    """The SVG of ``figure`` without its XML prolog (to inline in HTML); closes the figure. The same figure gives
    the same bytes on every run: no date in its metadata, and its element ids hashed with a fixed salt instead of
    a random one (an id names the same drawing wherever it appears)."""
    buffer = io.StringIO()
    with plt.rc_context({"svg.hashsalt": "sotacheck"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and doctype: the SVG is inlined in HTML


# A study's figures share about one screen (two to a row in the report): a figure's height is capped, and its
# rows get smaller before it grows past that.
MAX_HEIGHT_IN, LABEL_WIDTH = 5.0, 30


def wrap_label(label: str, width: int = LABEL_WIDTH) -> str:
    """A long arm name on several lines (broken after ``:``, ``,`` or ``[`` where it can be)."""
    if len(label) <= width:
        return label
    spaced = label.replace(":", ": ").replace(",", ", ").replace("[", " [")
    return "\n".join(line.replace(": ", ":").replace(", ", ",").replace(" [", "[")
                     for line in textwrap.wrap(spaced, width, break_long_words=True, break_on_hyphens=True))


def _rows_height(n_rows: int, lines: int, per_line: float = 0.2, extra: float = 1.2) -> tuple[float, float]:
    """(figure height, font size) for ``n_rows`` labelled rows using ``lines`` text lines in all."""
    wanted = per_line * max(lines, n_rows) + 0.15 * n_rows + extra
    height = min(wanted, MAX_HEIGHT_IN)
    return height, max(5.0, min(9.0, 9.0 * height / wanted))


def forest_plot(labels: Sequence[str], rates: Sequence[float], lows: Sequence[float], highs: Sequence[float],
                title: str) -> str:
    return _forest(labels, rates, lows, highs, title, (0, 1), "pass@1 with 95 % CI")


def difference_forest(labels: Sequence[str], diffs: Sequence[float], lows: Sequence[float], highs: Sequence[float],
                      title: str) -> str:
    """Differences in points with their intervals, a line at zero."""
    reach = max(5.0, *(abs(v) for v in (*lows, *highs))) * 1.05
    return _forest(labels, diffs, lows, highs, title, (-reach, reach), "difference in pass@1, points, with 95 % CI",
                   zero_line=True)


def _forest(labels: Sequence[str], rates: Sequence[float], lows: Sequence[float], highs: Sequence[float],
            title: str, xlim: tuple[float, float], xlabel: str, zero_line: bool = False) -> str:
    wrapped = [wrap_label(label) for label in labels]
    height, size = _rows_height(len(labels), sum(w.count("\n") + 1 for w in wrapped))
    fig, ax = plt.subplots(figsize=(6.4, height))
    y = np.arange(len(labels))[::-1]
    rates_a = np.asarray(rates)
    ax.errorbar(rates_a, y, xerr=[rates_a - np.asarray(lows), np.asarray(highs) - rates_a], fmt="o",
                color=OKABE_ITO[0], ecolor=OKABE_ITO[0], capsize=3)
    ax.set_yticks(y, wrapped, fontsize=size)
    ax.set_xlim(*xlim)
    ax.set_xlabel(xlabel)
    if zero_line:
        ax.axvline(0, color="#555", linewidth=0.8)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return svg_text(fig)


def cost_accuracy(labels: Sequence[str], tokens: Sequence[float | None], rates: Sequence[float], title: str) -> str:
    """Tokens per problem against pass@1. Each point carries a number, and the key (number → arm) is a text
    column inside the figure, beside the axes: direct labels on a crowded plot overlap, and a legend box
    can run off the figure."""
    shown = [(label, cost, rate) for label, cost, rate in zip(labels, tokens, rates, strict=True) if cost is not None]
    key = [f"{i + 1}  {wrap_label(label, 34)}".replace("\n", "\n    ") for i, (label, _, _) in enumerate(shown)]
    key_lines = sum(entry.count("\n") + 1 for entry in key)
    height = min(max(3.6, 0.16 * key_lines + 0.8), MAX_HEIGHT_IN)
    fig, (ax, side) = plt.subplots(1, 2, figsize=(7.6, height), gridspec_kw={"width_ratios": [3, 1.45]})
    for i, (_, cost, rate) in enumerate(shown):
        ax.scatter(cost, rate, color=OKABE_ITO[i % len(OKABE_ITO)], marker="os^Dv<>p"[i % 8], s=28, zorder=3)
        ax.annotate(str(i + 1), (cost, rate), xytext=(3, 3 if i % 2 == 0 else -9), textcoords="offset points",
                    fontsize=6.5)
    logarithmic = bool(shown) and min(cost for _, cost, _ in shown) > 0
    if logarithmic:
        ax.set_xscale("log")
    ax.set_xlabel("tokens per problem (prompt + completion" + (", log scale)" if logarithmic else ")"))
    ax.set_ylabel("pass@1")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    side.axis("off")
    side.text(0.0, 1.0, "\n".join(key), va="top", ha="left", fontsize=6.5 if key_lines <= 40 else 5.5,
              transform=side.transAxes, family="monospace")
    return svg_text(fig)


def outcome_heatmap(matrix: np.ndarray, arms: Sequence[str], title: str) -> str:
    """Arms × problems; a cell is the share of repeats solved (raster inside the SVG keeps it small)."""
    wrapped = [wrap_label(arm) for arm in arms]
    height, size = _rows_height(len(arms), sum(w.count("\n") + 1 for w in wrapped), per_line=0.16)
    fig, ax = plt.subplots(figsize=(7.2, height))
    image = ax.imshow(matrix, aspect="auto", interpolation="nearest", cmap="cividis", vmin=0, vmax=1)
    ax.set_yticks(range(len(arms)), wrapped, fontsize=size)
    ax.set_xlabel(f"problem (n = {matrix.shape[1]}, in dataset order)")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.01, label="share solved")
    return svg_text(fig)


def decay_plot(x: np.ndarray, observed: np.ndarray, a: float, b: float, r2: str, title: str) -> str:
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.plot(x, observed, "o", color=OKABE_ITO[0], label="observed I(x)")
    grid = np.linspace(x.min(), x.max(), 100)
    ax.plot(grid, a * np.exp(-b * grid), "-", color=OKABE_ITO[1], label=f"fit {a:.2f}·e^(−{b:.2f}x), R² {r2}")
    ax.set_xlabel("repair attempt x")
    ax.set_ylabel("solved at x / unsolved before x")
    ax.set_title(title)
    ax.legend(frameon=False, fontsize=8)
    ax.grid(alpha=0.3)
    return svg_text(fig)


def sweep_line(values: Sequence[str], rates: Sequence[float], lows: Sequence[float], highs: Sequence[float],
               parameter: str, title: str) -> str:
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    x = np.arange(len(values))
    ax.plot(x, rates, "o-", color=OKABE_ITO[0])
    ax.fill_between(x, lows, highs, color=OKABE_ITO[0], alpha=0.2, label="95 % CI")
    ax.set_xticks(x, values)
    ax.set_xlabel(parameter)
    ax.set_ylabel("pass@1")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(frameon=False)
    return svg_text(fig)


def sweep_heatmap(grid: np.ndarray, rows: Sequence[str], cols: Sequence[str], row_name: str, col_name: str,
                  title: str) -> str:
    fig, ax = plt.subplots(figsize=(4.8, 3.6))
    image = ax.imshow(grid, cmap="cividis", vmin=0, vmax=1)
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(col_name)
    ax.set_ylabel(row_name)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.3f}", ha="center", va="center",
                        color="white" if grid[i, j] < 0.6 else "black", fontsize=8)
    ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.05, label="pass@1")
    return svg_text(fig)
