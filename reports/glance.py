"""The report's first table, its verdicts at a glance: every claim's verdict and every comparison against a
study's baseline (and every one asked for by name) with the numbers that decide it, and the data of the
forest plot beside it. Arranges what ``audit`` computed; computes nothing."""

from __future__ import annotations

from sotacheck.audit.analysis_results import AnalysisResult, Comparison
from sotacheck.audit.claims import ClaimVerdict
from sotacheck.reports.claims_text import p_text
from sotacheck.reports.html_types import GlanceRow

ALPHA = 0.05
_TONE = {"supported": "good", "contradicted": "bad"}
_ORDER = {"bad": 0, "good": 1, "neutral": 2}


def _comparison_row(c: Comparison) -> GlanceRow:
    significant = c.pvalue_adjusted < ALPHA
    verdict = ("significantly " + ("better" if c.diff > 0 else "worse")) if significant else "no significant difference"
    return GlanceRow(f"comparison, {c.study}", f"{c.a} vs {c.b} on {c.dataset} ({c.n} problems)", verdict,
                     f"{100 * c.diff:+.1f} points [{100 * c.ci_low:+.1f}, {100 * c.ci_high:+.1f}] (two-sided 95 %); "
                     f"{c.test}, Holm p = {c.pvalue_adjusted:.3g}",
                     ("good" if c.diff > 0 else "bad") if significant else "neutral")


def glance_rows(claims: list[ClaimVerdict], analysis: AnalysisResult) -> list[GlanceRow]:
    rows = [GlanceRow("claim", f"{v.paper} / {v.id}: {v.statement}", v.verdict,
                      p_text(v) or "–", _TONE.get(v.verdict, "neutral"))
            for v in claims]
    rows += [_comparison_row(c) for c in (*analysis.comparisons, *analysis.requested)]
    return sorted(rows, key=lambda row: _ORDER[row.tone])  # what decides first: contradicted, worse; supported, better


def glance_figure_data(analysis: AnalysisResult) -> tuple[list[str], list[float], list[float], list[float]] | None:
    """Labels, differences and interval ends (points) of every comparison, or None when there is none."""
    compared = [*analysis.comparisons, *analysis.requested]
    if not compared:
        return None
    return ([f"{c.a} vs {c.b} ({c.study})" for c in compared], [100 * c.diff for c in compared],
            [100 * c.ci_low for c in compared], [100 * c.ci_high for c in compared])
