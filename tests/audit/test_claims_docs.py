"""docs/claims.md: every worked example runs and gives the verdict printed there, every field of the model is
documented, and the generated JSON Schema validates every shipped claims file and rejects a misspelled field."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from sotacheck.audit.claim_model import Claim, Discordant, Paper, Range, Reference, RerunArms, Side
from sotacheck.audit.importers.mapcoder import import_mapcoder
from sotacheck.core.rundir import write_run
from tests.sotacheck_command import SOTACHECK

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "claims.md").read_text()
REGISTRY = sorted((REPO / "data" / "claims").glob("*.yaml"))
EXAMPLE = re.compile(r"```yaml\n# example: (?P<name>[\w-]+)\n(?P<body>.*?)```\n\nVerdict: `(?P<verdict>[^`]+)`, "
                     r"decided by `(?P<check>[^`]+)`\.", re.S)
EXAMPLES = {m["name"]: m for m in EXAMPLE.finditer(DOC)}


def test_the_docs_hold_four_worked_examples() -> None:
    assert set(EXAMPLES) == {"margin-with-runs", "totals-straddling", "totals-with-regressions", "per-problem-logs"}


@pytest.fixture(scope="module")
def mapcoder_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frame, meta = import_mapcoder(REPO / "data/published/mapcoder/ChatGPT/HumanEval")
    return write_run(tmp_path_factory.mktemp("runs") / "mapcoder-he", frame, meta)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_example_gives_the_verdict_printed(name: str, mapcoder_run: Path) -> None:
    example = EXAMPLES[name]
    extra = ["--runs", str(mapcoder_run)] if name == "per-problem-logs" else []
    done = subprocess.run([*SOTACHECK, "claims", "-", "--json", *extra], input=example["body"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    [verdict] = json.loads(done.stdout)
    assert (verdict["verdict"], verdict["deciding_check"]) == (example["verdict"], example["check"])


def _evaluate_example(name: str):
    from sotacheck.audit.claim_registry import ClaimRegistry
    from sotacheck.audit.claims import evaluate

    claim = ClaimRegistry.model_validate(yaml.safe_load(EXAMPLES[name]["body"])).claims[0]
    return claim, evaluate(claim, "ours")


def test_example_numbers_quoted_in_the_prose() -> None:
    _, verdict = _evaluate_example("margin-with-runs")
    paired, fisher, runs = (verdict.check_named(n) for n in ("paired-reconstruction", "two-proportions",
                                                             "margin-vs-single"))
    assert paired and fisher and runs
    low, high = paired.numbers["pvalue_range"]
    assert f"{low:.2g}" == "0.00049" and paired.numbers["most_significant"] == "12 problems each +1/3"
    assert f"{paired.numbers['pvalue_high_seen']:.2g}" == "0.57" and high == 1.0
    assert f"{fisher.pvalue:.3f}" == "0.554" and f"{runs.pvalue:.2f}" == "0.03"
    quoted = ("p from 0.000488 (12 problems each +1/3) to at least 0.572 (b = 16, c = 12 whole problems) and at most 1 "
              "(Chernoff bound over every pattern)")
    assert quoted in " ".join(DOC.split()) and quoted in paired.result


def test_the_straddling_example_quotes_its_range_and_the_assumption() -> None:
    claim, verdict = _evaluate_example("totals-straddling")
    low, high = verdict.pvalue_range
    assert (f"{low:.2g}", f"{high:.3f}") == ("3.8e-06", "0.127")
    quoted = "p from 3.81e-06 (b = 19, c = 0) to 0.127 (b = 79, c = 60) over the pairings the totals allow"
    assert quoted in verdict.reason and quoted in " ".join(DOC.split())
    assert f"{verdict.check_named('two-proportions').pvalue:.3f}" == "0.044"
    from sotacheck.audit.claims import evaluate

    assumed = evaluate(claim.model_copy(update={"assumptions": ["nonnegative-correlation"]}), "ours")
    assert assumed.verdict == "supported" and f"{assumed.pvalue_range[1]:.3f}" == "0.045"
    assert any("assumes nonnegative-correlation" in note for note in assumed.notes)


def test_every_field_of_the_model_is_documented() -> None:
    for model in (Claim, Side, Paper, Range, Reference, RerunArms, Discordant):
        for field in model.model_fields:
            assert f"`{field}`" in DOC, (model.__name__, field)


def _schema() -> dict:
    done = subprocess.run([*SOTACHECK, "claims", "--schema"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_schema_validates_every_shipped_claims_file_and_rejects_a_misspelled_field() -> None:
    schema = _schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for path in REGISTRY:
        errors = list(validator.iter_errors(yaml.safe_load(path.read_text())))
        assert errors == [], (path.name, errors[:1])
    raw = yaml.safe_load(REGISTRY[-1].read_text())
    raw["claims"][0]["method"]["spred"] = raw["claims"][0]["method"].pop("spread")
    assert any("spred" in error.message for error in validator.iter_errors(raw))
    raw = yaml.safe_load(REGISTRY[-1].read_text())
    raw["claims"][0]["benchmrk"] = raw["claims"][0].pop("benchmark")
    assert not validator.is_valid(raw)


def test_the_schema_and_the_loader_agree_on_a_misspelled_field(tmp_path: Path) -> None:
    text = REGISTRY[-1].read_text().replace("spread_kind: unknown", "spread_kin: unknown", 1)
    done = subprocess.run([*SOTACHECK, "claims", "-"], input=text, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == ("sotacheck: error: <stdin>: claim 'pycapsule-he-gpt4-vs-agentcoder': field "
                                   "`method.spread_kin`: Extra inputs are not permitted")
