"""Fidelity figures per arm: calls and tokens per problem, and the replies the token limit cut.

References: the truncation of the recorded ``methods-qwen05b`` run is counted here again straight from its
store with SQL (not through the call table), and #19 states it (11 of MapCoder's 126 calls cut at 768).
MapCoder's released ChatGPT HumanEval logs: 5-5 averages 16.84 calls with 112 problems at 12 and 21 at 41,
3-5 averages 11.0, 3-0 makes exactly 10 (the figures #19 quotes from those files); exact counts, means to
the two decimals quoted.
"""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import sotacheck.api as api
from sotacheck.audit.fidelity import TRUNCATION_WARNING_SHARE, CellCalls, calls_by_problem, fidelity, truncation_warnings
from sotacheck.audit.report_inputs import report_inputs
from sotacheck.core.outcomes import OutcomeError
from sotacheck.core.rundir import CALL_COLUMNS, export_into, load_run
from sotacheck.reports.html import build_model, render

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "recordings"
PUBLISHED = REPO / "data" / "published" / "mapcoder" / "ChatGPT" / "HumanEval"


def _cut_by_stage_from_the_store(run_dir: Path, tmp_path: Path) -> dict[str, dict[str, tuple[int, int]]]:
    """arm → stage → (cut, calls), with SQL on the recorded store itself."""
    store = tmp_path / "store.sqlite"
    store.write_bytes(gzip.decompress((run_dir / "store.sqlite.gz").read_bytes()))
    db = sqlite3.connect(store)
    rows = db.execute("SELECT arm, stage, SUM(finish_reason = 'length'), COUNT(*) FROM calls GROUP BY arm, stage")
    counted: dict[str, dict[str, tuple[int, int]]] = {}
    for arm, stage, cut, calls in rows:
        counted.setdefault(arm, {})[stage] = (int(cut), int(calls))
    db.close()
    return counted


def test_the_recorded_methods_run_has_mapcoders_cut_replies_by_stage(tmp_path: Path) -> None:
    rows = {row.arm: row for row in fidelity([load_run(RUNS / "methods-qwen05b")])}
    reference = _cut_by_stage_from_the_store(RUNS / "methods-qwen05b", tmp_path)
    mapcoder = rows["mapcoder[k=3,t=5]"]
    assert (mapcoder.cut, mapcoder.calls_recorded) == (11, 126)  # as #19 states
    assert {s.stage: (s.cut, s.calls) for s in mapcoder.by_stage} == {
        stage: counts for stage, counts in reference["mapcoder[k=3,t=5]"].items() if counts[0]}
    for arm, row in rows.items():
        assert row.calls_recorded == sum(calls for _, calls in reference[arm].values())
        assert row.cut == sum(cut for cut, _ in reference[arm].values())
        assert row.cells == 20 and row.calls_mean is not None
    assert mapcoder.truncation_share == pytest.approx(11 / 126, abs=1e-12)
    warnings = truncation_warnings(list(rows.values()))
    assert len(warnings) == 1 and "mapcoder[k=3,t=5]" in warnings[0] and "11 of 126" in warnings[0]
    assert rows["direct"].warning is None and rows["direct"].truncation_share == 0.0


def test_mapcoders_released_logs_give_the_published_call_counts(tmp_path: Path) -> None:
    run, _ = api.import_logs("mapcoder", path=PUBLISHED, out=tmp_path / "mapcoder-he")
    row = next(r for r in fidelity([run]) if r.arm == "MapCoder-5-5")
    assert row.cells == 164 and round(row.calls_mean or 0, 2) == 16.84
    assert dict(row.calls_counts)[12] == 112 and dict(row.calls_counts)[41] == 21
    assert row.calls_counts[0] == (12, 112)
    # Imported logs have no finish reasons: not recorded, never 0 %, and no warning.
    assert row.truncation_share is None and row.warning is None and row.calls_recorded is None


def test_the_ablation_logs_3_5_and_3_0(tmp_path: Path, data_dir: Path) -> None:
    ablation = data_dir / "published-runs" / "mapcoder" / "Ablation" / "HumanEval"
    if not ablation.is_dir():
        pytest.skip(f"{ablation} not here")
    run, _ = api.import_logs("mapcoder", path=ablation, out=tmp_path / "ablation")
    rows = {r.arm: r for r in fidelity([run])}
    assert round(rows["MapCoder-3-5"].calls_mean or 0, 2) == 11.01  # "mean 11.0"
    assert rows["MapCoder-3-0"].calls_counts == ((10, 164),)


