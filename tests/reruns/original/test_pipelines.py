"""The ``@original`` pipelines end to end: the authors' classes run from a checkout named on the command line
or in the spec, their calls through the harness, their exceptions as cell errors, ``run.json`` naming the
code that ran, nothing of theirs in sotacheck's process, and bad input refused in one line before any model
call. The model is the loopback endpoint (canonical code for any prompt that names the entry point): it
drives the harness, it is no evidence about any method."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import sotacheck
from sotacheck.core.errors import InputError, SotacheckError
from sotacheck.reruns.model.loopback import LoopbackServer
from sotacheck.reruns.run import validate_spec
from tests.reruns.scripted_methods import CHECKOUTS, REFERENCE, REQUIRES_CHECKOUTS
from tests.reruns.test_harness_recovery import responder  # noqa: F401  (the canonical scripted model)
from tests.sotacheck_command import SOTACHECK

BASELINES = ["direct@original", "cot@original", "selfplanning@original", "analogical@original"]


def spec(pipelines: list[str], checkouts: dict[str, str], **more: object) -> dict[str, object]:
    return {"dataset": "humaneval", "limit": 2, "model": "loopback", "seed": 7, "original_code": checkouts,
            "pipelines": [{"name": name} for name in pipelines], **more}


@REQUIRES_CHECKOUTS
def test_every_original_runs_under_the_harness(tmp_path) -> None:
    pipelines = [*BASELINES, "mapcoder@original", "codesim@original", "codesim-wpvd@original"]
    summary = sotacheck.rerun(spec(pipelines, CHECKOUTS), out=tmp_path / "run", progress=False)
    assert (summary.finished, summary.leakage_clean) == (2 * len(pipelines), True)
    table = pd.read_csv(tmp_path / "run" / "outcomes.csv")
    for baseline in BASELINES:  # their baselines: one call each (SelfPlanning: plan, then code)
        rows = table[table["arm"] == baseline]
        assert list(rows["calls"]) == ([2, 2] if baseline.startswith("selfplanning") else [1, 1])
        assert set(rows["status"]) <= {"passed", "failed"} and rows["status"].eq("passed").any()
    # MapCoder's retrieval reply is no XML here: their parser raises, the cell is an error naming it, the run goes on
    mapcoder = table[table["arm"] == "mapcoder@original[k=3,t=5]"]
    assert list(mapcoder["status"]) == ["error", "error"] and list(mapcoder["calls"]) == [1, 1]
    with sqlite3.connect(tmp_path / "run" / "store.sqlite") as db:
        (raw,) = db.execute("SELECT detail FROM cells WHERE arm = 'mapcoder@original[k=3,t=5]' LIMIT 1").fetchone()
    detail = json.loads(raw)
    assert detail["error"].startswith("MapCoder: ") and "promptings/MapCoder.py" in detail["error"]
    codesim = table[table["arm"] == "codesim@original[d=5,p=5]"]
    assert set(codesim["status"]) <= {"passed", "failed"} and (codesim["calls"] >= 3).all()
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    mapcoder_code = manifest["original_code"]["mapcoder"]
    assert mapcoder_code["path"] == str(Path(CHECKOUTS["mapcoder"]).resolve())
    assert mapcoder_code["commit"] is None and len(mapcoder_code["content_hash"]) == 64  # a copy, not a git checkout
    assert mapcoder_code["classes"]["mapcoder@original[k=3,t=5]"] == "promptings.MapCoder.MapCoder"
    assert manifest["original_code"]["codegenerator"]["classes"] == {
        "codesim@original[d=5,p=5]": "promptings.CodeSIM.CodeSIM",
        "codesim-wpvd@original[d=5,p=5]": "promptings.variations.CodeSIMWPVD.CodeSIMWPVD"}
    # their modules never entered this process (their `datasets` would shadow Hugging Face's)
    assert not {"promptings", "results", "evaluations"} & set(sys.modules)
    hf = sys.modules.get("datasets")
    assert hf is None or str(REFERENCE) not in str(getattr(hf, "__file__", ""))


@REQUIRES_CHECKOUTS
def test_replay_rederives_the_original_cells(tmp_path) -> None:
    sotacheck.rerun(spec(["direct@original", "codesim@original"], CHECKOUTS), out=tmp_path / "run", progress=False)
    first = pd.read_csv(tmp_path / "run" / "outcomes.csv").drop(columns=["wall_s"])
    replayed = sotacheck.resume(tmp_path / "run", replay=True, progress=False)
    assert replayed.sent == 0
    again = pd.read_csv(tmp_path / "run" / "outcomes.csv").drop(columns=["wall_s"])
    pd.testing.assert_frame_equal(first.drop(columns=["finished_at"], errors="ignore"),
                                  again.drop(columns=["finished_at"], errors="ignore"))


def _copy(tmp_path: Path, repository: str) -> Path:
    target = tmp_path / repository
    shutil.copytree(CHECKOUTS[repository], target)
    return target


@pytest.mark.parametrize(("pipelines", "checkouts", "message"), [
    (["mapcoder@original"], {}, "pipeline 'mapcoder@original' runs the authors' code: name the checkout with "
                                "--original-code mapcoder=PATH"),
    (["mapcoder@original"], {"mapcoder": "/nonexistent"}, "original code mapcoder=/nonexistent: no such directory"),
    pytest.param(["codesim@original"], {"codegenerator": CHECKOUTS["mapcoder"]},
                 "not a checkout of kagnlp/CodeGenerator (no src/promptings/CodeSIM.py)", marks=REQUIRES_CHECKOUTS),
    (["direct"], {"mapcodr": CHECKOUTS["mapcoder"]}, "unknown original-code repository 'mapcodr'"),
])
def test_bad_checkouts_are_one_line_errors(pipelines, checkouts, message) -> None:
    with pytest.raises(SotacheckError) as caught:
        validate_spec(spec(pipelines, checkouts), "spec")
    assert message in str(caught.value) and "\n" not in str(caught.value)


@REQUIRES_CHECKOUTS
def test_a_checkout_missing_the_class(tmp_path) -> None:
    copy = _copy(tmp_path, "mapcoder")
    (copy / "src" / "promptings" / "SelfPlanning.py").unlink()
    source = copy / "src" / "promptings" / "MapCoder.py"
    source.write_text(source.read_text().replace("class MapCoder(", "class MapCoderRenamed("))
    with pytest.raises(InputError, match=r"no promptings/SelfPlanning\.py, so no class SelfPlanningStrategy"):
        validate_spec(spec(["selfplanning@original"], {"mapcoder": str(copy)}), "spec")
    with pytest.raises(InputError, match=r"promptings/MapCoder\.py defines no class MapCoder$"):
        validate_spec(spec(["mapcoder@original"], {"mapcoder": str(copy)}), "spec")


@REQUIRES_CHECKOUTS
def test_the_command_line_refuses_a_bad_checkout_before_any_model_call(tmp_path, responder) -> None:  # noqa: F811
    with LoopbackServer(responder) as server:
        done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "mapcoder@original",
                               "--original-code", f"mapcoder={tmp_path}", "--model", server.base_url, "--model-name",
                               "loopback", "--limit", "1", "--out", str(tmp_path / "run")],
                              capture_output=True, text=True, timeout=120)
        assert server.log.entries == []
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1
    assert "not a checkout of Md-Ashraful-Pramanik/MapCoder (no src/promptings/Base.py)" in done.stderr
    assert not (tmp_path / "run" / "store.sqlite").exists()


@REQUIRES_CHECKOUTS
def test_the_command_line_names_the_checkout(tmp_path, responder) -> None:  # noqa: F811
    with LoopbackServer(responder) as server:
        done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct@original,direct",
                               "--original-code", f"mapcoder={CHECKOUTS['mapcoder']}", "--model", server.base_url,
                               "--model-name", "loopback", "--limit", "2", "--seed", "7", "--out", str(tmp_path / "run")],
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["spec"]["original_code"] == {"mapcoder": CHECKOUTS["mapcoder"]}
    assert manifest["original_code"]["mapcoder"]["classes"] == {"direct@original": "promptings.Direct.DirectStrategy"}
