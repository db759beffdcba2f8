"""``sotacheck compare`` and ``sotacheck claims -`` through the CLI: one verdict with its deciding test, and bad
input as one line naming the field and the claim, exit 2, through files, standard input and arguments."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.sotacheck_command import SOTACHECK

REPO = Path(__file__).resolve().parents[2]
PYCAPSULE = REPO / "data/claims/pycapsule.yaml"


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SOTACHECK, *args], input=stdin, capture_output=True, text=True)


@pytest.mark.parametrize("extra", [[], ["--runs", "3", "--sd", "0.7"]])
def test_compare_prints_one_verdict_with_its_deciding_test(extra: list[str]) -> None:
    done = _run("compare", "96.5", "96.3", "--n", "164", *extra)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "NOT SIGNIFICANT (decided by paired-reconstruction, p = 1 over every allowed pairing)"
    assert sum(line.startswith(("SUPPORTED", "NOT SIGNIFICANT", "UNVERIFIABLE", "CONTRADICTED")) for line in lines) == 1
    assert "the pairing-range rule" in done.stdout.lower()
    assert "two-proportions [evidence only; alone it would say not significant]" in done.stdout
    assert ("margin-vs-single [evidence only; alone it would say not significant]" in done.stdout) == bool(extra)
    assert any(line.startswith("smallest detectable difference: At n = 164") for line in lines)


def test_compare_json_is_the_claims_verdict() -> None:
    done = _run("compare", "92.7", "90.2", "--n", "164", "--runs", "3", "--sd", "0.8", "--json")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert (verdict["verdict"], verdict["deciding_check"]) == ("unverifiable from what was published",
                                                               "paired-reconstruction")
    assert verdict["pvalue"] is None and verdict["pvalue_range"][0] == pytest.approx(2 * 2.0**-12, rel=1e-12)
    assert {c["name"] for c in verdict["checks"]} >= {"paired-reconstruction", "two-proportions", "margin-vs-single",
                                                      "minimum-detectable-difference"}
    # the old keys (#47) for one release, beside the new ones with the same values (docs/claims.md)
    assert verdict["p_range"] == verdict["pvalue_range"]
    paired = next(c["numbers"] for c in verdict["checks"] if c["name"] == "paired-reconstruction")
    assert (paired["p_range"], paired["p_high_seen"]) == (paired["pvalue_range"], paired["pvalue_high_seen"])
    runs = next(c["numbers"] for c in verdict["checks"] if c["name"] == "margin-vs-single")
    assert runs["p_if_sd"] == runs["pvalue_if_sd"]


@pytest.mark.parametrize(("args", "message"), [
    (["105", "96.3", "--n", "164"], "claim 'compare': field `A` (method.value): value 105 is a percentage outside "
                                    "[0, 100]"),
    (["96.5", "101", "--n", "164"], "claim 'compare': field `B` (baseline.value): value 101 is a percentage outside"),
    (["96.5", "96.3", "--n", "0"], "claim 'compare': field `--n` (n): Input should be greater than 0"),
    (["96.5", "96.3", "--n", "164", "--runs", "3"], "claim 'compare': field `--sd/--se/--spread` (method.spread): 3 "
                                                    "runs given without a spread"),
    (["96.5", "96.3", "--n", "164", "--sd", "0.7"], "field `--sd/--se/--spread` (method.spread): a spread (±0.7) "
                                                    "needs `runs` of at least 2"),
    (["96.5", "96.3", "--n", "164", "--runs", "3", "--sd", "1", "--se", "1"], "field `--sd/--se/--spread` "
                                                                              "(method.spread_kind): give one of"),
    (["96.5", "96.3", "--n", "164", "--discordant", "4"], "claim 'compare': field `--discordant`: expected B,C"),
    (["96.5", "90.3", "--n", "164", "--discordant", "2,9"], "field `--discordant` (claim): discordant b − c = -7, "
                                                            "but the two values differ by 10 problems of 164"),
    # #44 item 7: numbers in the wrong unit, NaN and infinities, and the other numeric arguments
    (["0.951", "0.939", "--n", "164"], "claim 'compare': field `A`, `B`: 0.951 and 0.939 are both at most 1, so they "
                                       "look like fractions, but rates are read in percent: give 95.1 93.9, or pass "
                                       "--unit fraction"),
    (["nan", "93.9", "--n", "164"], "claim 'compare': field `A` (method.value): Input should be a finite number"),
    (["95.1", "inf", "--n", "164"], "claim 'compare': field `B` (baseline.value): Input should be a finite number"),
    (["--n", "164", "--", "95.1", "-inf"], "claim 'compare': field `B` (baseline.value): Input should be a finite number"),
    (["95.1", "93.9", "--n", "164", "--runs", "3", "--sd", "nan"], "field `--sd/--se/--spread` (method.spread): Input "
                                                                   "should be a finite number"),
    (["95.1", "93.9", "--n", "164", "--runs", "3", "--sd", "-0.5"], "field `--sd/--se/--spread` (method.spread): "
                                                                    "Input should be greater than or equal to 0"),
    (["95.1", "93.9", "--n", "164", "--runs", "0", "--sd", "0.5"], "field `--runs` (method.runs): Input should be "
                                                                   "greater than or equal to 1"),
    (["95.1", "93.9", "--n", "-164"], "claim 'compare': field `--n` (n): Input should be greater than 0"),
    (["--n", "164", "--", "95.1", "-3"], "claim 'compare': field `B` (baseline.value): value -3 is negative"),
    (["0.951", "0.939", "--n", "164", "--unit", "fraction", "--runs", "3", "--sd", "nan"],
     "field `--sd/--se/--spread` (method.spread): Input should be a finite number"),
])
def test_compare_bad_arguments_are_one_line_exit_2(args: list[str], message: str) -> None:
    done = _run("compare", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr


def _pycapsule(patch: dict[str, object]) -> str:
    registry = yaml.safe_load(PYCAPSULE.read_text())
    registry["claims"][0].update(patch)
    return yaml.safe_dump(registry, allow_unicode=True)


@pytest.mark.parametrize(("patch", "message"), [
    ({"method": {"name": "PyCapsule", "value": 106.5, "runs": 3, "spread": 0.7}},
     "field `method.value`: value 106.5 is a percentage outside [0, 100]"),
    ({"n": 0}, "field `n`: Input should be greater than 0"),
    ({"method": {"name": "PyCapsule", "value": 96.5, "runs": 3}}, "field `method.spread`: 3 runs given without a spread"),
    ({"method": {"name": "PyCapsule", "value": 96.5, "runs": 3, "spread": 0.7, "spread_kind": "std"}},
     "field `method.spread_kind`: Input should be 'sd', 'se' or 'unknown'"),
    ({"baseline": {"name": "AgentCoder", "value": 96.3, "runs": 1, "spread": 0.4}},
     "field `baseline.spread`: a spread (±0.4) needs `runs` of at least 2"),
    ({"method": {"name": "PyCapsule", "value": float("nan"), "runs": 3, "spread": 0.7}},
     "field `method.value`: Input should be a finite number"),
    ({"method": {"name": "PyCapsule", "value": 96.5, "runs": 3, "spread": float("inf")}},
     "field `method.spread`: Input should be a finite number"),
    ({"margin": float("nan")}, "field `margin`: Input should be a finite number"),
    ({"assumptions": ["positive-correlation"]}, "field `assumptions.0`: Input should be 'nonnegative-correlation'"),
])
def test_bad_claims_on_stdin_name_the_claim_and_the_field(patch: dict[str, object], message: str) -> None:
    done = _run("claims", "-", stdin=_pycapsule(patch))
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith(f"sotacheck: error: <stdin>: claim 'pycapsule-he-gpt4-vs-agentcoder': {message}")


@pytest.mark.parametrize(("text", "message"), [
    ("claims: [\n  - id: x\n", "<stdin>: registry: not valid YAML at line 2"),
    ("%PDF-1.4 binary \t: :\n\x00", "<stdin>: registry: not valid YAML"),
    ("just some words\n", "<stdin>: registry: not a claims file: expected a mapping with `paper` and `claims`, got a str"),
    ("", "<stdin>: registry: not a claims file"),
])
def test_stdin_that_is_not_a_claims_yaml_is_one_line_exit_2(text: str, message: str) -> None:
    done = _run("claims", "-", stdin=text)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


def test_a_nan_written_as_yaml_is_one_line_exit_2() -> None:
    text = PYCAPSULE.read_text().replace("value: 96.3, runs: 1, provenance: copied", "value: .nan, runs: 1, "
                                         "provenance: copied", 1)
    assert ".nan" in text
    done = _run("claims", "-", stdin=text)
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    assert "claim 'pycapsule-he-gpt4-vs-agentcoder': field `baseline.value`: Input should be a finite number" in done.stderr


def test_fractions_are_read_as_such_only_when_asked() -> None:
    as_fractions = json.loads(_run("compare", "0.951", "0.939", "--n", "164", "--unit", "fraction", "--json").stdout)
    as_percent = json.loads(_run("compare", "95.1", "93.9", "--n", "164", "--json").stdout)
    assert as_fractions["pvalue_range"] == as_percent["pvalue_range"] and as_fractions["verdict"] == as_percent["verdict"]
    tiny = _run("compare", "0.951", "0.939", "--n", "164", "--unit", "percent")
    assert tiny.returncode == 0 and tiny.stdout.startswith("NOT SIGNIFICANT")


def test_claims_from_stdin_equal_claims_from_the_file() -> None:
    from_file = _run("claims", str(PYCAPSULE), "--json")
    from_stdin = _run("claims", "-", "--json", stdin=PYCAPSULE.read_text())
    assert from_file.returncode == from_stdin.returncode == 0, from_stdin.stderr
    assert json.loads(from_stdin.stdout) == json.loads(from_file.stdout)
    text = _run("claims", "-", stdin=PYCAPSULE.read_text()).stdout
    assert text.startswith("9 claims: ") and "— decided by paired-reconstruction" in text and "[decides" in text
