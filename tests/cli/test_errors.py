"""The CLI's error contract: a user error is one line and exit 2 (with its traceback under ``--debug``); a bug
is a traceback; ``--version`` is the package's; commands are loaded lazily, one at a time."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import sotacheck
import sotacheck.api
from sotacheck.cli import main as cli_main
from sotacheck.core.errors import UsageError
from tests.sotacheck_command import SOTACHECK

RUNS = Path(__file__).resolve().parents[2] / "recordings"


def test_a_user_error_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([*SOTACHECK, "analyze", str(tmp_path / "missing")], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"sotacheck: error: run directory {str(tmp_path / 'missing')!r} "
                                                "does not exist"]


def test_debug_shows_the_traceback_of_a_user_error(tmp_path: Path) -> None:
    done = subprocess.run([*SOTACHECK, "--debug", "analyze", str(tmp_path / "missing")], capture_output=True,
                          text=True)
    assert done.returncode == 2
    assert "Traceback (most recent call last)" in done.stderr and "OutcomeError" in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("sotacheck: error: run directory")


def test_a_bug_is_not_caught_as_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(sotacheck.api, "analyze", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        cli_main.main(["analyze", str(RUNS / "methods-qwen05b")])


def test_version_comes_from_the_package_metadata() -> None:
    assert sotacheck.__version__ == metadata.version("sotacheck")
    done = subprocess.run([*SOTACHECK, "--version"], capture_output=True, text=True)
    assert done.stdout.strip() == f"sotacheck {metadata.version('sotacheck')}"


def test_resamples_must_be_positive() -> None:
    done = subprocess.run([*SOTACHECK, "analyze", str(RUNS / "methods-qwen05b"), "--resamples", "0"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "--resamples" in done.stderr
    with pytest.raises(UsageError, match="`resamples`"):
        sotacheck.analyze([RUNS / "methods-qwen05b"], resamples=0)


def test_every_lazily_loaded_command_resolves_to_its_name() -> None:
    context = cli_main.click.Context(cli_main.app)
    names = cli_main.app.list_commands(context)
    assert names == sorted(cli_main.COMMANDS) and {"analyze", "compare", "gate", "leaderboard", "report"} <= set(names)
    for name in names:
        command = cli_main.app.get_command(context, name)
        assert command is not None and command.name == name
    assert cli_main.app.get_command(context, "no-such-command") is None


def test_a_judge_run_imports_no_other_command() -> None:
    code = ("import sys; from sotacheck.cli.main import app; app.main(['judge', '--help'], standalone_mode=False); "
            "print(sorted(m for m in sys.modules if m.startswith('sotacheck.cli.')))")
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True)
    loaded = done.stdout.strip().splitlines()[-1]
    assert loaded == "['sotacheck.cli.judge', 'sotacheck.cli.main', 'sotacheck.cli.options']", loaded


def test_an_error_names_the_parameter_to_python_and_the_flag_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The audit names what the caller set: ``arm`` to a Python caller, ``--arm`` on the command line; the
    table's own `` `samples` `` column stays a column in both."""
    table = tmp_path / "t.csv"
    table.write_text("model,problem,pass@1,samples\na,p,0.3,10\nb,p,0.5,10\n")
    with pytest.raises(UsageError) as caught:
        sotacheck.import_logs("csv", path=table, out=tmp_path / "api", arm="x", dataset="humaneval")
    assert str(caught.value).startswith("`arm` names one system, but ") and caught.value.parameters == ("arm",)
    with pytest.raises(UsageError) as caught:
        sotacheck.import_logs("csv", path=table, out=tmp_path / "api", sample_count=10, dataset="humaneval")
    assert str(caught.value).startswith("`sample_count` gives the sample count of a fraction column without a "
                                        "`samples` column"), caught.value
    for args, said in ((["--arm", "x"], "sotacheck: error: --arm names one system, but "),
                       (["--sample-count", "10"], "sotacheck: error: --sample-count N gives the sample count of a "
                                                  "fraction column without a `samples` column")):
        with pytest.raises(SystemExit) as ended:
            cli_main.main(["import", "csv", str(table), "--out", str(tmp_path / "cli"), "--dataset", "humaneval", *args])
        assert ended.value.code == 2
        assert capsys.readouterr().err.startswith(said)
    assert not (tmp_path / "cli").exists() and not (tmp_path / "api").exists()



def test_a_json_error_reads_once_where_it_is(tmp_path: Path) -> None:
    """json's own message "Unterminated string starting at" once came out as "starting at at column 10"."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "outcomes.csv").write_text("arm,dataset,problem,repeat,passed\na,d,p,0,1\n")
    (run_dir / "run.json").write_text('{"name": "x')
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "x')  # the string starts at column 42
    for args, expected in (
            (["analyze", str(run_dir)], f"{run_dir / 'run.json'}: invalid JSON (unterminated string starting at "
                                        "line 1, column 10)"),
            (["judge", "--dataset", "humaneval", "--samples", str(samples)],
             f"{samples}:1: invalid JSON (unterminated string starting at line 1, column 42)")):
        done = subprocess.run([*SOTACHECK, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stderr.strip().splitlines() == [f"sotacheck: error: {expected}"]
        assert " at at " not in done.stderr


def test_several_paths_after_a_repeatable_option_name_how_to_repeat_it(tmp_path: Path) -> None:
    """``claims f.yaml --runs A B`` read B as a claims file; ``report RUN --claims a.yaml b.yaml`` read b.yaml as
    a run: each says to repeat the option, and how."""
    claims = RUNS.parent / "data" / "claims"
    a, b = RUNS / "methods-qwen05b", tmp_path / "B"
    b.mkdir()
    done = subprocess.run([*SOTACHECK, "claims", str(claims / "mapcoder.yaml"), "--runs", str(a), str(b)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"sotacheck: error: {b} is a directory, not a claims file; to give several run directories, repeat --runs "
        f"for each (--runs {a} --runs {b})"]
    first, second = claims / "mapcoder.yaml", claims / "codesim.yaml"
    done = subprocess.run([*SOTACHECK, "report", str(a), "--claims", str(first), str(second), "-o",
                           str(tmp_path / "r.html")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"repeated for each (--claims {first} --claims {second})" in done.stderr
    assert not (tmp_path / "r.html").exists()
    help_text = subprocess.run([*SOTACHECK, "claims", "--help"], capture_output=True, text=True).stdout
    assert "repeat it for each run" in " ".join(help_text.split())


def test_rerun_into_a_folder_holding_another_kind_of_run_is_refused_and_nothing_is_replaced(tmp_path: Path) -> None:
    """A rerun's --out onto an imported or judged run would have replaced its outcome tables."""
    import shutil

    target = tmp_path / "judged"
    shutil.copytree(RUNS / "methods-qwen05b", target, ignore=shutil.ignore_patterns("store.sqlite*", "*.log"))
    before = {path.name: path.read_bytes() for path in target.iterdir()}
    done = subprocess.run([*SOTACHECK, "rerun", "--dataset", "humaneval", "--pipelines", "direct", "--model",
                           "http://127.0.0.1:9/v1", "--model-name", "x", "--limit", "2", "--out", str(target)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"sotacheck: error: {target} already exists and holds no rerun (no run store) that this run could resume; "
        "nothing was written: choose another --out, or remove it first"]
    assert {path.name: path.read_bytes() for path in target.iterdir()} == before
