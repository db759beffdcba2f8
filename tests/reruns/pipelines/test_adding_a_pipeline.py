"""Adding a pipeline is one new file and one registry line: nothing in the harness, the run directory, the
analysis or the report changes. Shown with a pipeline written here (plan, then code) that exists only in
this test, run end to end on the loopback endpoint (a scripted model: control flow, not evidence about any
method) and read back through the public API."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import sotacheck
from sotacheck.core.errors import UsageError
from sotacheck.core.registry import Entry
from sotacheck.reruns.pipelines import registry

NEW_PIPELINE = '''
"""Plan first (one call), then write the code from the plan (one call per round)."""

from pydantic import Field

from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.pipelines.code import last_code_block
from sotacheck.reruns.pipelines.registry import Pipeline, PipelineParams


class Params(PipelineParams):
    rounds: int = Field(default=1, ge=1)


async def run(ctx: PipelineContext, params: Params) -> None:
    plan = await ctx.chat([("user", f"Plan a solution:\\n{ctx.problem.prompt}")], stage="plan")
    code = None
    for round_index in range(params.rounds):
        with ctx.scope("round", round_index):
            reply = await ctx.chat([("user", f"{plan}\\nNow the code:\\n{ctx.problem.prompt}")], stage="code")
        code = last_code_block(reply) or code
    ctx.submit(code, None if code else "no code block")


PIPELINE = Pipeline("plan_then_code", Params, run)
'''


@pytest.fixture
def new_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    package = tmp_path / "extra_pipelines"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "plan_then_code.py").write_text(textwrap.dedent(NEW_PIPELINE))  # the one new file
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.REGISTRY.entries, "plan_then_code",  # the one line
                        Entry("extra_pipelines.plan_then_code", "plan, then code"))
    yield "plan_then_code"
    sys.modules.pop("extra_pipelines.plan_then_code", None)
    sys.modules.pop("extra_pipelines", None)


def test_a_new_pipeline_runs_and_is_analysed_with_no_other_change(new_pipeline: str, tmp_path: Path) -> None:
    spec = {"dataset": "humaneval", "limit": 3, "model": "loopback", "seed": 7,
            "pipelines": [{"name": "direct"}, {"name": new_pipeline, "params": {"rounds": 2}}]}
    summary = sotacheck.rerun(spec, out=tmp_path / "run", progress=False)
    assert (summary.finished, summary.errors, summary.leakage_clean) == (6, 0, True)
    assert summary.calls == 3 * 1 + 3 * (1 + 2)  # direct: 1 call; plan_then_code: plan + 2 rounds
    run = sotacheck.load_run(tmp_path / "run")
    rows = run.outcomes[run.outcomes["pipeline"] == new_pipeline]
    assert set(rows["arm"]) == {"plan_then_code[rounds=2]"}
    assert rows["param.rounds"].tolist() == [2, 2, 2] and str(rows["param.rounds"].dtype) == "Int64"
    assert run.manifest.pipeline_defaults[new_pipeline] == {"rounds": 1}
    result = sotacheck.analyze([run], resamples=100)
    assert result.baseline == "direct" and [c.a for c in result.comparisons] == ["plan_then_code[rounds=2]"]
    report = sotacheck.report([run], output=tmp_path / "report.html")
    assert "plan_then_code[rounds=2]" in report.read_text()


def test_its_parameters_are_validated_once_with_the_registry_message(new_pipeline: str) -> None:
    with pytest.raises(UsageError, match="pipeline 'plan_then_code': parameter rounds"):
        registry.Arm.of(new_pipeline, {"rounds": 0})
