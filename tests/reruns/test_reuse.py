"""`--reuse RUN`: a new run answers identical requests from an earlier run's store instead of the model.
Driven by the scripted loopback endpoint (harness mechanics, not evidence about a method)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from sotacheck.reruns.model.loopback import LoopbackServer
from tests.sotacheck_command import SOTACHECK

from .test_harness_recovery import responder  # noqa: F401  (the scripted-model fixture)

COMMON = ["--dataset", "humaneval", "--limit", "5", "--seed", "3", "--concurrency", "2"]


def rerun(server: LoopbackServer, out: Path, attempts: int, *extra: str, model_name: str = "loopback") -> None:
    done = subprocess.run([*SOTACHECK, "rerun", "--pipelines", "direct,pycapsule", "--param",
                           f"pycapsule.max_attempts={attempts}", "--model", server.base_url, "--model-name",
                           model_name, *COMMON, "--out", str(out), *extra], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def table(run: Path) -> pd.DataFrame:
    return pd.read_csv(run / "outcomes.csv").drop(columns=["wall_s"]).sort_values(["arm", "problem"]).reset_index(drop=True)


def calls(run: Path) -> pd.DataFrame:
    with sqlite3.connect(run / "store.sqlite") as db:
        return pd.read_sql("SELECT call_id, cache_key, response, served_from FROM calls", db)


@pytest.mark.slow  # make test-all (the fast tier stays under 5 minutes)
def test_reused_replies_are_not_sent_and_change_no_outcome(tmp_path, responder) -> None:  # noqa: F811
    with LoopbackServer(responder) as server:
        rerun(server, tmp_path / "donor", 1)
        donor_sent = len(server.log.answered())
        rerun(server, tmp_path / "reusing", 3, "--reuse", str(tmp_path / "donor"))
        reusing_sent = len(server.log.answered()) - donor_sent
        rerun(server, tmp_path / "alone", 3)
        alone_sent = len(server.log.answered()) - donor_sent - reusing_sent

    pd.testing.assert_frame_equal(table(tmp_path / "reusing"), table(tmp_path / "alone"), check_dtype=False)
    donor, reusing = calls(tmp_path / "donor"), calls(tmp_path / "reusing")
    reused = reusing[reusing["served_from"].str.startswith("reuse:")]
    # Every request the donor already received is reused, not sent; the rest go to the endpoint.
    assert set(reused["cache_key"]) == set(reusing["cache_key"]) & set(donor["cache_key"])
    assert len(reused) > 0 and reusing_sent == alone_sent - len(reused)
    by_id = donor.set_index("call_id")
    for row in reused.itertuples():
        _, origin, donor_id = row.served_from.split(":")
        assert origin == "donor" and by_id.loc[donor_id, "response"] == row.response
    with sqlite3.connect(tmp_path / "reusing" / "store.sqlite") as db:
        remembered = db.execute("SELECT value FROM meta WHERE key = 'reuse_from'").fetchone()[0]
    assert str((tmp_path / "donor").resolve()) in remembered  # a resume reuses the same run
    provenance = json.loads((tmp_path / "reusing" / "run.json").read_text())
    assert provenance["reuse_from"] == [str((tmp_path / "donor").resolve())]


def test_bad_reuse_fails_before_any_model_call(tmp_path, responder) -> None:  # noqa: F811
    with LoopbackServer(responder) as server:
        out = tmp_path / "new"
        done = subprocess.run([*SOTACHECK, "rerun", "--pipelines", "direct", "--model", server.base_url,
                               "--model-name", "loopback", *COMMON, "--out", str(out), "--reuse",
                               str(tmp_path / "missing")], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2
        assert f"--reuse {tmp_path / 'missing'}: no run store" in done.stderr
        assert not out.exists() and server.log.answered() == []

        rerun(server, tmp_path / "other-model", 0, model_name="another-model")
        sent = len(server.log.answered())
        done = subprocess.run([*SOTACHECK, "rerun", "--pipelines", "direct", "--model", server.base_url,
                               "--model-name", "loopback", *COMMON, "--out", str(out), "--reuse",
                               str(tmp_path / "other-model")], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "its replies can never match" in done.stderr
        assert len(server.log.answered()) == sent
