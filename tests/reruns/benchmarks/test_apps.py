"""APPS as MapCoder and CodeSim run it: the loader, its bad-input errors, the leakage check over `test_list`,
the standard-input judge end to end on the real sandbox (statuses, feedback, a fresh process per test,
hostile programs), hand-written solutions, and every pipeline on an APPS problem with a scripted model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections import Counter
from pathlib import Path

import pytest

from sotacheck.core.errors import SotacheckError
from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.benchmarks.apps import printed
from sotacheck.reruns.benchmarks.problem import IOTest, Problem, ProblemView
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.leakage import check_leakage, hidden_asserts
from sotacheck.reruns.model.base import ChatRequest, ChatResponse, SamplingParams
from sotacheck.reruns.pipelines import Arm
from sotacheck.reruns.sandbox import SandboxLimits, SandboxPool, judge_hidden, run_visible
from sotacheck.reruns.sandbox.stdin_programs import EXECEVAL_LIMITS, run_program_tests
from sotacheck.reruns.store.run_store import CellKey, RunStore
from tests.reruns.scripted_methods import CHECKOUTS, REQUIRES_CHECKOUTS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "apps"
ADD = [IOTest("1 2\n", ("3\n",)), IOTest("5 7\n", ("12",)), IOTest("10 -3", ("7", "seven"))]
ADDER = "a, b = map(int, input().split())\nprint(a + b)\n"


@pytest.fixture(scope="module")
def apps(data_dir):
    return load_dataset("apps", data_dir)


@pytest.fixture(scope="module")
def fast_pool():
    with SandboxPool(2, SandboxLimits(test_timeout_s=1.5, problem_timeout_s=20.0, memory_mb=512)) as pool:
        yield pool


def test_the_150_problems(apps) -> None:
    assert len(apps) == 150 and len({p.id for p in apps.problems}) == 150
    assert Counter(p.difficulty for p in apps.problems) == {"introductory": 50, "interview": 52, "competition": 48}
    assert {p.kind for p in apps.problems} == {"program"} and all(p.hidden_io for p in apps.problems)
    assert sum(bool(p.starter_code) for p in apps.problems) == 98 and sum(not p.visible_io for p in apps.problems) == 13
    by_id = apps.by_id()
    assert {"APPS/1604", "APPS/1604#2", "APPS/1604#3"} <= set(by_id) and sum("#" in p.id for p in apps.problems) == 22
    assert by_id["APPS/1604#2"].hidden_io == by_id["APPS/1604"].hidden_io  # MapCoder read the split twice
    first = by_id["APPS/3554"]
    assert (first.entry_point, first.hidden_io[0]) == ("get_score", IOTest("[1]", ("100",)))
    assert not first.visible_tests and not first.hidden_tests and first.canonical_solution is None
    view = ProblemView.of(first)
    assert view.kind == "program" and view.visible_io == first.visible_io and not hasattr(view, "hidden_io")
    assert view.visible_tests[0] == "Input:\n[1, 2, 3]\nExpected output:\n100"
    assert (printed(100), printed(True), printed([1, 2]), printed(None), printed("x\n")) == (
        "100", "True", "[1, 2]", "None", "x\n")


def test_content_hashes(apps, data_dir) -> None:
    assert apps.content_hash == "e01663d3e23c22bd6d30b3225dd92182c57c10597548c106bab98775adc48742"
    execeval = load_dataset("apps-execeval", data_dir)
    assert execeval.content_hash != apps.content_hash
    assert sum(any(not t.judgeable for t in p.hidden_io) for p in execeval.problems) == 76  # 74 typed, 2 non-ASCII
    problem = apps.problems[0]
    changed = Problem(**{**problem.__dict__, "hidden_io": (*problem.hidden_io, IOTest("x", ("y",)))})
    assert changed.content_hash != problem.content_hash
    # a function problem's hash is what it always was (recorded runs replay against it)
    old = load_dataset("humaneval", data_dir).problems[0]
    payload = json.dumps([old.id, old.prompt, old.entry_point, list(old.visible_tests), list(old.hidden_tests),
                          old.test_setup], ensure_ascii=False)
    assert old.content_hash == hashlib.sha256(payload.encode()).hexdigest()


def _row(**changes: object) -> dict[str, object]:
    row: dict[str, object] = {"name": "1", "description": "Add.", "difficulty": "interview", "id": 1,
                              "sample_io": [{"input": "1 2\n", "output": ["3\n"]}],
                              "test_list": [{"input": "1 2\n", "output": ["3\n"]}], "starter_code": ""}
    row.update(changes)
    return row


@pytest.mark.parametrize(("bad", "message"), [
    (json.dumps(_row(test_list=[])), r"row 2 \(id 1\): `test_list` is empty"),
    ("{not json", r"row 2: not JSON"),
    (json.dumps(_row(difficulty="hard")), r"row 2 \(id 1\): unknown difficulty 'hard'"),
    (json.dumps(_row(test_list=[{"input": "1", "output": []}])), r"`test_list`\[0\] has no accepted `output`"),
    (json.dumps(_row(sample_io=[{"output": ["3"]}])), r"`sample_io`\[0\] has no string `input`"),
    (json.dumps(_row(id="x")), r"row 2 \(id x\): `id` is missing or not a int"),
    (json.dumps([1, 2]), r"row 2: not a JSON object"),
])
def test_a_bad_row_is_one_line_naming_file_and_row(tmp_path, bad: str, message: str) -> None:
    folder = tmp_path / "benchmarks" / "apps"
    folder.mkdir(parents=True)
    path = folder / "selected150.jsonl"
    path.write_text(json.dumps(_row()) + "\n" + bad + "\n")
    with pytest.raises(SotacheckError, match=message) as info:
        load_dataset("apps", tmp_path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_leakage_covers_the_hidden_tests(apps, tmp_path) -> None:
    problem = apps.by_id()["APPS/2133"]
    hidden = hidden_asserts(apps, problem.id)
    assert hidden and all(len(text) >= 12 for text in hidden)
    assert not any(text in "".join(problem.prompt.split()) for text in hidden)
    leaked = next(t for t in problem.hidden_io if "".join(t.input.split()) in hidden)
    for name, text, clean in (("clean", problem.prompt + "\n".join(ProblemView.of(problem).visible_tests), True),
                              ("leaky", f"{problem.prompt}\nAlso try:\n{leaked.input}", False)):
        store = RunStore.open(tmp_path / name, create=True)
        cell = CellKey("direct", "apps", problem.id, 0)
        store.prepare_call("c1", "k1", cell, "generate", "generate", None, 1,
                           {"messages": [{"role": "user", "content": text}]})
        report = check_leakage(store, apps)
        store.close()
        assert report.clean is clean and report.requests_checked == 1


def test_the_stdin_judge(fast_pool) -> None:
    def run(code: str, tests: list[IOTest] = ADD, stop: bool = False):
        return run_program_tests(fast_pool, code, tests, stop_at_first_failure=stop)

    assert run(ADDER).status == "passed"
    assert run("a, b = map(int, input().split())\nprint('seven' if a + b == 7 else a + b)\n").status == "passed"
    wrong = run("a, b = map(int, input().split())\nprint(a - b)\n")
    assert wrong.status == "failed" and [t.status for t in wrong.tests] == ["failed"] * 3
    assert wrong.exception_type == "WrongAnswer" and wrong.tests[0].output == "-1\n"
    assert wrong.feedback == "Input:\n1 2\nExpected output:\n3\nActual output:\n-1"
    assert [t.status for t in run("a, b = map(int, input().split())\nprint(a - b)\n", stop=True).tests] == ["failed"]
    crash = run("x = int(input().split()[0])\nraise ValueError(f'bad {x}')\n")
    assert (crash.status, crash.exception_type, crash.message) == ("error", "ValueError", "bad 1")
    assert 'line 2, in <module>' in (crash.feedback or "") and "Input:\n1 2" in (crash.feedback or "")
    syntax = run("def f(:\n")
    assert (syntax.status, syntax.exception_type, syntax.tests) == ("error", "SyntaxError", ())
    assert run("import sys\nprint(3)\nsys.exit(2)\n").exception_type == "NonZeroExit"
    assert run("x = [0] * (10 ** 10)\n").status == "memory_exceeded"
    # what the interpreter does at exit: threads joined, atexit run, __main__ guards and fd-level writes seen
    for code in ("import threading, sys\ndef main():\n    a, b = map(int, sys.stdin.readline().split())\n"
                 "    print(a + b)\nthreading.Thread(target=main).start()\n",
                 "import atexit, io, sys\nreal, sys.stdout = sys.stdout, io.StringIO()\n"
                 "atexit.register(lambda: real.write(sys.stdout.getvalue()))\nprint(sum(map(int, input().split())))\n",
                 "def main():\n    print(sum(map(int, open(0).read().split())))\nif __name__ == '__main__':\n    main()\n",
                 "import os\nos.write(1, str(sum(map(int, input().split()))).encode())\n"):
        assert run(code).status == "passed", code
    # a fresh process per test: state one run leaves is not the next run's
    counter = "import builtins\nbuiltins.runs = getattr(builtins, 'runs', 0) + 1\nprint(builtins.runs)\n"
    assert run(counter, [IOTest("", ("1",))] * 3).status == "passed"


@pytest.mark.slow  # ~6-10 s; `make test-all` runs it (the fast tier keeps cheaper cases of the class)
def test_hostile_stdin_programs(fast_pool) -> None:
    nonce = f"ZQX{secrets.token_hex(8)}"
    secret = [IOTest("ask\n", (nonce,))]
    # looks for the expected output wherever it might be: its own memory and files, its parent's, open fds
    snoop = (
        "import os, glob, re\nfound = ''\n"
        "def look(data):\n    global found\n    match = re.search(rb'ZQX[0-9a-f]{16}', data)\n"
        "    if match and not found:\n        found = match.group().decode()\n"
        "for path in ['/proc/self/environ', '/proc/%d/environ' % os.getppid(), '/proc/%d/cmdline' % os.getppid()]"
        " + glob.glob('/tmp/**', recursive=True) + glob.glob('*'):\n"
        "    try:\n        look(open(path, 'rb').read())\n    except Exception:\n        pass\n"
        "for fd in range(3, 64):\n    try:\n        os.set_blocking(fd, False)\n        look(os.read(fd, 1 << 20))\n"
        "    except Exception:\n        pass\n"
        "try:\n    maps = open('/proc/%d/maps' % os.getppid()).read().splitlines()\n"
        "    mem = open('/proc/%d/mem' % os.getppid(), 'rb')\n"
        "    for line in maps:\n        start, end = (int(x, 16) for x in line.split()[0].split('-'))\n"
        "        try:\n            mem.seek(start); look(mem.read(end - start))\n        except Exception:\n            pass\n"
        "except Exception:\n    pass\nprint(found or 'nothing')\n")
    result = run_program_tests(fast_pool, snoop, secret, stop_at_first_failure=True)
    assert result.status == "failed" and nonce not in (result.tests[0].output or "")
    # exiting 0 early, before printing the answer, is not a pass
    for code in ("import sys\nsys.exit(0)\nprint(3)\n", "import os\nos._exit(0)\n", "raise SystemExit\n"):
        assert run_program_tests(fast_pool, code, ADD[:1], stop_at_first_failure=True).status == "failed", code
    # ... but the exit status of a program that printed the answer is 0, however it exits
    assert run_program_tests(fast_pool, "import os\nprint(3, flush=True)\nos._exit(0)\n", ADD[:1],
                             stop_at_first_failure=True).status == "passed"
    # never reads stdin and hangs: the per-test wall limit ends it, every time
    for code in ("import time\ntime.sleep(60)\n", "while True:\n    pass\n"):
        hung = run_program_tests(fast_pool, code, ADD[:2], stop_at_first_failure=False)
        assert [t.status for t in hung.tests] == ["timeout", "timeout"] and hung.duration_s < 10
    # a fake report written on the channel gains nothing: the trusted side calls it a protocol error, never a pass
    fake = "import json, os\nm = json.dumps(['ran', 0, None, False]).encode()\nos.write(3, len(m).to_bytes(4, 'little') + m)\n"
    forged = run_program_tests(fast_pool, fake, ADD[:1], stop_at_first_failure=True)
    assert (forged.status, forged.tests[0].exception_type) == ("error", "ProtocolError"), forged
    assert run_program_tests(fast_pool, ADDER, ADD, stop_at_first_failure=True).status == "passed"  # judge still fine


def test_hand_written_solutions_pass_under_the_real_judge(apps) -> None:
    by_id = apps.by_id()
    files = sorted(FIXTURES.glob("*.py"))
    assert len(files) == 10
    assert Counter(by_id[f"APPS/{f.stem}"].difficulty for f in files) == {
        "introductory": 4, "interview": 3, "competition": 3}
    with SandboxPool(2, EXECEVAL_LIMITS) as pool:
        for file in files:
            problem = by_id[f"APPS/{file.stem}"]
            hidden = judge_hidden(pool, problem, file.read_text())
            assert hidden.status == "passed" and len(hidden.tests) == len(problem.hidden_io), (file.name, hidden)
            assert run_visible(pool, problem, file.read_text()).status == "passed", file.name


class Scripted:
    identity, endpoint = "scripted", "scripted"

    def __init__(self, code: str) -> None:
        self.code, self.prompts = code, []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.prompts.append(request.messages[-1].content)
        return ChatResponse(f"Confidence: 90\n```python\n{self.code}```", "stop", 5, 5, 0.0)


@pytest.mark.parametrize(("pipeline", "params"), [
    ("direct", {}), ("cot", {}), ("pycapsule", {"max_attempts": 1}), ("codesim", {"p": 1, "d": 1}),
    ("mapcoder", {"k": 1, "t": 1}), ("gate", {"hold_budget": 1})])
def test_every_pipeline_runs_on_apps(apps, fast_pool, tmp_path, pipeline: str, params: dict) -> None:
    problem = apps.by_id()["APPS/1607"]
    code = (FIXTURES / "1607.py").read_text()
    model = Scripted(code)
    store = RunStore.open(tmp_path, create=True)
    arm = Arm.of(pipeline, params)
    ctx = PipelineContext(problem, CellKey(arm.name, "apps", problem.id, 0), model, store, fast_pool,
                          SamplingParams(), 7)
    asyncio.run(arm.run(ctx))
    store.close()
    assert ctx.state.submitted == code.strip("\n")
    assert all("standard input" in prompt and "Python function" not in prompt for prompt in model.prompts)
    assert any("Sample input:\n```\nQAQAQYSYIOIWIN" in prompt for prompt in model.prompts)
    if pipeline != "direct" and pipeline != "cot":  # their sample-I/O evaluation ran the program on stdin
        (result,) = ctx.executions.values()
        assert result.passed and result.tests and all(t.output is not None for t in result.tests)
    assert judge_hidden(fast_pool, problem, ctx.state.submitted or "").passed


def test_debugging_feedback_shows_the_io(apps, fast_pool, tmp_path) -> None:
    problem = apps.by_id()["APPS/1607"]
    model = Scripted("print(0)\n")
    store = RunStore.open(tmp_path, create=True)
    arm = Arm.of("pycapsule", {"max_attempts": 1})
    ctx = PipelineContext(problem, CellKey(arm.name, "apps", problem.id, 0), model, store, fast_pool,
                          SamplingParams(), 7)
    asyncio.run(arm.run(ctx))
    store.close()
    fix = model.prompts[1]
    assert "Wrong answer: the program's output is not the expected output" in fix
    assert "Input:\nQAQAQYSYIOIWIN\nExpected output:\n4\nActual output:\n0" in fix


@REQUIRES_CHECKOUTS
@pytest.mark.parametrize("pipeline", ["codesim@original", "mapcoder@original"])
def test_the_authors_classes_run_on_apps(apps, fast_pool, tmp_path, pipeline: str) -> None:
    """Their APPS dataset class, with their own ExecEval feedback code answered by the sandbox."""
    problem = apps.by_id()["APPS/1607"]
    code = (FIXTURES / "1607.py").read_text()
    model = Scripted(code)
    store = RunStore.open(tmp_path, create=True)
    arm = Arm.of(pipeline)
    ctx = PipelineContext(problem, CellKey(arm.name, "apps", problem.id, 0), model, store, fast_pool,
                          SamplingParams(), 7, checkouts=CHECKOUTS)
    try:
        asyncio.run(arm.run(ctx))
    except Exception as exc:  # MapCoder's XML parser rejects the scripted reply: the cell's error names it
        assert pipeline == "mapcoder@original" and "MapCoder" in str(exc), exc
        return
    finally:
        store.close()
    assert any("standard input" in p.lower() and "QAQAQYSYIOIWIN" in p for p in model.prompts)  # their APPS prompt
    assert ctx.state.submitted is not None and judge_hidden(fast_pool, problem, ctx.state.submitted).passed
    (result,) = ctx.executions.values()  # their contest_evaluate_public_tests ran the samples in the sandbox
    assert result.passed and len(result.tests) == len(problem.visible_io)
