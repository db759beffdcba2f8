"""``sotacheck leaderboard`` end to end: a CSV imported, the board printed as text and JSON, one-line errors
with exit 2 and nothing written; MapCoder's bundled HumanEval logs as a leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sotacheck.cli import main as cli_main
from tests.audit.test_leaderboard import REFERENCE

MAPCODER_HE = Path(__file__).resolve().parents[2] / "data" / "published" / "mapcoder" / "ChatGPT" / "HumanEval"


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        cli_main.main(args)
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def _reference_csv(path: Path) -> Path:
    rows = [{"model": f"sys{s}", "problem": f"P{p:02d}", "passed": int(ch)}
            for s, row in enumerate(REFERENCE) for p, ch in enumerate(row)]
    pd.DataFrame(rows).assign(arm=lambda t: t["model"], dataset="ref", repeat=0)[
        ["arm", "dataset", "problem", "repeat", "passed"]].to_csv(path, index=False)
    return path


def test_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(["import", "csv", str(_reference_csv(tmp_path / "ref.csv")), "--out", str(tmp_path / "ref")],
                        capsys)
    assert code == 0, err
    code, out, _ = _cli(["leaderboard", str(tmp_path / "ref")], capsys)
    assert code == 0
    assert "2 of 4 systems are in the top group" in out and "sys1" in out.splitlines()[1]
    assert "Cochran's Q = 28.13" in out and "Holm over all 6 pairs" in out
    code, out, _ = _cli(["leaderboard", str(tmp_path / "ref"), "--json"], capsys)
    body = json.loads(out)
    assert body["top_group"] == ["sys0", "sys1"] and body["family_size"] == 6
    assert [s["rank_interval"] for s in body["systems"]] == [[1, 2], [1, 3], [2, 4], [3, 4]]


def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = _reference_csv(tmp_path / "ref.csv")
    table = pd.read_csv(csv)
    table[table["arm"] == "sys0"].to_csv(tmp_path / "one.csv", index=False)
    assert _cli(["import", "csv", str(tmp_path / "one.csv"), "--out", str(tmp_path / "one")], capsys)[0] == 0
    out_file = tmp_path / "board.json"
    code, _, err = _cli(["leaderboard", str(tmp_path / "one"), "--json", "-o", str(out_file)], capsys)
    assert code == 2 and err.strip().count("\n") == 0 and "at least two systems" in err
    assert not out_file.exists()
    code, _, err = _cli(["leaderboard", str(tmp_path / "missing")], capsys)
    assert code == 2 and "does not exist" in err and err.strip().count("\n") == 0
    assert _cli(["import", "csv", str(csv), "--out", str(tmp_path / "ref")], capsys)[0] == 0
    code, _, err = _cli(["leaderboard", str(tmp_path / "ref"), "--format", "pdf"], capsys)
    assert code == 2 and "--format" in err
    code, _, err = _cli(["leaderboard", str(tmp_path / "ref"), "--against", "nobody"], capsys)
    assert code == 2 and "no system 'nobody'" in err


def test_mapcoder_released_humaneval_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MapCoder's ChatGPT HumanEval logs (bundled): MapCoder-5-5 132/164 against CoT 113, Reflexion 110 and
    Analogical 104; the pairs' discordant counts recomputed here from the logs themselves."""
    assert _cli(["import", "mapcoder", str(MAPCODER_HE), "--out", str(tmp_path / "mc")], capsys)[0] == 0
    _, out, _ = _cli(["leaderboard", str(tmp_path / "mc"), "--json"], capsys)
    body = json.loads(out)
    solved = {}
    for file in MAPCODER_HE.glob("*.jsonl*"):
        import gzip

        opener = gzip.open if file.suffix == ".gz" else open
        with opener(file, "rt") as fh:
            rows = [json.loads(line[line.index("{"):]) for line in fh if line.strip()]
        name = "MapCoder-5-5" if "MapCoder" in file.name else file.name.split("-")[1] + (
            "-10" if "Reflexion" in file.name else "")
        solved[name] = {r["task_id"]: bool(r["is_solved"]) for r in rows}
    assert {s["system"]: round(s["pass_rate"] * 164) for s in body["systems"]} == {
        k: sum(v.values()) for k, v in solved.items()}
    for pair in body["pairs"]:
        a, b = solved[pair["a"]], solved[pair["b"]]
        assert pair["a_only"] == sum(a[t] and not b[t] for t in a)
        assert pair["b_only"] == sum(b[t] and not a[t] for t in a)
    assert body["top_group"] == ["MapCoder-5-5"]
    assert np.isclose(body["systems"][0]["pass_rate"], 132 / 164)


