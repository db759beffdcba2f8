"""The report's first screen: the verdicts at a glance (claims and comparisons with their decisive numbers,
and a forest plot of every comparison) before any section; each study's finding said once; no claims
warning when no claims were asked for; every arm a figure leaves out named with the reason; an imported
log's counts and provenance its own; readable at 60 arms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sotacheck import api
from sotacheck.audit.report_inputs import report_inputs
from sotacheck.core.rundir import Run, normalise
from sotacheck.reports.html import build_model, render

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "data/published/mapcoder/ChatGPT/HumanEval"


@pytest.fixture(scope="module")
def mapcoder(tmp_path_factory) -> Run:
    run, _ = api.import_logs("mapcoder", path=PUBLISHED, out=tmp_path_factory.mktemp("runs") / "mapcoder-he")
    return run


def test_the_first_section_is_the_verdicts_at_a_glance(mapcoder) -> None:
    model = build_model(report_inputs([mapcoder], [REPO / "data/claims/mapcoder.yaml"], baseline="CoT"))
    html = render(model)
    first = html.index("<section")
    assert html.index('id="glance"') < html.index("<section", first + 1)
    glance = html[html.index('id="glance"'):html.index("</section>", first)]
    assert "mapcoder-beats-cot-he-chatgpt" in glance and "supported" in glance
    assert "MapCoder-5-5 vs CoT on humaneval (164 problems)" in glance and "significantly better" in glance
    assert "+11.6 points [" in glance and "(two-sided 95 %)" in glance and "Holm p = " in glance
    assert "Forest plot of the difference in pass@1" in glance
    finding = model.studies[0].findings
    assert html.count(finding) == 1  # in its study's box, not again in a summary


def test_no_claims_warning_when_no_claims_were_asked_for(mapcoder) -> None:
    html = render(build_model(report_inputs([mapcoder])))
    assert "No claims registry given" not in html and "claim" not in html.split('id="glance"')[1].split("</section>")[0]


def test_a_figure_names_the_arms_it_leaves_out_and_why(mapcoder) -> None:
    model = build_model(report_inputs([mapcoder]))
    (cost,) = [f for f in model.studies[0].figures if "cost and accuracy" in f.title]
    assert cost.left_out == "Left out: Reflexion-10 (no token counts recorded)."  # its log records no tokens
    assert "<strong>Left out: Reflexion-10 (no token counts recorded).</strong>" in render(model)


def test_an_imported_logs_counts_and_provenance_are_its_own(mapcoder) -> None:
    model = build_model(report_inputs([mapcoder]))
    cells = {row.arm: (row.cells, row.cells_with_calls) for row in model.fidelity}
    assert cells == {"Analogical": (164, 0), "CoT": (164, 0), "MapCoder-5-5": (164, 164), "Reflexion-10": (164, 0)}
    (row,) = model.provenance
    assert row["imported"] and row["source"] == "mapcoder logs, written by not recorded in the source's files"
    assert "ChatGPT-CoT-Python3-0-1.jsonl.gz (SHA-256 " in " ".join(row["files"])
    assert row["git_revision"] == "the source's, not sotacheck's: see its files"
    assert mapcoder.manifest.git_revision not in render(model)  # sotacheck's own revision is not shown as the log's


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
def test_readable_at_sixty_arms() -> None:
    rng = np.random.default_rng(3)
    rates = np.linspace(0.2, 0.9, 60)
    rows = [{"arm": f"method-{i:02d}", "dataset": "humaneval", "problem": f"HumanEval/{p}", "repeat": 0,
             "passed": bool(rng.random() < rates[i])} for i in range(60) for p in range(164)]
    run = Run(None, normalise(pd.DataFrame(rows), "sixty"), {"name": "sixty"})
    model = build_model(report_inputs([run], baseline="method-59"))
    (section,) = model.studies
    significant = sum(c.pvalue_adjusted < 0.05 for c in section.analysis.comparisons)
    assert significant > 5
    assert section.findings.count(" pp (Holm p = ") == 5
    assert f"and {significant - 5} more (the comparison table lists them)" in section.findings
    assert len([g for g in model.glance if g.kind.startswith("comparison")]) == 59
    assert len(model.summary) <= 3  # the headline, not a paragraph per arm
