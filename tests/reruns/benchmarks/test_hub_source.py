"""A benchmark read from a hub dataset (``--hub-id``, spec field ``hub_id``): it reaches the loader in every
command that loads a dataset (rerun, resume, the leakage check, judge, datasets), and a hub id for a benchmark
that has no hub source is a one-line error before anything runs. ``datasets.load_dataset`` is replaced: the
tests reach no hub."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import sotacheck
from sotacheck.core.errors import InputError, SotacheckError
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.benchmarks.registry import BENCHMARKS, hub_datasets
from sotacheck.reruns.leakage import check_run_leakage
from sotacheck.reruns.store.run_store import RunStore

SOTACHECK = str(Path(sys.executable).parent / "sotacheck")
HUB_ID = "someone/mbpp-et-copy"
ROWS = [  # two MBPP-ET rows as the hub copy holds them
    {"task_id": 7, "text": "Add one to x.", "code": "def add_one(x):\n    return x + 1", "test_setup_code": "",
     "test_list": ["assert add_one(1) == 2"], "test_case_list": ["assert add_one(1) == 2", "assert add_one(-1) == 0"]},
    {"task_id": 8, "text": "Double x.", "code": "def double(x):\n    return 2 * x", "test_setup_code": "",
     "test_list": ["assert double(2) == 4"], "test_case_list": ["assert double(2) == 4", "assert double(0) == 0"]},
]


@pytest.fixture
def hub(monkeypatch) -> list[tuple[str, str]]:
    """``datasets.load_dataset`` answering ``HUB_ID``'s test split; returns the (id, split) pairs asked for."""
    datasets = pytest.importorskip("datasets")
    asked: list[tuple[str, str]] = []

    def load(hub_id: str, split: str, **_: Any) -> list[dict[str, Any]]:
        asked.append((hub_id, split))
        if hub_id != HUB_ID:
            raise FileNotFoundError(f"Dataset '{hub_id}' doesn't exist on the Hub")
        return [dict(row) for row in ROWS]

    monkeypatch.setattr(datasets, "load_dataset", load)
    return asked


def test_a_hub_id_reaches_the_loader_of_every_benchmark_that_has_a_hub_source(hub) -> None:
    data = load_dataset("mbpp-et-rows", hub_id=HUB_ID)
    assert [p.entry_point for p in data.problems] == ["add_one", "double"] and data.sources == (HUB_ID,)
    assert data.problems[0].hidden_tests == tuple(ROWS[0]["test_case_list"])
    assert hub == [(HUB_ID, "test")]
    assert {"mbpp-et", "mbpp-et-rows", "humaneval-plus", "mbpp-plus"} == set(hub_datasets()) <= set(BENCHMARKS)
    # humaneval-plus and mbpp-plus get it too (before, load_dataset dropped it and looked for local files)
    with pytest.raises(SotacheckError, match=r"^cannot load 'someone/humanevalplus' through datasets: "):
        load_dataset("humaneval-plus", hub_id="someone/humanevalplus")
    assert hub[-1] == ("someone/humanevalplus", "test")


@pytest.mark.parametrize("name", ["humaneval", "mbpp", "apps"])
def test_a_hub_id_for_a_bundled_benchmark_is_refused_not_ignored(name: str) -> None:
    with pytest.raises(SotacheckError, match=rf"^--hub-id 'x/y': dataset '{name}' is not read from a hub \(only "
                                             r"humaneval-plus, mbpp-et, mbpp-et-rows, mbpp-plus are\)$"):
        load_dataset(name, hub_id="x/y")


def test_a_rerun_its_replay_its_leakage_check_and_the_judge_read_the_hub_copy(hub, tmp_path: Path) -> None:
    spec = {"dataset": "mbpp-et-rows", "hub_id": HUB_ID, "model": "loopback", "seed": 1,
            "pipelines": [{"name": "direct"}]}
    assert sotacheck.rerun(spec, out=tmp_path / "run", progress=False).errors == 0
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["spec"]["hub_id"] == HUB_ID and manifest["dataset"]["sources"] == [HUB_ID]
    store = RunStore.open(tmp_path / "run")
    prompts = {problem: json.dumps(request) for _, problem, request in store.requests()}
    store.close()
    assert sorted(prompts) == ["MBPP/7", "MBPP/8"]
    assert "Add one to x." in prompts["MBPP/7"] and "Double x." in prompts["MBPP/8"]
    before = len(hub)
    assert sotacheck.resume(tmp_path / "run", replay=True, progress=False).errors == 0
    assert check_run_leakage(tmp_path / "run").requests_checked == 2
    assert hub[before:] == [(HUB_ID, "test")] * 2  # the replay and the leakage check
    judged = sotacheck.judge("mbpp-et-rows", canonical=True, hub_id=HUB_ID, workers=1)
    assert [v.problem_id for v in judged.verdicts] == ["MBPP/7", "MBPP/8"] and judged.passed == 2


def test_a_spec_with_a_hub_id_for_a_bundled_benchmark_fails_before_anything_runs(tmp_path: Path) -> None:
    spec = {"dataset": "humaneval", "hub_id": "x/y", "model": "loopback", "pipelines": [{"name": "direct"}]}
    with pytest.raises(InputError, match=r"^run spec: --hub-id 'x/y': dataset 'humaneval' is not read from a hub"):
        sotacheck.rerun(spec, out=tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("args", [
    ["rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model", "loopback", "--hub-id", "x/y",
     "--out", "{out}"],
    ["judge", "--dataset", "mbpp", "--canonical", "--hub-id", "x/y"],
    ["datasets", "--hub-id", "humaneval=x/y"],
    ["datasets", "--hub-id", "mbpp-plus="],
])
def test_the_cli_says_what_is_wrong_with_a_hub_id_in_one_line(args: list[str], tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = subprocess.run([SOTACHECK, *(a.format(out=out) for a in args)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--hub-id" in lines[0], result.stderr
    assert not out.exists()
