"""Leaderboard tables, figures and HTML page, rendered from real ``leaderboard(...)`` results: the
4 × 40 reference example of ../shared/reference/statistics.md (its published pairs and rank intervals, and
scipy / statsmodels recomputations) and a seeded 60 systems × 400 problems board; the page in a real headless
Chromium at 60 × 400 (first screen, figures, no console error, no request), with screenshots kept as
artifacts."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from html import escape

import numpy as np
import pandas as pd
import pytest
from markdown_it import MarkdownIt
from pylatexenc.latexwalker import LatexEnvironmentNode, LatexWalker
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from sotacheck.audit.leaderboard import leaderboard
from sotacheck.core.errors import ArgumentError
from sotacheck.core.rundir import Run
from sotacheck.reports import leaderboard_figures as figures
from sotacheck.reports import leaderboard_html
from sotacheck.reports.leaderboard_html import headline, leaderboard_section, render_leaderboard_html
from sotacheck.reports.leaderboard_tables import leaderboard_pairs_table, leaderboard_table, render_leaderboard_table

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")

# statistics.md, "Leaderboards": rows are systems, characters problems, 1 = passed.
REFERENCE = ("0111110111111111111111111101011011111110", "1110011011111111111101011111110111111010",
             "0010011110100111011001110111010011000110", "1010001110100101001001001011000001000100")
# its published pairs: (a, b) -> (a only, b only, exact p, Holm p), and rank intervals
REFERENCE_PAIRS = {(0, 1): (7, 5, 0.774414, 0.774414), (0, 2): (14, 2, 0.00418091, 0.0167236),
                   (0, 3): (22, 3, 0.000156522, 0.000939131), (1, 2): (13, 3, 0.0212708, 0.0638123),
                   (1, 3): (19, 2, 0.000221252, 0.00110626), (2, 3): (9, 2, 0.0654297, 0.130859)}
REFERENCE_RANKS = {0: "[1, 2]", 1: "[1, 3]", 2: "[2, 4]", 3: "[3, 4]"}


def board_of(table: pd.DataFrame, **kwargs):
    return leaderboard([Run(None, table, {"name": "x", "source": "csv"})], **kwargs)


def reference_table() -> pd.DataFrame:
    return pd.DataFrame([{"arm": f"system-{i}", "dataset": "ref", "problem": f"p{j:02d}", "repeat": 0,
                          "passed": ch == "1"} for i, row in enumerate(REFERENCE) for j, ch in enumerate(row)])


def synthetic(n_systems: int, n_problems: int, seed: int, repeats: int = 1) -> pd.DataFrame:
    """Seeded systems × problems with known rates and heterogeneous problem difficulty (logit scale);
    names long, and some with characters LaTeX and HTML must escape."""
    rng = np.random.default_rng(seed)
    rates = np.linspace(0.85, 0.2, n_systems)
    difficulty = rng.normal(0, 1.5, n_problems)
    p = 1 / (1 + np.exp(-(np.log(rates / (1 - rates))[:, None] + difficulty[None, :])))
    names = [f"org-{i % 7}/model-{i:02d}-instruct-{'v' * (i % 5)}-with-a-long-suffix" for i in range(n_systems)]
    names[3], names[5] = "tricky_name & <b>50%</b> #1 {x}", "short"
    cells = rng.random((n_systems, n_problems, repeats)) < p[:, :, None]
    index = pd.MultiIndex.from_product([names, [f"bench/{j}" for j in range(n_problems)], range(repeats)],
                                       names=["arm", "problem", "repeat"])
    return pd.DataFrame({"passed": cells.ravel()}, index=index).reset_index().assign(dataset="bench")


@pytest.fixture(scope="module")
def reference():
    return board_of(reference_table())


@pytest.fixture(scope="module")
def board60():
    return board_of(synthetic(60, 400, seed=31))


@pytest.fixture(scope="module")
def board_repeats():
    table = synthetic(6, 30, seed=7, repeats=4)
    return board_of(table[~((table["arm"] == "short") & table["problem"].isin(["bench/0", "bench/1"]))])


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def interval(rate: float, low: float, high: float) -> str:
    return f"{100 * rate:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def test_reference_table_against_published_values(reference) -> None:
    rows = read_csv(render_leaderboard_table(reference, "csv"))  # one number per column (issue 48)
    assert [r["system"] for r in rows] == [f"system-{i}" for i in range(4)]  # 34, 32, 22, 15 of 40
    for i, (row, passes) in enumerate(zip(rows, (34, 32, 22, 15), strict=True)):
        low, high = proportion_confint(passes, 40, alpha=0.05, method="wilson")
        assert float(row["pass_rate"]) == pytest.approx(100 * passes / 40, abs=5e-4)
        assert (float(row["ci_low"]), float(row["ci_high"])) == pytest.approx((100 * low, 100 * high), abs=5e-4)
        assert f"[{row['rank_low']}, {row['rank_high']}]" == REFERENCE_RANKS[i] and row["position"] == str(i + 1)
    assert [(r["better_than"], r["worse_than"]) for r in rows] == [("2", "0"), ("1", "0"), ("0", "1"), ("0", "2")]
    assert [r["top_group"] for r in rows] == ["true", "true", "false", "false"]  # statistics.md: top group {0, 1}
    assert [r["best_set"] for r in rows] == ["true", "true", "false", "false"]
    assert all(r["missing_cells"] == "0" for r in rows)
    table = leaderboard_table(reference)
    assert [row[0].bold for row in table.rows] == [True, True, False, False]  # the top group {0, 1}
    assert all(len({c.bold for c in row}) == 1 for row in table.rows)  # a whole row is bold or not
    assert "Holm over all 6 pairs" in table.caption and "α = 0.05" in table.caption and "Wilson" in table.caption
    assert "40 problems" in table.caption
    assert any("7 (1 solved by no system, 6 by one system only)" in note for note in table.notes)
    top = reference.resolution.top_pair
    assert any(f"the top pair (system-0 vs system-1): {100 * top.mdd:.1f} points" in n for n in table.notes)


def test_reference_pairs_table_against_scipy_and_statsmodels(reference) -> None:
    rows = read_csv(render_leaderboard_table(reference, "csv", pairs=True))
    assert len(rows) == 6
    holm = multipletests([stats.binomtest(b, b + c).pvalue for b, c, _, _ in REFERENCE_PAIRS.values()],
                         method="holm")[1]
    by_pair = {(int(r["A"][-1]), int(r["B"][-1])): r for r in rows}
    for (pair, (b, c, p, p_holm)), adjusted in zip(REFERENCE_PAIRS.items(), holm, strict=True):
        row = by_pair[pair]
        assert (int(row["A only"]), int(row["B only"])) == (b, c)
        assert row["p"] == f"{stats.binomtest(b, b + c).pvalue:.3g}"  # shown to three significant digits
        assert row["p (Holm)"] == f"{adjusted:.3g}"
        assert float(row["p"]) == pytest.approx(p, rel=5e-3) and float(row["p (Holm)"]) == pytest.approx(p_holm, rel=5e-3)
        assert float(row["Diff (pp)"]) == pytest.approx(100 * (b - c) / 40, abs=0.05)
    bold = [row[0].bold for row in leaderboard_pairs_table(reference).rows]
    assert bold == [p.significant for p in reference.pairs] and sum(bold) == 3
    assert len(leaderboard_pairs_table(reference, significant_only=True).rows) == 3


def test_latex_parses_with_booktabs_and_bold_top_group(board60) -> None:
    latex = render_leaderboard_table(board60, "latex")
    assert latex.isascii()  # α, ≈, − become math: pdflatex's default encoding knows none of them
    assert latex.count("{") - latex.count(r"\{") == latex.count("}") - latex.count(r"\}")
    nodes, _, _ = LatexWalker(latex).get_latex_nodes()
    table = next(n for n in nodes if isinstance(n, LatexEnvironmentNode))
    assert table.environmentname == "table"
    assert r"\toprule" in latex and r"\midrule" in latex and r"\bottomrule" in latex
    body = latex[latex.index(r"\midrule"):latex.index(r"\bottomrule")].splitlines()[1:]
    assert len(body) == 60 and all(line.count(" & ") == 5 for line in body)
    bold = [line.startswith(r"\textbf{") for line in body]
    assert bold == [s.in_top_group for s in board60.systems] and sum(bold) == len(board60.top_group) >= 2
    assert r"tricky\_name \& <b>50\%</b> \#1 \{x\}" in latex
    assert r"Holm over all 1770 pairs" in latex and r"$\alpha$ = 0.05" in latex


def test_csv_and_markdown_carry_every_system(board60) -> None:
    rows = read_csv(render_leaderboard_table(board60, "csv"))
    assert [r["system"] for r in rows] == [s.system for s in board60.systems] and len(rows) == 60
    for row, s in zip(rows, board60.systems, strict=True):
        assert [float(row[k]) for k in ("pass_rate", "ci_low", "ci_high")] == pytest.approx(
            [100 * s.pass_rate, 100 * s.ci_low, 100 * s.ci_high], abs=5e-4)
        assert (int(row["rank_low"]), int(row["rank_high"])) == s.rank_interval
        assert (int(row["better_than"]), int(row["worse_than"])) == (s.better_than, s.worse_than)
        assert (row["top_group"], row["best_set"]) == (str(s.in_top_group).lower(), str(s.in_best_set).lower())
    pairs = read_csv(render_leaderboard_table(board60, "csv", pairs=True))
    assert len(pairs) == 1770 == len(board60.pairs)
    assert [float(r["p (Holm)"]) for r in pairs] == pytest.approx([p.pvalue_adjusted for p in board60.pairs], rel=5e-3)
    html = MarkdownIt("commonmark").enable("table").render(render_leaderboard_table(board60, "markdown"))
    assert html.count("<tr>") == 61 and html.count("<strong>") == 6 * len(board60.top_group)
    with pytest.raises(ArgumentError, match="html"):
        render_leaderboard_table(board60, "html")


def test_repeats_show_per_problem_counts(board_repeats) -> None:
    table = leaderboard_pairs_table(board_repeats)
    assert table.columns[3:5] == ("A higher", "B higher")
    for row, pair in zip(table.rows, board_repeats.pairs, strict=True):
        assert (row[3].text, row[4].text) == (str(pair.a_higher), str(pair.b_higher)) and pair.a_only is None
    systems = leaderboard_table(board_repeats)
    assert "problem-clustered" in systems.caption and "28 problems" in systems.caption
    assert sum("2 problem(s) of" in note and "left out" in note for note in systems.notes) == 5  # all but short


def test_win_grid_agrees_with_the_board(board60, reference) -> None:
    for board in (reference, board60):
        grid = figures.win_grid(board)
        assert ((grid == figures.WIN) == (grid == figures.LOSS).T).all()
        assert [int((row == figures.WIN).sum()) for row in grid] == [s.better_than for s in board.systems]
        assert [int((row == figures.LOSS).sum()) for row in grid] == [s.worse_than for s in board.systems]
    against = board_of(reference_table(), against="TOP")
    grid = figures.win_grid(against)
    assert (grid[1:, 1:][~np.eye(3, dtype=bool)] == figures.NOT_TESTED).all()  # only #1's pairs were tested


def test_figures_name_every_system(board60) -> None:
    cut = [s for s in board60.systems if len(s.system) > figures.LABEL_CHARS]
    for draw in (figures.rank_plot, figures.wins_matrix, figures.difficulty_heatmap):
        svg = draw(board60)
        assert svg.startswith("<svg") and svg.count("<title>") == len(cut) > 40
        for s in board60.systems:
            shown = f"{s.position}. {figures.short_label(s.system)}"
            assert escape(shown, quote=False) in svg
        assert f"<title>{cut[0].system}</title>" in svg and "tricky_name &amp; &lt;b&gt;50%&lt;/b&gt;" in svg
    assert "<image" in figures.difficulty_heatmap(board60)  # the 60 × 400 cells are one raster


def test_html_page_and_fragment(reference, tmp_path, monkeypatch) -> None:
    page = render_leaderboard_html(reference, tmp_path / "lb.html").read_text()
    sentence = headline(reference)
    assert sentence == ("2 of 4 systems are in the top group, where no other system beats them significantly "
                        "(Holm over all 6 pairs, α = 0.05): #1, system-0, is not alone.")
    assert sentence in page and "Top group: system-0 and system-1. #1, system-0, beats 2 of the other 3" in page
    assert "Cochran&#39;s Q: statistic 28.13, df = 3, p = 3.41e-06: the systems differ" in page
    assert page.count("<svg") == 3 and "<script" not in page and "<details" in page
    assert 'src="http' not in page and 'href="http' not in page and "@import" not in page
    assert "<code>p39</code>" in page and "solved by no system" in page
    fragment = leaderboard_section(reference, heading_level=3)
    assert fragment.startswith('<section class="leaderboard"') and "<html" not in fragment and "<h3" in fragment

    def broken(board):
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(leaderboard_html.figures, "difficulty_heatmap", broken)
    with pytest.raises(RuntimeError):
        render_leaderboard_html(reference, tmp_path / "out" / "lb.html")
    assert not (tmp_path / "out" / "lb.html").exists() and not list((tmp_path / "out").glob("*"))


def test_html_escapes_names_and_lists_left_out(board_repeats, tmp_path) -> None:
    page = render_leaderboard_html(board_repeats, tmp_path / "lb.html").read_text()
    assert "<b>50%</b>" not in page and "tricky_name &amp; &lt;b&gt;50%&lt;/b&gt;" in page
    assert "Problems left out (5 systems)" in page and "bench/0, bench/1" in page  # short lacks them
    assert "sign-flip" in page and "share of samples solved" in page


def test_headline_when_one_system_leads_and_canonical_verdicts(tmp_path) -> None:
    rows = [{"arm": arm, "dataset": "d", "problem": f"q{j:02d}", "repeat": 0, "passed": passed}
            for j in range(60) for arm, passed in (("lead", j < 58), ("mid", j % 3 == 0), ("low", j % 5 == 0))]
    board = board_of(pd.DataFrame(rows), canonical={"q58": False, "q59": True})
    assert board.top_group == ("lead",) and board.systems[0].better_than == 2
    assert headline(board) == ("lead is alone in the top group: it beats each of the other 2 systems significantly "
                               "(Holm over all 3 pairs, α = 0.05).")
    page = render_leaderboard_html(board, tmp_path / "lb.html").read_text()
    assert "<th scope=\"col\">Canonical solution</th>" in page
    assert "<code>q58</code>" in page and "FAILS: the test may be broken" in page and "passes" in page
    against = board_of(reference_table(), against="TOP")
    assert "not in the family" in figures.wins_matrix(against) and against.family in leaderboard_table(against).caption


def test_cli_writes_the_table_and_the_page(tmp_path, capsys) -> None:
    """`sotacheck leaderboard RUN --format latex --html PAGE` prints this module's table and writes its page."""
    from sotacheck.cli import main as cli_main
    from sotacheck.core.rundir import write_run

    run = write_run(tmp_path / "ref", reference_table(), {})
    with pytest.raises(SystemExit) as done:
        cli_main.main(["leaderboard", str(run), "--format", "latex", "--html", str(tmp_path / "lb.html")])
    out, err = capsys.readouterr()
    assert done.value.code in (0, None), err
    board = board_of(reference_table())
    assert out == render_leaderboard_table(board, "latex")
    assert headline(board) in (tmp_path / "lb.html").read_text()