def test_report_with_a_leaderboard_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["import", "csv", str(_reference_csv(tmp_path / "ref.csv")), "--out", str(tmp_path / "ref")],
                capsys)[0] == 0
    code, _, err = _cli(["report", str(tmp_path / "ref"), "--leaderboard", "ref", "-o", str(tmp_path / "r.html")],
                        capsys)
    assert code == 0, err
    page = (tmp_path / "r.html").read_text()
    assert 'class="leaderboard"' in page and "Leaderboard ref: 2 of 4 systems are in the top group" in page
    code, _, err = _cli(["report", str(tmp_path / "ref"), "--leaderboard", "nope", "-o", str(tmp_path / "x.html")],
                        capsys)
    assert code == 2 and "no system has results on dataset 'nope'" in err and not (tmp_path / "x.html").exists()


def test_a_results_file_is_sent_to_import_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`leaderboard good.csv`: the file exists but is not a run directory: one line naming the import, exit 2."""
    csv = _reference_csv(tmp_path / "good.csv")
    code, out, err = _cli(["leaderboard", str(csv)], capsys)
    assert code == 2 and out == "" and err.strip().count("\n") == 0
    assert "is a file, not a run directory" in err
    assert f"sotacheck import csv {csv} --out runs/good" in err
    code, _, err = _cli(["leaderboard", str(MAPCODER_HE / "ChatGPT-CoT-Python3-0-1.jsonl.gz")], capsys)
    assert code == 2 and "sotacheck import KIND" in err and "mapcoder" in err


def test_csv_has_one_number_per_column_and_the_top_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 48: the CSV is for the next program: the rate and its interval's ends in their own columns, the top
    group and the best set as columns (statistics.md's reference example: top group {sys0, sys1})."""
    import csv as csv_module
    import io

    assert _cli(["import", "csv", str(_reference_csv(tmp_path / "ref.csv")), "--out", str(tmp_path / "ref")],
                capsys)[0] == 0
    code, out, _ = _cli(["leaderboard", str(tmp_path / "ref"), "--format", "csv"], capsys)
    assert code == 0
    rows = list(csv_module.DictReader(io.StringIO(out)))
    assert {"pass_rate", "ci_low", "ci_high", "rank_low", "rank_high", "top_group", "best_set",
            "missing_cells"} <= set(rows[0])
    assert all(float(r["ci_low"]) <= float(r["pass_rate"]) <= float(r["ci_high"]) for r in rows)
    assert [r["system"] for r in rows if r["top_group"] == "true"] == ["sys0", "sys1"]
    assert float(rows[0]["pass_rate"]) == pytest.approx(85.0)


def test_no_library_warning_on_bundled_data_or_a_board_without_differences(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No statsmodels or other library warning reaches stderr: MapCoder's bundled HumanEval and MBPP logs, and a
    board where no problem separates the systems (Cochran's Q is 0/0 there: Q = 0, p = 1, not a NaN)."""
    import warnings

    for name, folder in (("he", MAPCODER_HE), ("mbpp", MAPCODER_HE.parent / "MBPP")):
        assert _cli(["import", "mapcoder", str(folder), "--out", str(tmp_path / name)], capsys)[0] == 0
    rows = [{"arm": f"sys{s}", "dataset": "same", "problem": f"P{p}", "repeat": 0, "passed": 1}
            for s in range(3) for p in range(10)]
    pd.DataFrame(rows).to_csv(tmp_path / "same.csv", index=False)
    assert _cli(["import", "csv", str(tmp_path / "same.csv"), "--out", str(tmp_path / "same")], capsys)[0] == 0
    for name in ("he", "mbpp", "same"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code, out, err = _cli(["leaderboard", str(tmp_path / name), "--json"], capsys)
        assert code == 0 and not caught and "Warning" not in err, (name, [str(w.message) for w in caught], err)
    omnibus = json.loads(out)["omnibus"]
    assert (omnibus["statistic"], omnibus["pvalue"]) == (0.0, 1.0)
