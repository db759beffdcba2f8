"""The HTML report in a real headless Chromium (Debian's package, installed by `make setup`), loaded from
disk with the network blocked: no request leaves the page, no console error, every figure has a size and
keeps its text inside its box, one section per study, and a full-page screenshot is saved as a test
artifact. The report is the one #20 reproduced: every recorded run in recordings/ plus MapCoder's ChatGPT
HumanEval logs."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from sotacheck.audit.analysis import analyze
from sotacheck.audit.importers.mapcoder import import_mapcoder
from sotacheck.audit.report_inputs import report_inputs
from sotacheck.core.rundir import load_run, write_run
from sotacheck.reports.html import write_report

REPO = Path(__file__).resolve().parents[2]
RECORDED = sorted(p for p in (REPO / "recordings").iterdir() if p.is_dir())
ARTIFACTS = Path(os.environ.get("SOTACHECK_ARTIFACTS", REPO / "artifacts"))
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER) and not os.environ.get("CI"),
                                reason="Debian's chromium and chromium-driver are installed by `make setup`")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_dir) -> list:
    frame, meta = import_mapcoder(data_dir / "published-runs/mapcoder/ChatGPT/HumanEval")
    mapcoder = write_run(tmp_path_factory.mktemp("imported") / "mapcoder-he", frame, meta)
    return [*(load_run(p) for p in RECORDED), load_run(mapcoder)]


@pytest.fixture(scope="module")
def studies(runs) -> list:
    """The studies the analysis finds in these runs (computed apart from the report), in its order."""
    return [s.study for s in analyze(runs, baseline="direct", n_resamples=100).studies]


@pytest.fixture(scope="module")
def report(tmp_path_factory, runs) -> Path:
    return write_report(report_inputs(runs, sorted((REPO / "data" / "claims").glob("*.yaml")), baseline="direct",
                                      dataset_sizes={"humaneval": 164}), tmp_path_factory.mktemp("report") / "report.html")


def test_report_offline_in_chromium(report, browser, studies, screenshot) -> None:
    browser.get_log("performance")  # drop what the browser did before it opened the report
    browser.get(report.as_uri())
    assert browser.title == "sotacheck audit report"
    events = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    sent = [m["params"] for m in events if m["method"] == "Network.requestWillBeSent"]
    page = [p["request"]["url"] for p in sent if p.get("documentURL") == report.as_uri()]
    assert page and all(u.startswith(("file://", "data:")) for u in page), page
    # nothing at all (the browser's own pages included) went to the network
    assert not [p["request"]["url"] for p in sent if p["request"]["url"].startswith(("http", "ws", "ftp"))]
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    sizes = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure svg')).map(s => {"
        "const r = s.getBoundingClientRect(); return [r.width, r.height]; });")
    assert len(sizes) >= 3 and all(w > 50 and h > 50 for w, h in sizes), sizes
    assert browser.execute_script("return document.querySelectorAll('figure [role=img][aria-label]').length") == len(sizes)
    outside = browser.execute_script(
        "const out = []; document.querySelectorAll('figure').forEach(f => { const box = f.getBoundingClientRect();"
        " f.querySelectorAll('svg text').forEach(t => { const r = t.getBoundingClientRect();"
        " if (r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1"
        " || r.bottom > box.bottom + 1)) out.push(t.textContent); }); }); return out;")
    assert outside == []
    # a study's figures fit in about one screen (the window is 900 px tall)
    heights = browser.execute_script("return Array.from(document.querySelectorAll('section.study .figures')).map("
                                     "s => s.getBoundingClientRect().height);")
    assert len(heights) == len(studies) >= 7 and max(heights) <= 900, heights
    text = browser.execute_script("return document.body.innerText")
    numbered = [f"Study S{number}: {study.dataset}, {study.n_problems} problems"
                for number, study in enumerate(studies, start=1)]
    assert numbered[0] == "Study S1: apps, 10 problems" and "humaneval, 164 problems" in numbered[-1]
    for heading in ("Verdicts at a glance", "Published claims", *numbered, "Sensitivity sweeps", "Debug decay",
                    "Fidelity to the methods", "Provenance"):
        assert heading in text
    assert text.count("Model @ endpoint") == len(studies) + 1 and "ChatGPT @ not recorded" in text  # + provenance
    assert "Paired comparisons against direct (Holm within S1)" in text
    assert "no problem was first solved by a repair attempt" in text  # the recorded 0.5B run's PyCapsule
    assert screenshot("report-full-page.png").stat().st_size > 50_000


def test_report_prints_to_pdf(report, browser) -> None:
    browser.get(report.as_uri())
    pdf = browser.execute_cdp_cmd("Page.printToPDF", {"printBackground": False})
    data = base64.b64decode(pdf["data"])
    assert data.startswith(b"%PDF") and len(data) > 20_000
    (ARTIFACTS / "report.pdf").write_bytes(data)