@pytest.mark.browser
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER) and not os.environ.get("CI"),
                    reason="Debian's chromium and chromium-driver are installed by `make setup`")
def test_leaderboard_page_in_chromium(board60, tmp_path, browser, screenshot) -> None:
    driver = browser
    page = render_leaderboard_html(board60, tmp_path / "leaderboard.html")
    driver.get_log("performance")
    driver.get(page.as_uri())
    assert driver.title == "sotacheck leaderboard: bench"
    events = [json.loads(entry["message"])["message"] for entry in driver.get_log("performance")]
    sent = [m["params"] for m in events if m["method"] == "Network.requestWillBeSent"]
    urls = [p["request"]["url"] for p in sent if p.get("documentURL") == page.as_uri()]
    assert urls and all(u.startswith(("file://", "data:")) for u in urls), urls
    assert not [p["request"]["url"] for p in sent if p["request"]["url"].startswith(("http", "ws", "ftp"))]
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    # the answer is on the first screen (the window is 900 px tall)
    box = driver.execute_script("const r = document.querySelector('.lb-headline').getBoundingClientRect();"
                                "return [r.top, r.bottom, document.querySelector('.lb-headline').innerText];")
    assert box[0] >= 0 and box[1] <= 900 and box[2] == headline(board60)
    assert f"{len(board60.top_group)} of 60 systems are in the top group" in box[2]
    sizes = driver.execute_script("return Array.from(document.querySelectorAll('figure svg')).map(s => {"
                                  "const r = s.getBoundingClientRect(); return [r.width, r.height]; });")
    assert len(sizes) == 3 and all(w > 600 and h > 400 for w, h in sizes), sizes
    outside = driver.execute_script(
        "const out = []; document.querySelectorAll('figure').forEach(f => { const box = f.getBoundingClientRect();"
        " f.querySelectorAll('svg text').forEach(t => { const r = t.getBoundingClientRect();"
        " if (r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1)) out.push(t.textContent); });"
        " }); return out;")
    assert outside == []
    # a label's smallest type is still legible once the figure is scaled to the page
    smallest = driver.execute_script("return Math.min(...Array.from(document.querySelectorAll('figure svg text'))"
                                     ".filter(t => t.textContent.trim()).map(t => t.getBoundingClientRect().height));")
    assert smallest >= 7, smallest
    rows = driver.execute_script("return document.querySelectorAll('table.lb-systems tbody tr').length")
    bold = driver.execute_script("return document.querySelectorAll('table.lb-systems tbody tr.lb-top').length")
    assert (rows, bold) == (60, len(board60.top_group))
    assert screenshot("leaderboard-first-screen.png", full_page=False).stat().st_size > 50_000
    assert screenshot("leaderboard-full-page.png").stat().st_size > 100_000


