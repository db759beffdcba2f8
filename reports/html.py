"""The self-contained HTML audit report: one file, figures inlined as SVG, no CDN, fonts or scripts.

The statistics come from ``audit`` (analysis, sweeps, decay, claims); this module arranges them and draws
them. The file is written atomically: a failure leaves no half-written report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from jinja2 import Environment, FileSystemLoader, select_autoescape

from sotacheck.audit.analysis import AnalysisResult, StudyResult, study_findings
from sotacheck.audit.analysis_results import ArmDecay
from sotacheck.audit.claims import ClaimVerdict
from sotacheck.audit.decay import PAPER_MAX_ATTEMPTS, DecayResult
from sotacheck.audit.fidelity import TRUNCATION_WARNING_SHARE, ArmFidelity
from sotacheck.audit.report_inputs import OutcomeShares, ReportInputs, SweepFinding
from sotacheck.audit.sweeps import SweepResult, setting_sort_key
from sotacheck.core.rundir import Run
from sotacheck.reports import figures
from sotacheck.reports.claims_text import p_text
from sotacheck.reports.files import write_atomically
from sotacheck.reports.glance import glance_figure_data, glance_rows
from sotacheck.reports.html_types import Figure, GlanceRow
from sotacheck.reports.tables import comparison_table, pass_rate_table, to_markdown

TEMPLATES = Path(__file__).with_name("templates")


@dataclass
class StudySection:
    """One study's part of the report: its conditions, what it found, its tables and figures."""

    result: StudyResult
    findings: str
    analysis: AnalysisResult
    pass_table_html: str
    comparison_table_html: str
    figures: list[Figure] = field(default_factory=list)
    figures_left_out: list[str] = field(default_factory=list)


@dataclass
class ReportModel:
    title: str
    generated: str
    summary: list[str]
    claims: list[ClaimVerdict]
    claim_counts: dict[str, int]
    analysis: AnalysisResult
    studies: list[StudySection]
    requested_table_html: str | None
    sweeps: list[tuple[SweepResult, Figure | None]] = field(default_factory=list)
    decays: list[tuple[ArmDecay, Figure | None]] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    fidelity: list[ArmFidelity] = field(default_factory=list)
    fidelity_warnings: list[str] = field(default_factory=list)
    glance: list[GlanceRow] = field(default_factory=list)
    glance_figure: Figure | None = None
    leaderboards: list[str] = field(default_factory=list)  # rendered leaderboard sections (HTML fragments)
    leaderboard_style: str = ""