def test_the_call_table_round_trips_and_a_missing_column_is_named(tmp_path: Path) -> None:
    run = load_run(RUNS / "methods-qwen05b")
    assert run.calls is not None and list(run.calls.columns) == list(CALL_COLUMNS) and len(run.calls) == 520
    target = tmp_path / "copy"
    target.mkdir()
    export_into(target, run.outcomes, run.manifest, run.calls)
    again = load_run(target)
    assert again.calls is not None
    pd.testing.assert_frame_equal(again.calls, run.calls)
    with pytest.raises(OutcomeError, match=r"lacks column.*finish_reason"):
        export_into(target, run.outcomes, run.manifest, run.calls.drop(columns=["finish_reason"]))
    run.calls.drop(columns=["stage"]).to_parquet(target / "calls.parquet")
    with pytest.raises(OutcomeError, match=r"calls.parquet: missing column\(s\) stage"):
        load_run(target)


def test_the_report_shows_the_figures_and_the_warning(tmp_path: Path) -> None:
    published, _ = api.import_logs("mapcoder", path=PUBLISHED, out=tmp_path / "mapcoder-he")
    model = build_model(report_inputs([load_run(RUNS / "methods-qwen05b"), published]))
    (warning,) = [w for w in model.fidelity_warnings if "mapcoder[k=3,t=5]" in w and "cut by the token limit" in w]
    assert any("replies cut by the token limit (Fidelity, below)" in line for line in model.summary)
    html = render(model)
    assert html.count(warning) == 1  # said once, in the fidelity section
    section = html[html.index('id="fidelity"'):html.index('id="provenance"')]
    assert "16.84 (12; " in section and "12 (112), 41 (21)" in section
    assert "8.7 % (11 of 126); debug 6/41" in section
    assert f"more than {100 * TRUNCATION_WARNING_SHARE:g} % cut is flagged" in section
    assert section.count("not recorded") >= 1


def test_calls_by_problem_agrees_with_the_store_cell_by_cell(tmp_path: Path) -> None:
    """Each cell's calls and status as its outcome row says, its cut replies counted again with SQL on the store,
    problems in natural order, arms of different runs in columns of their own."""
    methods, baselines = load_run(RUNS / "methods-qwen05b"), load_run(RUNS / "originals-baselines-qwen05b")
    view = calls_by_problem([methods, baselines])
    assert view.columns[:2] == (("methods-qwen05b", "codesim[d=5,p=5]", "humaneval"), ("methods-qwen05b", "cot", "humaneval"))
    assert ("originals-baselines-qwen05b", "direct@original", "humaneval") in view.columns
    assert [row.problem for row in view.rows] == [f"HumanEval/{i}" for i in range(20)]
    store = tmp_path / "store.sqlite"
    store.write_bytes(gzip.decompress((RUNS / "methods-qwen05b" / "store.sqlite.gz").read_bytes()))
    db = sqlite3.connect(store)
    cut = {(arm, problem): int(n) for arm, problem, n in db.execute(
        "SELECT arm, problem, SUM(finish_reason = 'length') FROM calls GROUP BY arm, problem")}
    db.close()
    outcomes = methods.outcomes.set_index(["arm", "problem"])
    checked = 0
    for row in view.rows:
        for (run, arm, _), cell in zip(view.columns, row.cells, strict=True):
            if run != "methods-qwen05b":
                assert (cell is None) == (row.problem not in {f"HumanEval/{i}" for i in range(5)})
                continue
            assert cell is not None
            assert cell.calls == outcomes.loc[(arm, row.problem), "calls"]
            assert cell.status == outcomes.loc[(arm, row.problem), "status"]
            assert cell.cut == cut.get((arm, row.problem), 0)
            checked += 1
    assert checked == 6 * 20 and sum(cut.values()) == 11
    mapcoder = view.columns.index(("methods-qwen05b", "mapcoder[k=3,t=5]", "humaneval"))
    assert view.rows[10].cells[mapcoder] == CellCalls(9, "failed", 5)  # HumanEval/10: 5 of its 9 replies cut


def test_an_imported_log_has_calls_but_no_cut_count(tmp_path: Path) -> None:
    run, _ = api.import_logs("mapcoder", path=PUBLISHED, out=tmp_path / "mapcoder-he")
    view = calls_by_problem([run])
    column = view.columns.index((run.name, "MapCoder-5-5", "humaneval"))
    counts = [row.cells[column].calls for row in view.rows if row.cells[column] is not None]
    assert len(counts) == 164 and counts.count(12) == 112 and counts.count(41) == 21
    assert all(row.cells[column] is None or row.cells[column].cut is None for row in view.rows)  # not recorded
