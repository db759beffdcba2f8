"""Each method's paper sampling defaults (#19): used unless the spec sets a value, recorded per arm in
run.json and per call in the store; ``max_tokens: none`` sends no cap.

The reference values are the authors' released code: MapCoder's ``src/models/OpenAI.py`` (temperature 0,
top_p 0.95, ``max_tokens`` None) and CodeGenerator's ``src/main.py`` (temperature 0, top_p 0.95)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

import sotacheck
from sotacheck.core.errors import InputError
from sotacheck.reruns.model.base import ChatRequest, Message, SamplingParams
from sotacheck.reruns.model.openai_compat import OpenAICompatibleModel
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.spec import validate_spec
from tests.sotacheck_command import SOTACHECK

PAPER = SamplingParams(0.0, 0.95, None)


def _spec(**fields: object) -> object:
    return validate_spec({"dataset": "humaneval", "pipelines": [{"name": "direct"}], **fields}, "test")


@pytest.mark.parametrize("pipeline, params", [("mapcoder", {}), ("codesim", {}), ("direct", {}), ("cot", {}),
                                              ("pycapsule", {}), ("gate", {"base": "codesim"})])
def test_an_unset_spec_gives_each_method_its_papers_sampling(pipeline: str, params: dict[str, object]) -> None:
    spec = validate_spec({"dataset": "humaneval", "pipelines": [{"name": pipeline, "params": params}]}, "test")
    assert spec.sampling(Arm.of(pipeline, params)) == PAPER  # type: ignore[attr-defined]


def test_values_the_spec_sets_apply_to_every_arm_and_the_rest_stay_the_methods() -> None:
    spec = _spec(temperature=0.2)
    arm = Arm.of("mapcoder")
    assert spec.sampling(arm) == SamplingParams(0.2, 0.95, None)  # type: ignore[attr-defined]
    assert _spec(max_tokens=768, top_p=1.0).sampling(arm) == SamplingParams(0.0, 1.0, 768)  # type: ignore[attr-defined]
    assert _spec(max_tokens="none").sampling(arm).max_tokens is None  # type: ignore[attr-defined]
    recorded = _spec(temperature=0.2).arm_sampling()  # type: ignore[attr-defined]
    assert recorded["direct"]["temperature"] == 0.2 and recorded["direct"]["max_tokens"] == "none"
    assert recorded["direct"]["source"].startswith("run spec (temperature); otherwise MapCoder's released code")


def test_a_bad_max_tokens_is_an_error_naming_it() -> None:
    with pytest.raises(InputError, match="max_tokens"):
        _spec(max_tokens=0)
    with pytest.raises(InputError, match="max_tokens"):
        _spec(max_tokens="lots")
    done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--max-tokens", "-3",
                           "--out", "/tmp/never-made"], capture_output=True, text=True)
    assert done.returncode == 2 and "--max-tokens '-3'" in done.stderr.strip().splitlines()[-1]
    assert not Path("/tmp/never-made").exists()


def test_no_cap_sends_no_max_tokens_and_a_cap_sends_it() -> None:
    model = OpenAICompatibleModel.__new__(OpenAICompatibleModel)
    model.model = "m"
    request = ChatRequest((Message("user", "hi"),), PAPER, seed=1)
    assert "max_tokens" not in model._payload(request)
    assert model._payload(ChatRequest((Message("user", "hi"),), SamplingParams(0.0, 1.0, 300), seed=1))["max_tokens"] == 300


def test_a_rerun_records_each_arms_sampling_in_run_json_and_each_call(tmp_path: Path) -> None:
    spec = {"dataset": "humaneval", "limit": 2, "model": "loopback", "seed": 7,
            "pipelines": [{"name": "direct"}, {"name": "codesim", "params": {"p": 1, "d": 1}}]}
    summary = sotacheck.rerun(spec, out=tmp_path / "run", progress=False)
    assert summary.errors == 0
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["arm_sampling"]["direct"]["top_p"] == 0.95 and manifest["arm_sampling"]["direct"]["max_tokens"] == "none"
    assert "CodeSim's released code" in manifest["arm_sampling"]["codesim[d=1,p=1]"]["source"]
    db = sqlite3.connect(tmp_path / "run" / "store.sqlite")
    samplings = {json.dumps(json.loads(row[0])["sampling"], sort_keys=True)
                 for row in db.execute("SELECT request FROM calls")}
    db.close()
    assert samplings == {json.dumps({"max_tokens": None, "stop": [], "temperature": 0.0, "top_p": 0.95}, sort_keys=True)}
    study = sotacheck.analyze([sotacheck.load_run(tmp_path / "run")], resamples=100).studies
    assert len(study) == 1 and "max_tokens=none" in study[0].study.sampling  # both arms: one study


def test_a_resume_that_would_sample_otherwise_is_an_error(tmp_path: Path) -> None:
    """The sampling each arm got at the start is kept: a sotacheck whose defaults changed in between cannot
    resume the run into calls sampled two ways (simulated by changing the stored record)."""
    from sotacheck.core.errors import SotacheckError
    from sotacheck.reruns.store.run_store import RunStore

    spec = {"dataset": "humaneval", "limit": 1, "model": "loopback", "seed": 7, "pipelines": [{"name": "direct"}]}
    sotacheck.rerun(spec, out=tmp_path / "run", progress=False)
    store = RunStore.open(tmp_path / "run")
    recorded = store.get_meta("arm_sampling")
    assert recorded["direct"]["top_p"] == 0.95
    store.set_meta("arm_sampling", {"direct": {**recorded["direct"], "top_p": 1.0}})
    store.close()
    with pytest.raises(SotacheckError, match=r"arm direct started with sampling .*'top_p': 1.0"):
        sotacheck.resume(tmp_path / "run", progress=False)


def test_a_run_records_pipeline_revisions_and_refuses_to_resume_under_another(tmp_path: Path, monkeypatch) -> None:
    """``run.json`` names the revision of every pipeline the run ran (the gate's base too); a resume whose
    sotacheck has another revision of one of them stops with a one-line error before any model call."""
    import dataclasses

    import sotacheck.reruns.pipelines.direct as direct_module
    from sotacheck.core.errors import SotacheckError

    spec = {"dataset": "humaneval", "limit": 1, "model": "loopback", "seed": 7,
            "pipelines": [{"name": "codesim", "params": {"p": 1, "d": 0}},
                          {"name": "gate", "params": {"base": "direct", "hold_budget": 0}}]}
    assert sotacheck.rerun(spec, out=tmp_path / "run", progress=False).errors == 0
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["pipeline_revisions"] == {"codesim": 2, "gate": 1, "direct": 1}
    assert sotacheck.resume(tmp_path / "run", replay=True, progress=False).sent == 0  # same revisions: replays
    monkeypatch.setattr(direct_module, "PIPELINE", dataclasses.replace(direct_module.PIPELINE, revision=2))
    with pytest.raises(SotacheckError) as info:
        sotacheck.resume(tmp_path / "run", replay=True, progress=False)
    assert str(info.value) == (f"{tmp_path / 'run'}: pipeline direct (recorded with revision 1, this sotacheck has 2) "
                               "changed since this run was recorded, so its calls would not replay; record the run "
                               "again, or use the sotacheck it was recorded with"
                               + (f" (git revision {manifest['git_revision'][:12]})" if manifest["git_revision"] else ""))