def _table_html(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def _sweep_figure(found: SweepFinding) -> Figure | None:
    """A sweep's line (one parameter) or heat map (two), from the rows the audit computed."""
    result, pipeline, dataset = found.result, found.pipeline, found.dataset
    if result.rows and len(result.parameters) == 1:
        name = result.parameters[0]
        rows = list(result.rows)
        return Figure(f"{pipeline}: pass@1 against {name} on {dataset}",
                      f"Line of pass@1 with 95 % CI band for each {name} value of {pipeline}",
                      figures.sweep_line([r.setting[name] for r in rows], [r.pass_rate for r in rows],
                                         [r.ci_low for r in rows], [r.ci_high for r in rows], name,
                                         f"{pipeline} sweep over {name} ({dataset})"))
    if result.rows and len(result.parameters) == 2:
        p1, p2 = result.parameters
        v1 = sorted({r.setting[p1] for r in result.rows}, key=setting_sort_key)
        v2 = sorted({r.setting[p2] for r in result.rows}, key=setting_sort_key)
        grid = np.full((len(v1), len(v2)), np.nan)
        for r in result.rows:  # laid out on the grid, not computed: each cell is one row's pass rate
            grid[v1.index(r.setting[p1]), v2.index(r.setting[p2])] = r.pass_rate
        return Figure(f"{pipeline}: pass@1 over {p1} × {p2} on {dataset}",
                      f"Annotated heat map of pass@1 for each {p1} and {p2} of {pipeline}",
                      figures.sweep_heatmap(grid, v1, v2, p1, p2, f"{pipeline} {p1}×{p2} ({dataset})"))
    return None


def _decay_figure(decay: ArmDecay) -> Figure | None:
    """The figure of one decay fit the analysis made: its points, its curve, and the R² interval it carries."""
    result: DecayResult | None = decay.result
    if result is None:
        return None
    arm = decay.arm
    return Figure(f"Debug decay of {arm} on {decay.dataset}",
                  f"Observed per-attempt effectiveness of {arm} with the fitted exponential curve",
                  figures.decay_plot(result.fitted_attempts, decay.observed, result.fit.a, result.fit.b,
                                     decay.r_squared_text, f"{arm}: I(x) and a·e^(−b·x)"))


def _tool_version(run: Run) -> str:
    """The version of the tool that wrote an imported log, where the log records it."""
    extra = run.manifest.model_extra or {}
    found = sorted({str(log.get("lm_eval_version")) for log in (extra.get("lm_eval") or {}).values()
                    if isinstance(log, dict) and log.get("lm_eval_version")})
    if found:
        return "lm-evaluation-harness " + ", ".join(found)
    found = sorted({str(((log.get("eval") or {}).get("packages") or {}).get("inspect_ai"))
                    for log in (extra.get("inspect") or {}).values() if isinstance(log, dict)} - {"None"})
    if found:
        return "Inspect AI " + ", ".join(found)
    dates = sorted({str(f["evalplus_date"]) for f in run.manifest.files if f.get("evalplus_date")})
    return f"EvalPlus (results dated {', '.join(dates)})" if dates else "not recorded in the source's files"


def _provenance(run: Run) -> dict[str, Any]:
    manifest = run.manifest
    spec = manifest.spec or {}
    dataset = manifest.dataset
    files = manifest.files
    leakage = manifest.leakage_check
    imported = bool(files) and not spec
    return {
        "run": run.name, "imported": imported,
        "source": (f"{manifest.source} logs, written by {_tool_version(run)}" if imported else manifest.source),
        "files": [f"{Path(f['file']).name} (SHA-256 {f['sha256'][:16]}…)" for f in files] if imported else [],
        "sotacheck": f"imported with {manifest.sotacheck_version}" if imported else manifest.sotacheck_version,
        "git_revision": "the source's, not sotacheck's: see its files" if imported
        else (manifest.git_revision or "not recorded")[:12],
        "model": manifest.model_identity.label() if manifest.model_identity else
        (", ".join(sorted({str(f["model"]) for f in files if f.get("model")})) + " (named by the source's files)"
         if any(f.get("model") for f in files) else "not recorded (imported logs)"),
        "seed": spec.get("seed", "not recorded"),
        "dataset": (dataset.name if dataset else None) or ", ".join(sorted({f.get("dataset", "") for f in files}))
        or "unknown",
        "dataset_hash": (dataset.content_hash if dataset else None) or ("see its files" if files else "not recorded"),
        "harness": ", ".join(f"{k}={spec[k]}" for k in ("temperature", "max_tokens", "repeats", "limit",
                                                        "test_timeout_s", "request_timeout_s") if k in spec) or "–",
        "leakage": (("clean" if leakage["clean"] else "LEAKS FOUND") + f" ({leakage['requests_checked']} requests checked)")
        if leakage else "not applicable (no prompts recorded)",
    }


def _study_section(result: AnalysisResult, study: StudyResult, shares: OutcomeShares | None) -> StudySection:
    """Tables and figures of one study: forest plot, cost against accuracy, per-problem heat map."""
    part = result.for_study(study.study.id)
    arms = list(part.arms)
    names = [a.arm for a in arms]
    dataset, sid = study.study.dataset, study.study.id
    section = StudySection(study, study_findings(result, study), part, _table_html(to_markdown(pass_rate_table(part))),
                           _table_html(to_markdown(comparison_table(part))) if part.comparisons else "")
    if not arms:
        return section
    unscored = [f"{u.arm} (no complete result: {u.cause})" for u in result.unscored if u.study == sid]
    section.figures.append(Figure(f"{sid}: pass@1 per arm on {dataset}", f"Forest plot of pass@1 with 95 % CIs for "
                                  f"the {len(arms)} arms of study {sid}",
                                  figures.forest_plot(names, [a.pass_rate for a in arms], [a.ci_low for a in arms],
                                                      [a.ci_high for a in arms], f"{sid}: {dataset}"),
                                  _left_out(unscored)))
    tokens = [None if a.prompt_tokens_per_problem is None else
              a.prompt_tokens_per_problem + (a.completion_tokens_per_problem or 0) for a in arms]
    without_tokens = [f"{name} (no token counts recorded)" for name, t in zip(names, tokens, strict=True) if t is None]
    if any(t is not None for t in tokens):
        section.figures.append(Figure(f"{sid}: cost and accuracy", f"Scatter of tokens per problem against pass@1, "
                                      f"each point numbered, with the key of arms beside the plot, study {sid}",
                                      figures.cost_accuracy(names, tokens, [a.pass_rate for a in arms],
                                                            f"{sid}: {dataset}"),
                                      _left_out(without_tokens + unscored)))
    elif tokens:
        section.figures_left_out.append(f"No cost-and-accuracy figure: no arm of {sid} records its token counts.")
    if shares is not None:
        section.figures.append(Figure(f"{sid}: per-problem outcomes", f"Heat map of the share of repeats solved, "
                                      f"{len(shares.arms)} arms by {len(shares.problems)} problems, study {sid}",
                                      figures.outcome_heatmap(shares.shares, list(shares.arms),
                                                              f"{sid}: per-problem outcomes"),
                                      _left_out(unscored)))
    return section


def _left_out(arms: list[str]) -> str:
    return f"Left out: {'; '.join(arms)}." if arms else ""


def build_model(inputs: ReportInputs) -> ReportModel:
    """What the report shows: the numbers of ``inputs`` (:func:`sotacheck.audit.report_inputs.report_inputs`)
    laid out as text, tables and figures; its runs give only their provenance."""
    analysis, claims = inputs.analysis, list(inputs.claims)
    counts: dict[str, int] = {verdict: n for verdict, n in Counter(v.verdict for v in claims).items()}
    missing = []
    if len(analysis.studies) > 1:
        missing.append(f"The runs form {len(analysis.studies)} studies (arms measured on the same problems with the "
                       f"same model, endpoint, sampling and judge): each is analysed on its own, with its own "
                       f"baseline and Holm family; no comparison crosses two unless it is asked for by name "
                       f"(--compare), and then it says so.")
    summary = []
    if claims:
        summary.append(", ".join(f"{n} {verdict}" for verdict, n in Counter(v.verdict for v in claims).most_common())
                       + f" among {len(claims)} claims.")
    studies = [_study_section(analysis, study, inputs.outcome_shares.get(study.study.id))
               for study in analysis.studies]
    compared = [c for section in studies for c in section.analysis.comparisons]
    summary.append(f"{len(studies)} stud{'y' if len(studies) == 1 else 'ies'}, "
                   f"{sum(len(s.analysis.arms) for s in studies)} arms with a pass rate; "
                   f"{sum(c.pvalue_adjusted < 0.05 for c in compared)} of {len(compared)} comparisons against a baseline "
                   "differ significantly after Holm.")
    requested = None
    refused = tuple(n for n in analysis.not_compared if n.asked_for)
    if analysis.requested:
        part = AnalysisResult((), tuple(analysis.requested), analysis.baseline, (), analysis.studies,
                              not_compared=refused)
        requested = _table_html(to_markdown(comparison_table(part)))
        summary.append(f"{len(analysis.requested)} comparison(s) asked for by name, "
                       f"{sum(' vs ' in c.study for c in analysis.requested)} of them across studies.")
    summary += [f"Asked for by name, {n.describe()}." for n in refused]
    model = ReportModel("sotacheck audit report", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), summary, claims,
                        counts, analysis, studies, requested, missing=missing)
    model.sweeps = [(found.result, _sweep_figure(found)) for found in inputs.sweeps]
    model.decays = [(decay, _decay_figure(decay)) for decay in analysis.decays]
    model.provenance = [_provenance(run) for run in inputs.runs]
    model.fidelity = list(inputs.fidelity)
    model.fidelity_warnings = list(inputs.fidelity_warnings)
    if model.fidelity_warnings:
        model.summary.append(f"{len(model.fidelity_warnings)} arm(s) ran with more than "
                             f"{100 * TRUNCATION_WARNING_SHARE:g} % of their replies cut by the token limit "
                             "(Fidelity, below).")
    model.glance = glance_rows(claims, analysis)
    model.glance_figure = _glance_figure(analysis)
    boards = inputs.leaderboards
    if boards:
        from sotacheck.reports.leaderboard_html import leaderboard_section, leaderboard_style
        from sotacheck.reports.leaderboard_text import headline

        model.leaderboards = [leaderboard_section(board) for board in boards]
        model.leaderboard_style = leaderboard_style()
        model.summary += [f"Leaderboard {board.dataset}: {headline(board)}" for board in boards]
    return model


def _glance_figure(analysis: AnalysisResult) -> Figure | None:
    data = glance_figure_data(analysis)
    if data is None:
        return None
    labels, diffs, lows, highs = data
    return Figure("Every comparison against its study's baseline", "Forest plot of the difference in pass@1, in "
                  "points, with its two-sided 95 % paired bootstrap interval, one row per comparison",
                  figures.difference_forest(labels, diffs, lows, highs, "Difference from the baseline (points)"))


def render(model: ReportModel) -> str:
    environment = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]))
    environment.filters["p_text"] = p_text
    return environment.get_template("report.html.j2").render(m=model, paper_max_attempts=PAPER_MAX_ATTEMPTS,
                                                             truncation_threshold=TRUNCATION_WARNING_SHARE)


def write_report(inputs: ReportInputs, output: Path) -> Path:
    """Render the report of what the audit computed of some runs (``inputs``: the analysis, claim verdicts,
    sweeps, fidelity, leaderboards and the runs' provenance, :func:`sotacheck.audit.report_inputs.report_inputs`)
    to ``output``, atomically."""
    return write_atomically(output, render(build_model(inputs)))
