"""Paper tables (golden against `sotacheck analyze --json`, LaTeX that parses, Markdown that renders as a
table) and the report's handling of bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from markdown_it import MarkdownIt
from pylatexenc.latexwalker import LatexEnvironmentNode, LatexWalker

from sotacheck.audit.importers.mapcoder import import_mapcoder
from sotacheck.core.rundir import write_run
from tests.sotacheck_command import SOTACHECK


@pytest.fixture(scope="module")
def mapcoder_run(tmp_path_factory, data_dir) -> Path:
    frame, meta = import_mapcoder(data_dir / "published-runs/mapcoder/ChatGPT/HumanEval")
    return write_run(tmp_path_factory.mktemp("runs") / "mapcoder-he", frame, meta)


def sotacheck(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SOTACHECK, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
def test_table_numbers_equal_analyze_json(mapcoder_run) -> None:
    analysis = json.loads(sotacheck("analyze", str(mapcoder_run), "--baseline", "CoT", "--json").stdout)
    csv_text = sotacheck("table", str(mapcoder_run), "--baseline", "CoT", "--format", "csv").stdout
    rows = {r["Arm"]: r for r in pd.read_csv(pd.io.common.StringIO(csv_text)).to_dict("records")}
    for arm in analysis["arms"]:
        row = rows[arm["arm"]]
        expected = f"{100 * arm['pass_rate']:.1f} [{100 * arm['ci_low']:.1f}, {100 * arm['ci_high']:.1f}]"
        assert row["Pass@1 [95% CI]"] == expected and row["n"] == arm["n"]
    paired = pd.read_csv(pd.io.common.StringIO(
        sotacheck("table", str(mapcoder_run), "--baseline", "CoT", "--format", "csv", "--kind", "comparisons").stdout))
    for comparison in analysis["comparisons"]:
        row = paired[paired["Arm"] == comparison["a"]].iloc[0]
        assert (row["b"], row["c"]) == (comparison["b_count"], comparison["c_count"])
        assert float(row["p"]) == pytest.approx(comparison["pvalue"], rel=5e-3)
        assert float(row["p (Holm)"]) == pytest.approx(comparison["pvalue_adjusted"], rel=5e-3)
        assert float(row["Diff (pp)"]) == pytest.approx(100 * comparison["diff"], abs=0.05)


def test_latex_parses_and_compiles_when_pdflatex_is_there(mapcoder_run, tmp_path) -> None:
    latex = sotacheck("table", str(mapcoder_run), "--format", "latex", "--ci", "pm").stdout
    nodes, _, _ = LatexWalker(latex).get_latex_nodes()
    table = next(n for n in nodes if isinstance(n, LatexEnvironmentNode))
    assert table.environmentname == "table"
    tabular = next(n for n in table.nodelist if isinstance(n, LatexEnvironmentNode))
    assert tabular.environmentname == "tabular"
    body = latex[latex.index(r"\midrule"):latex.index(r"\bottomrule")]
    columns = len(latex.split(r"\begin{tabular}{")[1].split("}")[0])
    assert all(line.count(" & ") == columns - 1 for line in body.splitlines()[1:] if line.strip())
    assert r"\toprule" in latex and r"\caption{" in latex and "n = 164" in latex
    assert r"\textbf{80.5 $\pm$" in latex  # MapCoder: best and significant against the baseline
    if shutil.which("pdflatex"):
        doc = tmp_path / "t.tex"
        doc.write_text("\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n" + latex + "\\end{document}\n")
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", doc.name], cwd=tmp_path, capture_output=True)
        assert done.returncode == 0


def test_bold_only_where_significant(tmp_path) -> None:
    rows = [{"arm": arm, "dataset": "d", "problem": f"p{i}", "repeat": 0, "passed": passed(i)}
            for arm, passed in (("A", lambda i: i % 2 == 0), ("B", lambda i: i % 2 == 0 or i == 1)) for i in range(40)]
    run = write_run(tmp_path / "r", pd.DataFrame(rows), {})
    latex = sotacheck("table", str(run), "--format", "latex", "--baseline", "A").stdout
    assert r"\textbf" not in latex  # B is best by one problem: not significant, so nothing is bold


def test_markdown_renders_as_a_table(mapcoder_run) -> None:
    markdown = sotacheck("table", str(mapcoder_run), "--format", "markdown").stdout
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert html.count("<table>") == 1 and html.count("<tr>") == 5 and "<strong>80.5" in html


@pytest.mark.slow  # ~6-10 s; `make test-all` runs it (the fast tier keeps cheaper cases of the class)
def test_report_bad_input(tmp_path, mapcoder_run) -> None:
    out = tmp_path / "report.html"
    missing = sotacheck("report", str(tmp_path / "nope"), "-o", str(out))
    assert missing.returncode == 2 and "does not exist" in missing.stderr and not out.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "outcomes.csv").write_text("arm,dataset,problem,repeat,passed\n")
    done = sotacheck("report", str(empty), "-o", str(out))
    assert done.returncode == 2 and "no rows" in done.stderr and not out.exists()
    other = write_run(tmp_path / "mbpp", pd.DataFrame({"arm": "x", "dataset": "mbpp", "problem": ["1", "2"],
                                                         "repeat": 0, "passed": [True, False]}), {})
    mixed = sotacheck("report", str(mapcoder_run), str(other), "-o", str(out))
    assert mixed.returncode == 0, mixed.stderr
    text = out.read_text()
    assert "The runs form 2 studies" in text and "Study S1: humaneval" in text and "Study S2: mbpp" in text
    assert "No claims registry given" not in text and "claims" not in text.split('id="glance"')[1].split("</section>")[0]


@pytest.mark.slow
def test_report_of_the_recorded_runs_has_their_sweep_sections(tmp_path) -> None:
    """The recorded embedded-model sweeps render: CodeSim's d × p heat map and the gate's hold-budget line
    (whose fixed `base=direct` is not an axis)."""
    runs = sorted(str(p) for p in (Path(__file__).resolve().parents[2] / "recordings").iterdir() if p.is_dir())
    out = tmp_path / "report.html"
    done = sotacheck("report", *runs, "-o", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "d × p on humaneval" in html and "hold_budget on humaneval" in html
    assert "gate: pass@1 against hold_budget on humaneval" in html
    # The two PyCapsule max_attempts sweeps (temperature 0 and 0.8) share arm names: each keeps its own section
    # (its arms prefixed with its run), the paper's default 5 as reference, and one decay fit at max_attempts=8.
    for run in ("sweep-pycapsule-attempts-qwen05b", "sweep-pycapsule-attempts-t08-qwen05b"):
        assert f"<h3>max_attempts on humaneval (reference {run}:pycapsule[max_attempts=5]" in html
    assert html.count("<h3>sweep-pycapsule-attempts-t08-qwen05b:pycapsule[max_attempts=8]</h3>") == 1
    assert "No decay fit for sweep-pycapsule-attempts-qwen05b:pycapsule[max_attempts=8]" in html
    assert "attempts 6–8 first solved 1\n    problem(s)" in html


@pytest.mark.slow
def test_fidelity_and_calls_by_problem_tables_render_the_audits_figures(tmp_path) -> None:
    """The figures are ``audit.fidelity``'s (checked against the store there); here they reach each format."""
    from sotacheck.audit.fidelity import fidelity
    from sotacheck.core.rundir import load_run

    methods = Path(__file__).resolve().parents[2] / "recordings" / "methods-qwen05b"
    rows = {row.arm: row for row in fidelity([load_run(methods)])}
    csv_text = sotacheck("table", str(methods), "--kind", "fidelity", "--format", "csv").stdout
    table = pd.read_csv(pd.io.common.StringIO(csv_text)).set_index("Arm")
    assert set(table.index) == set(rows)
    for arm, row in rows.items():
        assert table.loc[arm, "Calls (mean)"] == pytest.approx(row.calls_mean, abs=0.005)
        assert table.loc[arm, "Cells"] == row.cells == 20
    assert table.loc["mapcoder[k=3,t=5]", "Cut"] == "8.7 % (11 of 126)"
    assert table.loc["mapcoder[k=3,t=5]", "Cut by stage"] == "debug 6/41, plan 2/22, retrieve 3/20"
    markdown = sotacheck("table", str(methods), "--kind", "fidelity").stdout
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert html.count("<tr>") == 7 and "<strong>8.7 % (11 of 126)</strong>" in html
    assert "> methods-qwen05b: arm mapcoder[k=3,t=5]: 8.7 % of its calls (11 of 126) were cut" in markdown
    latex = sotacheck("table", str(methods), "--kind", "calls-by-problem", "--format", "latex").stdout
    LatexWalker(latex).get_latex_nodes()
    assert r"HumanEval/10 & 45 failed & 1 failed & 1 failed & 4 failed & 9 failed, 5 cut & 6 failed \\" in latex
    wrong = sotacheck("table", str(methods), "--kind", "calls")
    assert wrong.returncode == 2 and wrong.stderr.strip().endswith(
        "--kind must be one of pass-rates, comparisons, fidelity, calls-by-problem, got 'calls'")
