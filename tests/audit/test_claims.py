"""The claims registry: coverage of ../shared/reference/claims.md, the reviews' verdicts reproduced by
computation, a run-backed claim on real published outcomes, and bad input."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sotacheck.audit.claims import ClaimsError, check_claims, load_registry
from sotacheck.audit.importers.mapcoder import import_mapcoder
from sotacheck.audit.paired import mcnemar_exact
from sotacheck.core.rundir import load_run, write_run
from tests.sotacheck_command import SOTACHECK

REPO = Path(__file__).resolve().parents[2]
REGISTRY = sorted((REPO / "data" / "claims").glob("*.yaml"))


@pytest.fixture(scope="module")
def verdicts() -> dict[str, object]:
    return {v.id: v for v in check_claims(REGISTRY, dataset_sizes={"humaneval": 164})}


def test_every_number_in_the_reference_is_in_the_registry(data_dir) -> None:
    text = (data_dir.parent / "reference" / "claims.md").read_text()
    paper_sections = text.split("## Coderlet")[0]
    body = re.sub(r"arXiv \d{4}\.\d{5}|seed \d{3}_[0-9a-f]+\.txt|GPT-[\d.o]+|Qwen2\.5-Coder-\d+B|LLaMa3\.1-70B|"
                  r"Gemma2-9B|GPT-5-mini|MiniMax-M2\.5|v2\b|§\d+(\.\d+)?|Table \d|I\(x\)", "", paper_sections)
    numbers = set(re.findall(r"\d+(?:[.,]\d+)+|\d{2,}", body))
    registry_text = "\n".join(path.read_text() for path in REGISTRY)
    registry_numbers = set(re.findall(r"\d+(?:\.\d+)?", registry_text.replace(",", "")))
    missing = sorted(n for n in numbers if n.replace(",", "") not in registry_numbers
                     and str(float(n.replace(",", ""))) not in registry_numbers)
    assert missing == []


def test_every_claim_has_a_source_and_the_four_papers_are_there() -> None:
    papers = {load_registry(p).paper.id for p in REGISTRY}
    assert {"pycapsule", "codesim", "ecloop", "agentcoder"} <= papers
    for path in REGISTRY:
        for claim in load_registry(path).claims:
            assert claim.source.strip(), claim.id


def test_pycapsule_lead_over_agentcoder_is_not_significant(verdicts) -> None:
    v = verdicts["pycapsule-he-gpt4-vs-agentcoder"]
    assert (v.verdict, v.check) == ("not significant", "paired-reconstruction")
    # 96.5 over 3 runs is 475 of 492 run-passes against 3 × 158 = 474: a net of 1/3 problem, p = 1 for every
    # pattern (one problem +1/3 at best: sign-flip p = 2 · 1/2 = 1)
    assert v.numbers["passes_over_runs"] == [475, 158] and v.pvalue is None and v.pvalue_range == (1.0, 1.0)
    runs = v.check_named("margin-vs-single")
    # one-sample t of 96.5 ± 0.7 (3 runs) vs 96.3: t = 0.494872, df = 2, p = 0.669711 if SD, 0.801970 if SE
    assert runs.numbers["pvalue_if_sd"] == pytest.approx(0.669711, rel=1e-5)
    assert runs.numbers["pvalue_if_se"] == pytest.approx(0.801970, rel=1e-5)
    assert runs.pvalue == pytest.approx(0.669711, rel=1e-5)
    assert any("SD or an SE" in note for note in runs.notes)
    assert runs.numbers["problem_sampling_se_pp"] == pytest.approx(1.435, abs=1e-3)


def test_ecloop_smallest_gain_is_significant_over_the_regression_range(verdicts) -> None:
    v = verdicts["ecloop-smallest-gain"]
    assert v.verdict == "supported"
    low, high = v.numbers["pvalue_range"]
    assert low == pytest.approx(mcnemar_exact(33, 9).pvalue) and low == pytest.approx(0.000271539, rel=1e-5)
    assert high == pytest.approx(mcnemar_exact(40, 16).pvalue) and high == pytest.approx(0.00184155, rel=1e-5)
    assert low * 0.9 < 0.0003 and high < 0.002


def test_ecloop_ablation_cannot_resolve_five_points(verdicts) -> None:
    v = verdicts["ecloop-ablation-100"]
    assert (v.verdict, v.check) == ("unverifiable from what was published", "minimum-detectable-difference")
    assert min(v.numbers["paired_pp_by_discordance"].values()) > 5.0
    assert v.numbers["unpaired_up_pp"] > 10.0 and v.numbers["smallest_detectable_pp"] > 5.0


def test_bigcodebench_gain_is_over_a_base_model(verdicts) -> None:
    v = verdicts["pycapsule-bigcodebench-24-4"]
    assert v.verdict == "contradicted"
    assert "base model" in v.reason and v.numbers["gain_pp"] == pytest.approx(24.4)


def test_consistency_checks(verdicts) -> None:
    assert verdicts["pycapsule-table3-mapcoder-48-1"].verdict == "contradicted"
    assert verdicts["codesim-apps-size"].verdict == "contradicted"
    assert verdicts["codesim-humaneval-size"].verdict == "supported"


def test_rerun_backed_claim_end_to_end_on_released_logs(tmp_path, data_dir) -> None:
    frame, meta = import_mapcoder(data_dir / "published-runs/mapcoder/ChatGPT/HumanEval")
    run_dir = write_run(tmp_path / "mapcoder-he", frame, meta)
    done = subprocess.run([*SOTACHECK, "claims", str(REPO / "data/claims/mapcoder.yaml"), "--runs", str(run_dir),
                           "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result = {v["id"]: v for v in json.loads(done.stdout)}
    v = result["mapcoder-beats-cot-he-chatgpt"]
    assert {"id", "paper", "verdict", "reason", "pvalue"} <= set(v)
    assert (v["verdict"], v["deciding_check"]) == ("supported", "rerun")
    assert (v["numbers"]["b"], v["numbers"]["c"]) == (30, 11)  # MapCoder-only vs CoT-only solved problems
    assert v["pvalue"] == pytest.approx(mcnemar_exact(30, 11).pvalue)
    assert v["numbers"]["measured_margin_pp"] == pytest.approx(100 * (132 - 113) / 164)
    assert v["numbers"]["published_margin_pp"] == pytest.approx(80.5 - 68.9)
    low, high = v["numbers"]["ci_pp"]
    assert low < v["numbers"]["measured_margin_pp"] < high
    # without the run the published totals decide: 132 vs 113 of 164, significant for every split they allow
    without = check_claims([REPO / "data/claims/mapcoder.yaml"])[0]
    assert (without.verdict, without.check) == ("supported", "paired-reconstruction")
    assert without.numbers["pvalue_range"][1] == pytest.approx(mcnemar_exact(51, 32).pvalue)


def _write(tmp_path: Path, claim_patch: dict[str, object], drop: str | None = None) -> Path:
    registry = yaml.safe_load((REPO / "data/claims/pycapsule.yaml").read_text())
    claim = registry["claims"][0]
    claim.update(claim_patch)
    if drop:
        claim.pop(drop)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(registry, allow_unicode=True))
    return path


@pytest.mark.parametrize(("patch", "drop", "message"), [
    ({}, "benchmark", "field `benchmark`: Field required"),
    ({"n": -164}, None, "field `n`: Input should be greater than 0"),
    ({"method": {"name": "PyCapsule", "value": 106.5, "runs": 3, "spread": 0.7}}, None,
     "field `method.value`: value 106.5 is a percentage outside [0, 100]"),
])
def test_bad_registry_names_file_claim_and_field(tmp_path, patch, drop, message) -> None:
    path = _write(tmp_path, patch, drop)
    with pytest.raises(ClaimsError) as info:
        load_registry(path)
    assert str(info.value).startswith(f"{path}: claim 'pycapsule-he-gpt4-vs-agentcoder': ")
    assert message in str(info.value)


def test_run_lacking_a_named_arm_names_file_claim_and_field(tmp_path, data_dir) -> None:
    frame, meta = import_mapcoder(data_dir / "published-runs/mapcoder/ChatGPT/HumanEval/ChatGPT-CoT-Python3-0-1.jsonl")
    run_dir = write_run(tmp_path / "mapcoder-he", frame, meta)
    path = REPO / "data/claims/mapcoder.yaml"
    with pytest.raises(ClaimsError) as info:
        check_claims([path], runs=[load_run(run_dir)])
    assert str(info.value).startswith(f"{path}: claim 'mapcoder-beats-cot-he-chatgpt': field `rerun.method_arm`: "
                                      "arm 'MapCoder-5-5' is not in run 'mapcoder-he'")
    done = subprocess.run([*SOTACHECK, "claims", str(path), "--runs", str(run_dir)], capture_output=True, text=True)
    assert done.returncode == 2 and "rerun.method_arm" in done.stderr


def test_rerun_backed_claim_on_our_own_recorded_run() -> None:
    """PyCapsule vs Direct with Qwen2.5-Coder-0.5B on the recorded run under recordings/: the verdict's
    numbers equal an exact McNemar test computed here from the run's outcome table."""
    from scipy import stats

    run_dir = REPO / "recordings" / "reference-qwen05b"
    table = pd.read_csv(run_dir / "outcomes.csv")
    pivot = table.pivot(index="problem", columns="arm", values="passed").astype(bool)
    b = int((pivot["pycapsule[max_attempts=5]"] & ~pivot["direct"]).sum())
    c = int((~pivot["pycapsule[max_attempts=5]"] & pivot["direct"]).sum())
    verdict = next(v for v in check_claims([REPO / "data/claims/pycapsule.yaml"], runs=[load_run(run_dir)])
                   if v.id == "pycapsule-beats-direct-qwen05b-rerun")
    assert (verdict.numbers["b"], verdict.numbers["c"]) == (b, c)
    expected_p = stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    assert verdict.pvalue == pytest.approx(expected_p, rel=1e-12)
    assert verdict.numbers["measured_margin_pp"] == pytest.approx(100 * (b - c) / len(pivot))
    low, high = verdict.numbers["ci_pp"]
    assert low <= verdict.numbers["measured_margin_pp"] <= high
    expected = "supported" if expected_p < 0.05 and b > c else "contradicted" if expected_p < 0.05 else "not significant"
    assert verdict.verdict == expected


def test_the_old_name_of_a_verdicts_pvalue_range_still_reads_for_a_release() -> None:
    import warnings

    from sotacheck.audit.compare import compare

    verdict = compare(40.0, 35.0, 164)
    with pytest.warns(DeprecationWarning, match=r"^ClaimVerdict\.p_range is deprecated: it was renamed "
                                                r"ClaimVerdict\.pvalue_range"):
        assert verdict.p_range == verdict.pvalue_range is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name does not warn
        assert verdict.as_dict()["pvalue_range"] == list(verdict.pvalue_range)
