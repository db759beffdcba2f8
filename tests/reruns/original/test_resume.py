"""Killing a ``mapcoder@original`` run (SIGKILL at a named crash point) and resuming it gives the outcome
table of the uninterrupted run, with no received call sent again — the authors' class restarts in a fresh
child process and every call it repeats is answered from the store. The model is a scripted loopback
endpoint answering MapCoder's stages from markers it planted (see ../scripted_methods.py): it drives the
harness; it is not evidence about the method."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.model.loopback import LoopbackServer, Responder
from tests.reruns.scripted_methods import CHECKOUTS, REQUIRES_CHECKOUTS, TUTORIAL
from tests.reruns.test_harness_recovery import cli, outcomes, stored_calls

pytestmark = REQUIRES_CHECKOUTS

LIMIT = 4
_EXEMPLAR = re.compile(r"EXDESC-(\d+)")
TRIALS = [("after_receive", 5), ("before_send", 9), ("after_send", 14), ("during_execution", 2),
          ("during_outcome_write", 3)]


def mapcoder_responder(programs: dict[str, str]) -> Responder:
    """Retrieval (no marker yet): two problems in their XML; planning (an exemplar marker): a plan; verification
    (a plan, no tutorial): a confidence from the seed; coding and improving (plan and tutorial, or a code
    marker): the canonical program, except a first code at an even seed, which is wrong."""

    def respond(body: dict[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        seed = int(body.get("seed") or 0)
        entry = next(name for name in programs if f"def {name}(" in text)
        if "# CODE-" in text or ("PLAN-" in text and TUTORIAL in text):
            right = "# CODE-" in text or seed % 2  # a first code is wrong for even seeds, an improvement right
            code = programs[entry] if right else programs[entry].replace("return", "return None and", 1)
            return f"```python\n# CODE-0-0\n{code}\n```"
        if "PLAN-" in text:
            return f"<root><explanation>ok</explanation><confidence>{seed % 100}</confidence></root>"
        if "EXDESC-" in text:
            return "PLAN-" + _EXEMPLAR.findall(text)[0]
        problems = "".join(f"<problem><description>EXDESC-{i}</description><code>x</code><planning>p</planning>"
                           "</problem>" for i in range(2))
        return f"<root>{problems}<algorithm>{TUTORIAL}</algorithm></root>"

    return respond


@pytest.fixture(scope="module")
def responder(data_dir) -> Responder:
    dataset = load_dataset("humaneval", data_dir)
    return mapcoder_responder({p.entry_point: p.prompt + (p.canonical_solution or "") for p in dataset.problems})


def args(url: str, out: Path) -> list[str]:
    return ["rerun", "--dataset", "humaneval", "--pipelines", "mapcoder@original", "--param", "mapcoder@original.k=2",
            "--param", "mapcoder@original.t=1", "--original-code", f"mapcoder={CHECKOUTS['mapcoder']}",
            "--model", url, "--model-name", "loopback", "--limit", str(LIMIT), "--seed", "7", "--concurrency", "2",
            "--out", str(out)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, responder) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("ref") / "run"
    with LoopbackServer(responder) as server:
        done = cli(args(server.base_url, out))
        assert done.returncode == 0, done.stderr
    frame = outcomes(out)
    assert frame["calls"].min() == 6 < frame["calls"].max()  # some first codes passed, some were improved
    return frame


@pytest.mark.parametrize(("point", "k"), TRIALS)
def test_sigkill_then_resume_gives_the_uninterrupted_outcomes(tmp_path, responder, reference, point, k) -> None:
    out = tmp_path / "run"
    with LoopbackServer(responder) as server:
        crashed = cli(args(server.base_url, out), crash_at=f"{point}:{k}")
        assert crashed.returncode == -9, (crashed.returncode, crashed.stderr[-500:])
        resumed = cli(["resume", str(out)])
        assert resumed.returncode == 0, resumed.stderr
    pd.testing.assert_frame_equal(outcomes(out), reference)
    calls = stored_calls(out)
    assert len(calls) == reference["calls"].sum() and {state for _, state, _, _ in calls} == {"received"}
    received_at = {key: finished for _, _, key, finished in calls}
    assert [(t, key) for t, key in server.log.answered() if t > received_at[key]] == []  # nothing sent twice
