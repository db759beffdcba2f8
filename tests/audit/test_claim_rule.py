"""The verdict rule: problem sampling decides, whatever ``check`` is written; reference values of
../shared/reference/statistics.md ("Claims from published numbers: which uncertainty decides").

Reference values there were computed with scipy 1.17.1:
    t = (92.7 - 90.2) / (0.8 / np.sqrt(3)); 2 * stats.t.sf(abs(t), 2)                          # 0.03
    stats.fisher_exact([[152, 12], [148, 16]]).pvalue                                          # 0.554
    stats.binomtest(4, 4, .5).pvalue                                                           # 0.125
    stats.fisher_exact([[152, 12], [132, 32]]).pvalue                                          # 0.00182
    t = (96.5 - 96.3) / (0.7 / np.sqrt(3)); 2 * stats.t.sf(abs(t), 2)      # t = 0.494872, p = 0.669711
    2 * stats.t.sf(abs((96.5 - 96.3) / 0.7), 2)                             # SE reading: p = 0.801970
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from sotacheck.audit.claim_model import CheckName, Claim
from sotacheck.audit.claim_registry import ClaimRegistry
from sotacheck.audit.claims import check_registries, evaluate
from sotacheck.audit.compare import compare
from sotacheck.audit.importers.mapcoder import import_mapcoder
from sotacheck.audit.paired import feasible_mcnemar
from sotacheck.audit.power import cohens_h_detectable
from sotacheck.core.rundir import load_run, write_run

REPO = Path(__file__).resolve().parents[2]
REGISTRY = sorted((REPO / "data" / "claims").glob("*.yaml"))
CHECKS = list(CheckName.__args__)  # type: ignore[attr-defined]


def test_run_spread_cannot_support_a_margin_of_four_problems() -> None:
    # The old rule said "not significant" from whole problems only (b = 4, c = 0: p = 0.125 at best); with 3
    # runs the totals also allow twelve problems each +1/3, sign-flip p = 2·2^-12 (statistics.md), so the
    # range straddles α and the claim is unverifiable, never not significant.
    verdict = compare(92.7, 90.2, 164, runs=3, sd=0.8)
    assert (verdict.verdict, verdict.check) == ("unverifiable from what was published", "paired-reconstruction")
    runs = verdict.check_named("margin-vs-single")
    assert runs is not None and runs.verdict == "supported"
    assert runs.pvalue == pytest.approx(0.03, abs=0.005)  # published to one significant digit
    assert runs.pvalue == pytest.approx(2 * stats.t.sf(2.5 / (0.8 / np.sqrt(3)), 2), rel=1e-12)
    fisher = verdict.check_named("two-proportions")
    assert fisher is not None and fisher.pvalue == pytest.approx(0.554, abs=5e-4)
    paired = verdict.check_named("paired-reconstruction")
    assert paired is not None and paired.numbers["passes_over_runs"] == [456, 148]
    low, high = paired.numbers["pvalue_range"]
    assert low == pytest.approx(2 * 2.0**-12, rel=1e-12) and low <= 5e-4
    assert paired.numbers["most_significant"] == "12 problems each +1/3"
    assert high >= paired.numbers["pvalue_high_seen"] >= stats.binomtest(16, 28, 0.5).pvalue * (1 - 1e-9)  # b 16, c 12
    assert verdict.pvalue is None and verdict.pvalue_range == (low, high)
    assert any("run-to-run spread alone would say 'supported'" in note for note in verdict.notes)


def test_a_wide_margin_from_totals_is_supported() -> None:
    verdict = compare(92.7, 80.5, 164)
    assert verdict.verdict == "supported"
    fisher = verdict.check_named("two-proportions")
    assert fisher is not None and fisher.pvalue == pytest.approx(0.00182, rel=5e-3)


@pytest.mark.parametrize("reading", ["sd", "se", "spread"])
def test_pycapsule_numbers_are_not_significant_under_every_reading(reading: str) -> None:
    verdict = compare(96.5, 96.3, 164, runs=3, **{reading: 0.7})
    assert (verdict.verdict, verdict.check) == ("not significant", "paired-reconstruction")
    runs = verdict.check_named("margin-vs-single")
    assert runs is not None
    if reading in ("sd", "spread"):
        assert runs.numbers["t_if_sd"] == pytest.approx(0.494872, rel=1e-5)
        assert runs.numbers["pvalue_if_sd"] == pytest.approx(0.669711, rel=1e-5)
    if reading in ("se", "spread"):
        assert runs.numbers["pvalue_if_se"] == pytest.approx(0.801970, rel=1e-5)


def test_feasible_range_equals_scipy_binomtest_at_every_split() -> None:
    for net, low, high in ((4, 0, 12), (0, 0, 6), (-7, 7, 40), (24, 9, 16), (60, 0, 220)):
        b, c, p = feasible_mcnemar(net, low, high)
        expected = [stats.binomtest(int(bi), int(bi + ci), 0.5).pvalue if bi + ci else 1.0 for bi, ci in zip(b, c, strict=True)]
        np.testing.assert_allclose(p, expected, rtol=1e-10)


def test_cohens_h_matches_statsmodels() -> None:
    from statsmodels.stats.power import NormalIndPower

    assert cohens_h_detectable(164) == pytest.approx(0.309383, abs=1e-6)  # statistics.md
    for n in (20, 164, 500, 1140):
        for alpha, power in ((0.05, 0.8), (0.01, 0.9)):
            # statsmodels solves to about 1e-6; tolerance 1e-5
            expected = NormalIndPower().solve_power(nobs1=n, alpha=alpha, power=power, ratio=1.0)
            assert cohens_h_detectable(n, alpha, power) == pytest.approx(expected, abs=1e-5)


def test_published_discordance_decides_and_is_checked_against_the_totals() -> None:
    verdict = compare(95.1, 90.2, 164, discordant=(12, 4))
    assert verdict.check == "paired-counts"
    assert verdict.pvalue == pytest.approx(stats.binomtest(12, 16, 0.5).pvalue, rel=1e-12)
    assert verdict.verdict == "not significant"
    assert verdict.check_named("paired-reconstruction") is None


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list:
    frame, meta = import_mapcoder(REPO / "data/published/mapcoder/ChatGPT/HumanEval")
    mapcoder = load_run(write_run(tmp_path_factory.mktemp("runs") / "mapcoder-he", frame, meta))
    return [mapcoder, load_run(REPO / "recordings/reference-qwen05b")]


def _registries(check: str | None, keep: bool) -> list[tuple[Path, ClaimRegistry]]:
    out = []
    for path in REGISTRY:
        raw = yaml.safe_load(path.read_text())
        for claim in raw["claims"]:
            if claim.get("kind") == "rank":  # a rank claim has one check: nothing to override
                continue
            if not keep:
                claim.pop("check", None)
            if check is not None:
                claim["check"] = check
        out.append((path, ClaimRegistry.model_validate(raw)))
    return out


@pytest.mark.parametrize("with_runs", [False, True])
def test_every_shipped_claim_gets_the_same_verdict_whatever_check_is_written(runs, with_runs: bool) -> None:
    given = runs if with_runs else []
    sizes = {"humaneval": 164}
    reference = {v.id: (v.verdict, v.check) for v in check_registries(_registries(None, True), given, sizes)}
    assert len(reference) == 36  # 35 published-number claims and the MBPP rank claim (issue 44)
    assert {v.id: (v.verdict, v.check) for v in check_registries(_registries(None, False), given, sizes)} == reference
    for check in CHECKS:
        written = check_registries(_registries(check, False), given, sizes)
        assert {v.id: (v.verdict, v.check) for v in written} == reference, check
        assert all(v.requested == check for v in written if v.check != "rank")


def test_the_requested_check_is_reported_as_such() -> None:
    claim = Claim.model_validate({"id": "x", "statement": "s", "benchmark": "humaneval", "n": 164,
                                  "method": {"name": "A", "value": 92.7, "runs": 3, "spread": 0.8, "spread_kind": "sd"},
                                  "baseline": {"name": "B", "value": 90.2}, "check": "margin-vs-single"})
    verdict = evaluate(claim, "p")
    assert verdict.verdict == "unverifiable from what was published" and verdict.requested == "margin-vs-single"
    assert any(note.startswith("`check: margin-vs-single` was requested (an override request)") for note in verdict.notes)
    assert verdict.as_dict()["requested_check"] == "margin-vs-single"


def test_every_check_shown_has_its_question_and_result() -> None:
    for verdict in check_registries([(p, ClaimRegistry.model_validate(yaml.safe_load(p.read_text()))) for p in REGISTRY],
                                    [], {"humaneval": 164}):
        assert verdict.check in {c.name for c in verdict.checks}
        for check in verdict.checks:
            assert check.question.endswith(("?", ")")) and check.result, (verdict.id, check.name)


@pytest.mark.parametrize(("a", "b", "n", "expected"), [
    (80.5, 92.7, 164, "contradicted"),  # significant for every split, negative
    (85.0, 75.0, 164, "unverifiable from what was published"),  # straddles; Fisher p < 0.05 no longer decides
    (55.0, 50.0, 1140, "unverifiable from what was published"),  # the same
    (84.8, 76.2, 164, "unverifiable from what was published"),  # straddles, Fisher > 0.05
    (70.0, 60.0, 100, "unverifiable from what was published"),
    (96.5, 96.3, 164, "not significant"),  # p = 1 for every split
])
def test_every_branch_of_the_rule_from_totals(a: float, b: float, n: int, expected: str) -> None:
    ka, kb = round(a * n / 100), round(b * n / 100)
    splits = [(c + ka - kb, c) for c in range(max(0, kb - ka), min(kb, n - ka) + 1)]
    p = [stats.binomtest(bi, bi + ci, 0.5).pvalue if bi + ci else 1.0 for bi, ci in splits]
    straddles = min(p) < 0.05 <= max(p)
    assert straddles == expected.startswith("unverifiable")
    verdict = compare(a, b, n)
    assert (verdict.verdict, verdict.check) == (expected, "paired-reconstruction")
    assert verdict.check_named("paired-reconstruction").numbers["pvalue_range"] == pytest.approx([min(p), max(p)], rel=1e-10)
    assert verdict.pvalue_range == pytest.approx((min(p), max(p)), rel=1e-10) and verdict.pvalue is None
    fisher = verdict.check_named("two-proportions")
    assert fisher is not None and "never deciding" in fisher.question and "conservative" not in fisher.question


@pytest.mark.parametrize(("reported", "reproduced", "expected"), [
    (79.9, 56.7, "contradicted"),  # 131 vs 93 of 164: significant over every pairing
    (48.2, 36.6, "unverifiable from what was published"),  # Fisher p = 0.044 said contradicted; the range reaches 0.127
    (96.5, 96.3, "supported"),  # consistent over every pairing
])
def test_a_reproduction_is_decided_by_the_pairing_range(reported: float, reproduced: float, expected: str) -> None:
    claim = Claim.model_validate({"kind": "value", "id": "r", "statement": "s", "benchmark": "humaneval", "n": 164,
                                  "method": {"name": "A", "value": reported},
                                  "reproduction": {"name": "A again", "value": reproduced}})
    verdict = evaluate(claim, "p")
    assert (verdict.verdict, verdict.check) == (expected, "reproduction")
    ka, kr = round(reported * 1.64), round(reproduced * 1.64)
    splits = [(c + ka - kr, c) for c in range(max(0, kr - ka), min(kr, 164 - ka) + 1)]
    p = [stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0 for b, c in splits]
    assert verdict.pvalue_range == pytest.approx((min(p), max(p)), rel=1e-10) and verdict.pvalue is None
    fisher = stats.fisher_exact([[ka, 164 - ka], [kr, 164 - kr]]).pvalue
    assert verdict.numbers["fisher_pvalue"] == pytest.approx(fisher, rel=1e-9)