def test_best_set_and_missing_cells_in_text_tables_and_html(reference, tmp_path) -> None:
    """The best set ("among these k with 95 % confidence", the method named) and each system's missing cells
    reach the text, the table notes and the HTML; the reference example's best set is {system-0, system-1}
    (one-sided exact McNemar at 0.05 / 3: tests/audit/test_leaderboard.py)."""
    from sotacheck.reports.leaderboard_html import leaderboard_section
    from sotacheck.reports.leaderboard_text import render_text

    assert reference.best_set == ("system-0", "system-1")
    sentence = "The best system is among these 2: system-0, system-1, with 95 % confidence"
    assert sentence in render_text(reference)
    assert any(sentence in note for note in leaderboard_table(reference).notes)
    assert escape(sentence) in leaderboard_section(reference) and "Bonferroni" in leaderboard_section(reference)
    table = reference_table()
    table["passed"] = table["passed"].astype(object)
    table.loc[(table["arm"] == "system-2") & table["problem"].isin(["p00", "p01"]), "passed"] = None
    holed = board_of(table.assign(repeat=0))
    assert holed.system("system-2").missing_cells == 0  # one sample each: an errored problem is left out instead
    repeated = pd.concat([reference_table().assign(repeat=r) for r in range(2)])
    repeated["passed"] = repeated["passed"].astype(object)
    repeated.loc[(repeated["arm"] == "system-2") & (repeated["problem"] == "p03") & (repeated["repeat"] == 1),
                 "passed"] = None
    board = board_of(repeated)
    assert {s.system: s.missing_cells for s in board.systems} == {"system-0": 0, "system-1": 0, "system-2": 1,
                                                                  "system-3": 0}
    assert "(1 missing cells)" in render_text(board)
    html = leaderboard_section(board)
    assert "Missing cells (1 systems)" in html and "system-2: 1" in html
