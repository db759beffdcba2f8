"""The report renders the decay fits the analysis carries and fits nothing itself: the R² interval it quotes
(text and figure) is the one on the analysis result, made once with one resample count."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from sotacheck.audit import decay, decay_fits
from sotacheck.audit.analysis import analyze
from sotacheck.audit.analysis_results import AnalysisResult
from sotacheck.audit.decay import DECAY_RESAMPLES
from sotacheck.audit.decay_fits import with_decays
from sotacheck.audit.report_inputs import report_inputs
from sotacheck.core.rundir import Run, load_run
from sotacheck.reports.html import build_model, render

REPO = Path(__file__).resolve().parents[2]
SWEEP = REPO / "recordings" / "sweep-pycapsule-attempts-t08-qwen05b"  # its pycapsule arm has a decay fit


FEW = 60  # resamples: the report's own 1000 take 20 s on this run; the test is about where the fit is made


@pytest.fixture(scope="module")
def fitted() -> tuple[list[Run], AnalysisResult]:
    runs = [load_run(SWEEP)]
    return runs, with_decays(analyze(runs, n_resamples=200), runs, n_resamples=FEW)


def test_the_report_quotes_the_intervals_of_the_analysis(fitted: tuple[list[Run], AnalysisResult],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    runs, analysis = fitted
    fits = [d for d in analysis.decays if d.result is not None]
    assert fits and all(d.n_resamples == FEW for d in analysis.decays)

    def refit(*args: object, **kwargs: object) -> None:
        raise AssertionError("the report fitted a decay curve itself")

    monkeypatch.setattr(decay, "fit_decay", refit)
    monkeypatch.setattr(decay_fits, "fit_decay", refit)
    model = build_model(report_inputs(runs, analysis=analysis))
    html = render(model)
    assert [d for d, _ in model.decays] == list(analysis.decays)
    for fit in fits:
        assert fit.r_squared_ci is not None and fit.result is not None
        assert fit.r_squared_text == f"{fit.result.fit.r_squared:.3f} [{fit.r_squared_ci.low:.3f}, {fit.r_squared_ci.high:.3f}]"
        assert f"R² = {fit.r_squared_text};" in html  # the text
        assert html.count(fit.r_squared_text) == 2  # and the figure's legend: one interval, quoted twice


def test_the_fit_is_the_plain_fit_of_the_arm(fitted: tuple[list[Run], AnalysisResult]) -> None:
    """The analysis's fit is :func:`fit_decay` on the arm's first-pass attempts, with its resamples and seed."""
    runs, analysis = fitted
    fit = next(d for d in analysis.decays if d.result is not None)
    cells = runs[0].outcomes
    cells = cells[(cells["arm"] == fit.arm) & (cells["status"] != "error")]
    alone = decay.fit_decay(cells["first_pass_attempt"].astype("float").fillna(-1).to_numpy(), fit.max_attempts,
                            n_resamples=FEW, rng=decay_fits.DECAY_SEED)
    assert alone.confidence_interval("r_squared") == fit.r_squared_ci


def test_one_resample_count() -> None:
    """Every decay fit defaults to :data:`DECAY_RESAMPLES`: a report and a plain call quote one interval."""
    for function in (decay.fit_decay, decay_fits.with_decays, decay_fits.run_decays, decay_fits.arm_decays):
        assert inspect.signature(function).parameters["n_resamples"].default == DECAY_RESAMPLES


def test_no_report_module_fits_or_resamples() -> None:
    """``reports/`` renders: no module of it calls a fit or names a resample count."""
    for module in (REPO / "reports").glob("*.py"):
        text = module.read_text()
        assert "fit_decay" not in text and "n_resamples" not in text, f"{module.name} computes"
