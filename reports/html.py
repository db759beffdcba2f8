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

from sotacheck.audit.analysis import AnalysisResult, analyze, combine_runs, outcome_matrix, paper_defaults
from sotacheck.audit.claims import ClaimVerdict, audit_claims
from sotacheck.audit.decay import PAPER_MAX_ATTEMPTS, DecayResult, fit_decay
from sotacheck.audit.sweeps import SweepResult, arm_family, decay_arms, find_sweeps, setting_sort_key
from sotacheck.core.rundir import OutcomeError, Run
from sotacheck.reports import figures
from sotacheck.reports.files import write_atomically
from sotacheck.reports.tables import comparison_table, pass_rate_table, to_markdown

TEMPLATES = Path(__file__).with_name("templates")


@dataclass
class Figure:
    title: str
    alt: str
    svg: str


@dataclass
class ReportModel:
    title: str
    generated: str
    summary: list[str]
    claims: list[ClaimVerdict]
    claim_counts: dict[str, int]
    analysis: AnalysisResult
    pass_table_html: str
    comparison_table_html: str
    figures: list[Figure] = field(default_factory=list)
    sweeps: list[tuple[SweepResult, Figure | None]] = field(default_factory=list)
    decays: list[tuple[str, DecayResult | None, str, Figure | None]] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _table_html(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def _sweeps(table: Any, dataset: str, defaults: dict[str, dict[str, Any]]) -> list[tuple[SweepResult, Figure | None]]:
    out = []
    for result in find_sweeps(table, dataset, defaults):
        pipeline = arm_family(table, result.default_arm)
        figure = None
        if len(result.parameters) == 1:
            name = result.parameters[0]
            rows = list(result.rows)
            figure = Figure(f"{pipeline}: pass@1 against {name} on {dataset}",
                            f"Line of pass@1 with 95 % CI band for each {name} value of {pipeline}",
                            figures.sweep_line([r.setting[name] for r in rows], [r.pass_rate for r in rows],
                                               [r.ci_low for r in rows], [r.ci_high for r in rows], name,
                                               f"{pipeline} sweep over {name} ({dataset})"))
        elif len(result.parameters) == 2:
            p1, p2 = result.parameters
            v1 = sorted({r.setting[p1] for r in result.rows}, key=setting_sort_key)
            v2 = sorted({r.setting[p2] for r in result.rows}, key=setting_sort_key)
            grid = np.full((len(v1), len(v2)), np.nan)
            for r in result.rows:
                grid[v1.index(r.setting[p1]), v2.index(r.setting[p2])] = r.pass_rate
            figure = Figure(f"{pipeline}: pass@1 over {p1} × {p2} on {dataset}",
                            f"Annotated heat map of pass@1 for each {p1} and {p2} of {pipeline}",
                            figures.sweep_heatmap(grid, v1, v2, p1, p2, f"{pipeline} {p1}×{p2} ({dataset})"))
        out.append((result, figure))
    return out


def _decays(table: Any, dataset: str) -> list[tuple[str, DecayResult | None, str, Figure | None]]:
    out: list[tuple[str, DecayResult | None, str, Figure | None]] = []
    for max_attempts, arm in decay_arms(table, dataset):
        arm_cells = table[(table["arm"] == arm) & (table["dataset"] == dataset) & (table["status"] != "error")]
        first = arm_cells["first_pass_attempt"].astype("float").fillna(-1).to_numpy()
        try:
            result = fit_decay(first, max_attempts, n_resamples=1000, rng=0)
        except ValueError as exc:
            out.append((arm, None, f"No decay fit for {arm}: {exc}.", None))
            continue
        ci = result.confidence_interval("r_squared")
        r2 = f"{result.fit.r_squared:.3f} [{ci.low:.3f}, {ci.high:.3f}]"
        fig = Figure(f"Debug decay of {arm} on {dataset}",
                     f"Observed per-attempt effectiveness of {arm} with the fitted exponential curve",
                     figures.decay_plot(result.fitted_attempts, result.curve.effectiveness[result.curve.unsolved_before > 0],
                                        result.fit.a, result.fit.b, r2, f"{arm}: I(x) and a·e^(−b·x)"))
        out.append((arm, result, r2, fig))
    return out


def _provenance(run: Run) -> dict[str, Any]:
    manifest = run.manifest
    spec = manifest.spec or {}
    dataset = manifest.dataset
    files = manifest.files
    leakage = manifest.leakage_check
    return {
        "run": run.name, "source": manifest.source, "sotacheck": manifest.sotacheck_version,
        "git_revision": manifest.git_revision or "not recorded",
        "model": manifest.model_identity.label() if manifest.model_identity else "not recorded (imported logs)",
        "seed": spec.get("seed", "not recorded"),
        "dataset": (dataset.name if dataset else None) or ", ".join(sorted({f.get("dataset", "") for f in files}))
        or "unknown",
        "dataset_hash": (dataset.content_hash if dataset else None)
        or "; ".join(f"{Path(f['file']).name}: {f['sha256'][:16]}" for f in files) or "not recorded",
        "harness": ", ".join(f"{k}={spec[k]}" for k in ("temperature", "max_tokens", "repeats", "limit",
                                                        "test_timeout_s", "request_timeout_s") if k in spec) or "–",
        "leakage": (("clean" if leakage["clean"] else "LEAKS FOUND") + f" ({leakage['requests_checked']} requests checked)")
        if leakage else "not applicable (no prompts recorded)",
    }


def build_model(runs: list[Run], claims_files: list[Path], baseline: str | None = None,
                dataset_sizes: dict[str, int] | None = None) -> ReportModel:
    if not runs:
        raise OutcomeError("no runs given")
    analysis = analyze(runs, baseline)
    table = combine_runs(runs)
    defaults = paper_defaults(runs)
    claims = audit_claims(claims_files, runs, dataset_sizes) if claims_files else []
    counts: dict[str, int] = {verdict: n for verdict, n in Counter(v.verdict for v in claims).items()}
    missing = []
    if not claims_files:
        missing.append("No claims registry given (--claims): the claim verdicts are not in this report.")
    datasets = list(dict.fromkeys(table["dataset"]))
    if len(datasets) > 1:
        missing.append(f"The runs cover several datasets ({', '.join(datasets)}): each comparison stays within "
                       f"one dataset; arms absent from a dataset are not compared there.")
    summary = []
    if claims:
        summary.append(", ".join(f"{n} {verdict}" for verdict, n in Counter(v.verdict for v in claims).most_common())
                       + f" among {len(claims)} claims.")
        for v in [c for c in claims if c.verdict in ("contradicted", "not significant")][:6]:
            summary.append(f"{v.id} — {v.verdict}: {v.reason}")
    for dataset in datasets:
        arms = [a for a in analysis.arms if a.dataset == dataset]
        best = max(arms, key=lambda a: a.pass_rate)
        summary.append(f"{dataset}: best arm {best.arm} at {100 * best.pass_rate:.1f} % "
                       f"[{100 * best.ci_low:.1f}, {100 * best.ci_high:.1f}] over {best.n} problems.")
    significant = [c for c in analysis.comparisons if c.pvalue_holm < 0.05]
    summary.append(f"{len(significant)} of {len(analysis.comparisons)} comparisons against {analysis.baseline} are "
                   f"significant after Holm." if analysis.comparisons else "No paired comparisons (a single arm).")
    model = ReportModel("sotacheck audit report", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), summary, claims,
                        counts, analysis, _table_html(to_markdown(pass_rate_table(analysis))),
                        _table_html(to_markdown(comparison_table(analysis))), missing=missing)
    for dataset in datasets:
        arms = [a for a in analysis.arms if a.dataset == dataset]
        names = [a.arm for a in arms]
        model.figures.append(Figure(f"Pass@1 per arm on {dataset}", f"Forest plot of pass@1 with 95 % CIs for "
                                    f"{len(arms)} arms on {dataset}",
                                    figures.forest_plot(names, [a.pass_rate for a in arms], [a.ci_low for a in arms],
                                                        [a.ci_high for a in arms], f"{dataset}")))
        tokens = [None if a.prompt_tokens_per_problem is None else
                  a.prompt_tokens_per_problem + (a.completion_tokens_per_problem or 0) for a in arms]
        if any(t is not None for t in tokens):
            model.figures.append(Figure(f"Cost and accuracy on {dataset}", f"Scatter of tokens per problem against "
                                        f"pass@1 for each arm on {dataset}",
                                        figures.cost_accuracy(names, tokens, [a.pass_rate for a in arms], dataset)))
        problems = list(dict.fromkeys(table.loc[table["dataset"] == dataset, "problem"]))
        matrix = np.vstack([outcome_matrix(table, arm, dataset).mean(axis=1).reindex(problems).to_numpy()
                            for arm in names])
        model.figures.append(Figure(f"Per-problem outcomes on {dataset}", f"Heat map of the share of repeats "
                                    f"solved, {len(names)} arms by {len(problems)} problems on {dataset}",
                                    figures.outcome_heatmap(matrix, names, f"{dataset}: per-problem outcomes")))
        model.sweeps.extend(_sweeps(table, dataset, defaults))
        model.decays.extend(_decays(table, dataset))
    model.provenance = [_provenance(run) for run in runs]
    return model


def render(model: ReportModel) -> str:
    environment = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]))
    return environment.get_template("report.html.j2").render(m=model, paper_max_attempts=PAPER_MAX_ATTEMPTS)


def write_report(runs: list[Run], claims_files: list[Path], output: Path, baseline: str | None = None,
                 dataset_sizes: dict[str, int] | None = None) -> Path:
    return write_atomically(output, render(build_model(runs, claims_files, baseline, dataset_sizes)))
