"""Paper tables: one table object, rendered as LaTeX (booktabs), Markdown or CSV. Rendering only: the
numbers come from ``audit.analysis`` (the same ones ``sotacheck analyze --json`` prints)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Literal

from sotacheck.audit.analysis import AnalysisResult

CIStyle = Literal["bracket", "pm"]


@dataclass(frozen=True)
class Cell:
    text: str
    bold: bool = False


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str
    label: str = "tab:sotacheck"
    align: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _ci(rate: float, low: float, high: float, style: CIStyle) -> str:
    if style == "pm":
        return f"{_pct(rate)} ± {100 * max(rate - low, high - rate):.1f}"
    return f"{_pct(rate)} [{_pct(low)}, {_pct(high)}]"


def pass_rate_table(analysis: AnalysisResult, ci_style: CIStyle = "bracket", alpha: float = 0.05) -> Table:
    """Pass@1 per arm and dataset. The best value is bold only where its comparison against the baseline
    is significant after Holm (and the baseline is bold only where it beats every arm significantly)."""
    comparisons = {(c.a, c.dataset): c for c in analysis.comparisons}
    rows = []
    datasets = list(dict.fromkeys(a.dataset for a in analysis.arms))
    for dataset in datasets:
        arms = [a for a in analysis.arms if a.dataset == dataset]
        best = max(arms, key=lambda a: a.pass_rate)
        others = [comparisons[(a.arm, dataset)] for a in arms if (a.arm, dataset) in comparisons]
        if best.arm == analysis.baseline:
            bold_best = bool(others) and all(c.pvalue_holm < alpha and c.diff < 0 for c in others)
        else:
            c = comparisons.get((best.arm, dataset))
            bold_best = c is not None and c.pvalue_holm < alpha and c.diff > 0
        for arm in arms:
            comparison = comparisons.get((arm.arm, dataset))
            p = "baseline" if arm.arm == analysis.baseline else (
                f"{comparison.pvalue_holm:.3g}" if comparison else "–")
            tokens = (arm.prompt_tokens_per_problem or 0) + (arm.completion_tokens_per_problem or 0)
            rows.append((Cell(arm.arm), Cell(dataset), Cell(str(arm.n)),
                         Cell(_ci(arm.pass_rate, arm.ci_low, arm.ci_high, ci_style), bold=bold_best and arm is best),
                         Cell(f"{arm.calls_per_problem:.1f}" if arm.calls_per_problem is not None else "–"),
                         Cell(f"{tokens:.0f}" if arm.prompt_tokens_per_problem is not None else "–"), Cell(p)))
    n = sorted({a.n for a in analysis.arms})
    repeats = sorted({a.n_repeats for a in analysis.arms})
    tests = sorted({c.test for c in analysis.comparisons}) or ["none"]
    caption = (f"Pass@1 (%) with 95 % CI ({'Wilson' if repeats == [1] else 'Wilson on the design-effect-adjusted n'}); "
               f"n = {', '.join(map(str, n))} problems, {', '.join(map(str, repeats))} run(s) each. p: paired test "
               f"against {analysis.baseline} ({'; '.join(tests)}), Holm-adjusted across the table. Bold: best, "
               f"only where its difference is significant at {alpha}.")
    return Table(("Arm", "Dataset", "n", "Pass@1 [95% CI]" if ci_style == "bracket" else "Pass@1 ± CI",
                  "Calls", "Tokens", "p (Holm)"), tuple(rows), caption, align="llrrrrr")


def comparison_table(analysis: AnalysisResult) -> Table:
    rows = tuple((Cell(c.a), Cell(c.b), Cell(c.dataset), Cell(str(c.n)), Cell(f"{100 * c.diff:+.1f}"),
                  Cell(f"[{100 * c.ci_low:+.1f}, {100 * c.ci_high:+.1f}]"), Cell(str(c.b_count)), Cell(str(c.c_count)),
                  Cell(f"{c.pvalue:.3g}"), Cell("–" if c.midp is None else f"{c.midp:.3g}"),
                  Cell(f"{c.pvalue_holm:.3g}", bold=c.pvalue_holm < 0.05))
                 for c in analysis.comparisons)
    caption = ("Paired comparisons against the baseline: difference in pass@1 (pp) with its paired bootstrap 95 % "
               "CI, problems won (b) and lost (c), exact p (McNemar for one run, sign-flip permutation over "
               "repeats), mid-p, and Holm-adjusted p.")
    return Table(("Arm", "Baseline", "Dataset", "n", "Diff (pp)", "95% CI", "b", "c", "p", "mid-p", "p (Holm)"),
                 rows, caption, label="tab:sotacheck-paired", align="lllrrlrrrrr")


_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex_escape(text: str) -> str:
    out = "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)
    return out.replace("±", r"$\pm$").replace("–", "--")


def to_latex(table: Table) -> str:
    align = table.align or "l" * len(table.columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(_latex_escape(c) for c in table.columns) + r" \\", r"\midrule"]
    for row in table.rows:
        cells = [rf"\textbf{{{_latex_escape(c.text)}}}" if c.bold else _latex_escape(c.text) for c in row]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{_latex_escape(table.caption)}}}",
              rf"\label{{{table.label}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_markdown(table: Table) -> str:
    def esc(text: str) -> str:
        return text.replace("|", r"\|")

    lines = ["| " + " | ".join(esc(c) for c in table.columns) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in (table.align or "l" * len(table.columns))) + "|"]
    for row in table.rows:
        lines.append("| " + " | ".join(f"**{esc(c.text)}**" if c.bold else esc(c.text) for c in row) + " |")
    return "\n".join(lines) + f"\n\n{table.caption}\n"


def to_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow([c.text for c in row])
    return buffer.getvalue()


RENDERERS = {"latex": to_latex, "markdown": to_markdown, "csv": to_csv}
