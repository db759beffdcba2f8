"""Paper tables: one table object, rendered as LaTeX (booktabs), Markdown or CSV. Rendering only: the
numbers come from ``audit.analysis`` (the same ones ``sotacheck analyze --json`` prints)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Literal

from sotacheck.audit.analysis import AnalysisResult
from sotacheck.audit.fidelity import TRUNCATION_WARNING_SHARE, ArmFidelity, CallsByProblem, CellCalls, truncation_warnings

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
    """Pass@1 per arm, study by study. The best value of a study is bold only where its comparison against
    the study's baseline is significant after Holm (and the baseline is bold only where it beats every arm
    of its study significantly). A Study column appears when there is more than one study."""
    several = len(analysis.studies) > 1
    rows = []
    for study in analysis.studies:
        arms, family = analysis.in_study(study.study.id)
        comparisons = {c.a: c for c in family}
        best = max(arms, key=lambda a: a.pass_rate, default=None)
        if best is None:
            bold_best = False
        elif best.arm == study.baseline:
            bold_best = bool(family) and all(c.pvalue_adjusted < alpha and c.diff < 0 for c in family)
        else:
            c = comparisons.get(best.arm)
            bold_best = c is not None and c.pvalue_adjusted < alpha and c.diff > 0
        for arm in arms:
            comparison = comparisons.get(arm.arm)
            p = "baseline" if arm.arm == study.baseline else (f"{comparison.pvalue_adjusted:.3g}" if comparison else "–")
            tokens = (arm.prompt_tokens_per_problem or 0) + (arm.completion_tokens_per_problem or 0)
            rows.append(((Cell(study.study.id),) if several else ()) + (
                Cell(arm.arm), Cell(arm.dataset), Cell(str(arm.n)),
                Cell(_ci(arm.pass_rate, arm.ci_low, arm.ci_high, ci_style), bold=bold_best and arm is best),
                Cell(f"{arm.calls_per_problem:.1f}" if arm.calls_per_problem is not None else "–"),
                Cell(f"{tokens:.0f}" if arm.prompt_tokens_per_problem is not None else "–"), Cell(p)))
        rows += [((Cell(study.study.id),) if several else ()) + (
            Cell(u.arm), Cell(u.dataset), Cell("0"), Cell("no result"), Cell("–"), Cell("–"), Cell("–"))
            for u in analysis.unscored if u.study == study.study.id]
    n = sorted({a.n for a in analysis.arms})
    repeats = sorted({a.n_repeats for a in analysis.arms})
    tests = sorted({c.test for c in analysis.comparisons if c.family != "requested"}) or ["none"]
    against = (f"the baseline of its study ({', '.join(f'{s.study.id}: {s.baseline}' for s in analysis.studies if s.baseline)})"
               if several else str(analysis.studies[0].baseline if analysis.studies else analysis.baseline))
    caption = (f"Pass@1 (%) with 95 % CI ({'Wilson' if repeats == [1] else 'Wilson on the design-effect-adjusted n'}); "
               f"n = {', '.join(map(str, n))} problems, {', '.join(map(str, repeats))} run(s) each. p: paired test "
               f"against {against} ({'; '.join(tests)}), Holm-adjusted within each study. Bold: best, "
               f"only where its difference is significant at {alpha}.")
    if several:
        caption += " " + " ".join(f"{s.study.id}: {s.study.describe()}." for s in analysis.studies)
    columns = ("Arm", "Dataset", "n", "Pass@1 [95% CI]" if ci_style == "bracket" else "Pass@1 ± CI",
               "Calls", "Tokens", "p (Holm)")
    unscored = tuple(f"{u.arm} on {u.dataset}: {u.reason}." for u in analysis.unscored)
    return Table((("Study",) if several else ()) + columns, tuple(rows), caption,
                 align=("l" if several else "") + "llrrrrr", notes=unscored)


def comparison_table(analysis: AnalysisResult) -> Table:
    """Every paired comparison: each study's against its baseline, then those asked for by name (their
    own Holm family; one across studies says so in the Study column)."""
    labelled = len(analysis.studies) > 1 or bool(analysis.requested)
    rows = tuple(((Cell(c.study),) if labelled else ()) + (
        Cell(c.a), Cell(c.b), Cell(c.dataset), Cell(str(c.n)), Cell(f"{100 * c.diff:+.1f}"),
        Cell(f"[{100 * c.ci_low:+.1f}, {100 * c.ci_high:+.1f}]"), Cell(str(c.b_count)), Cell(str(c.c_count)),
        Cell(f"{c.pvalue:.3g}"), Cell("–" if c.midp is None else f"{c.midp:.3g}"),
        Cell(f"{c.pvalue_adjusted:.3g}", bold=c.pvalue_adjusted < 0.05))
        for c in analysis.comparisons)
    caption = ("Paired comparisons against each study's baseline: difference in pass@1 (pp) with its paired bootstrap "
               "95 % CI, problems won (b) and lost (c), exact p (McNemar for one run, sign-flip permutation over "
               "repeats), mid-p, and p Holm-adjusted within the study.")
    if analysis.requested:
        caption += (" Rows asked for by name are one Holm family of their own; a Study entry 'S1 vs S3' is a "
                    "comparison across studies (different model, sampling, problems or judge).")
    columns = ("Arm", "Baseline", "Dataset", "n", "Diff (pp)", "95% CI", "b", "c", "p", "mid-p", "p (Holm)")
    not_made = tuple(f"{n.describe()}." for n in analysis.not_compared)
    return Table((("Study",) if labelled else ()) + columns, rows, caption, label="tab:sotacheck-paired",
                 align=("l" if labelled else "") + "lllrrlrrrrr", notes=not_made)


def _number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def fidelity_table(rows: list[ArmFidelity]) -> Table:
    """Per arm: calls and tokens per problem and the replies the token limit cut, overall and by stage (the
    report's fidelity section as a table); a Run column when the arms come from several runs."""
    several = len({row.run for row in rows}) > 1
    body = []
    for row in rows:
        spread = "–" if row.calls_min is None else f"{row.calls_min}–{row.calls_max}"
        frequent = ", ".join(f"{calls} ({cells})" for calls, cells in row.calls_counts[:3]) or "–"
        share = row.truncation_share
        cut = "not recorded" if share is None else f"{100 * share:.1f} % ({row.cut} of {row.calls_recorded})"
        stages = ", ".join(f"{s.stage} {s.cut}/{s.calls}" for s in row.by_stage) or "–"
        body.append(((Cell(row.run),) if several else ()) + (
            Cell(row.arm), Cell(row.dataset), Cell(str(row.cells)), Cell(_number(row.calls_mean, 2)),
            Cell(_number(row.calls_median)), Cell(spread), Cell(frequent), Cell(_number(row.prompt_tokens_mean, 0)),
            Cell(_number(row.completion_tokens_mean, 0)), Cell(cut, bold=row.warning is not None), Cell(stages)))
    caption = ("Calls and tokens per problem (mean, median, range; the most frequent call counts with their number of "
               "cells) and the replies the token limit cut (finish_reason length), overall and by stage; bold: more "
               f"than {100 * TRUNCATION_WARNING_SHARE:g} % cut. Imported logs record no finish reasons.")
    warnings = truncation_warnings(rows)
    columns = ("Arm", "Dataset", "Cells", "Calls (mean)", "Median", "Range", "Most frequent", "Prompt tok.",
               "Completion tok.", "Cut", "Cut by stage")
    return Table((("Run",) if several else ()) + columns, tuple(body), caption, label="tab:sotacheck-fidelity",
                 align=("l" if several else "") + "llrrrrlrrll", notes=tuple(warnings))


def _cell_calls(cell: CellCalls | None) -> str:
    if cell is None:
        return "–"
    text = f"{'?' if cell.calls is None else cell.calls} {cell.status}"
    return text + (f", {cell.cut} cut" if cell.cut else "")


def calls_by_problem_table(view: CallsByProblem) -> Table:
    """One row per problem (and repeat, where there are several), one column per arm: the cell's calls and
    status, and how many of its replies the token limit cut."""
    runs = {run for run, _, _ in view.columns}
    datasets = {dataset for _, _, dataset in view.columns}
    labels = tuple((f"{run}: " if len(runs) > 1 else "") + arm + (f" ({dataset})" if len(datasets) > 1 else "")
                   for run, arm, dataset in view.columns)
    repeats = any(row.repeat for row in view.rows)
    body = tuple((Cell(row.problem),) + ((Cell(str(row.repeat)),) if repeats else ())
                 + tuple(Cell(_cell_calls(cell)) for cell in row.cells) for row in view.rows)
    caption = ("Model calls per problem and the cell's status, arm by arm; 'k cut': k of the cell's replies were "
               "stopped by the token limit (finish_reason length); –: not run.")
    return Table(("Problem",) + (("Repeat",) if repeats else ()) + labels, body, caption,
                 label="tab:sotacheck-calls", align="l" + ("r" if repeats else "") + "r" * len(labels))


_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  # symbols pdflatex's default input encoding does not know
                  "±": r"$\pm$", "–": "--", "−": "$-$", "α": r"$\alpha$", "≈": r"$\approx$", "×": r"$\times$"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def to_latex(table: Table) -> str:
    align = table.align or "l" * len(table.columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(_latex_escape(c) for c in table.columns) + r" \\", r"\midrule"]
    for row in table.rows:
        cells = [rf"\textbf{{{_latex_escape(c.text)}}}" if c.bold else _latex_escape(c.text) for c in row]
        lines.append(" & ".join(cells) + r" \\")
    caption = " ".join((table.caption, *table.notes))
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{_latex_escape(caption)}}}",
              rf"\label{{{table.label}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_markdown(table: Table) -> str:
    def esc(text: str) -> str:
        return text.replace("|", r"\|")

    lines = ["| " + " | ".join(esc(c) for c in table.columns) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in (table.align or "l" * len(table.columns))) + "|"]
    for row in table.rows:
        lines.append("| " + " | ".join(f"**{esc(c.text)}**" if c.bold else esc(c.text) for c in row) + " |")
    notes = "".join(f"\n> {note}\n" for note in table.notes)
    return "\n".join(lines) + f"\n\n{table.caption}\n" + notes


def to_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow([c.text for c in row])
    return buffer.getvalue()


RENDERERS = {"latex": to_latex, "markdown": to_markdown, "csv": to_csv}
