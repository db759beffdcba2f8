"""PyCapsule: control flow with a scripted model (canned replies drive the branches; not evidence that the
method works), and its deterministic tools on real broken code from MapCoder's released runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.context import PipelineContext
from sotacheck.reruns.model.base import ChatRequest, ChatResponse, SamplingParams
from sotacheck.reruns.pipelines import Arm, pycapsule
from sotacheck.reruns.pipelines.feedback import process_error
from sotacheck.reruns.pipelines.pycapsule_tools import signature_from, strip_example_calls
from sotacheck.reruns.sandbox import SandboxPool
from sotacheck.reruns.sandbox.submission import run_visible
from sotacheck.reruns.store.run_store import CellKey, RunStore


class Scripted:
    """Replies in order; remembers every request."""

    identity, endpoint = "scripted", "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(self.replies.pop(0), "stop", 10, 10, 0.0)


def fenced(code: str) -> str:
    return f"Reasoning.\n```python\n{code}\n```"


@pytest.fixture(scope="module")
def problem(data_dir):
    return load_dataset("humaneval", data_dir).by_id()["HumanEval/2"]  # truncate_number


WRONG_A = "def truncate_number(number):\n    return 1.0  # attempt A"
WRONG_B = "def truncate_number(number):\n    return number  # attempt B"
RIGHT = "def truncate_number(number):\n    return number % 1.0"


def run_pipeline(problem, replies, tmp_path, max_attempts=5):
    model = Scripted(replies)
    store = RunStore.open(tmp_path, create=True)
    params = pycapsule.PIPELINE.parse({"max_attempts": max_attempts})
    arm = Arm("pycapsule", params)
    with SandboxPool(2) as pool:
        ctx = PipelineContext(problem, CellKey(arm.name, "humaneval", problem.id, 0), model, store, pool,
                              SamplingParams(), 7)
        asyncio.run(pycapsule.run(ctx, params))
    store.close()
    return ctx, model


def test_fix_prompt_holds_only_the_last_attempt_and_its_error(problem, tmp_path) -> None:
    ctx, model = run_pipeline(problem, [fenced(WRONG_A), fenced(WRONG_B), fenced(RIGHT)], tmp_path)
    assert ctx.state.submitted is not None and "number % 1.0" in ctx.state.submitted
    assert len(model.requests) == 3 and ctx.accounting.calls == 3
    second_fix = model.requests[2].messages[-1].content
    assert "attempt B" in second_fix and "attempt A" not in second_fix
    assert "Wrong answer" in second_fix and "truncate_number(3.5)" in second_fix
    assert ctx.state.record["first_visible_pass_attempt"] == 2
    assert ctx.state.record["first_pass_attempt"] == 2
    assert [a["attempt"] for a in ctx.state.record["attempts"]] == [0, 1, 2]
    # the hidden tests' results never appear in any prompt
    assert all("check(" not in m.content for r in model.requests for m in r.messages)


def test_call_bound_is_one_plus_max_attempts(problem, tmp_path) -> None:
    ctx, model = run_pipeline(problem, [fenced(WRONG_A)] * 10, tmp_path, max_attempts=3)
    assert len(model.requests) == 4 and ctx.accounting.calls == 4
    assert "no attempt passed" in ctx.state.notes[0]


def test_max_attempts_zero_is_one_call(problem, tmp_path) -> None:
    _ctx, model = run_pipeline(problem, [fenced(WRONG_A)], tmp_path, max_attempts=0)
    assert len(model.requests) == 1


def test_reply_without_code_is_a_failed_attempt_that_is_explained(problem, tmp_path) -> None:
    ctx, model = run_pipeline(problem, ["I would rather not write code.", fenced(RIGHT)], tmp_path)
    assert "no ```python code block" in model.requests[1].messages[-1].content
    assert ctx.state.record["attempts"][0]["visible"] == "no code"
    assert ctx.state.submitted is not None


def test_signature_converter_hides_the_expected_output(problem) -> None:
    signature = signature_from(problem.prompt, problem.entry_point, problem.visible_tests[0])
    assert signature.example_call == "truncate_number(3.5)"
    assert "0.5" not in signature.describe()
    assert signature.parameters == "number: float"


def _published(data_dir: Path, name: str, task: str) -> dict:
    path = data_dir / "published-runs/mapcoder/ChatGPT/HumanEval" / name
    return next(r for r in map(json.loads, path.open()) if r["task_id"] == task)


def test_example_call_detector_on_released_analogical_code(data_dir) -> None:
    row = _published(data_dir, "ChatGPT-Analogical-Python3-0-1.jsonl", "HumanEval/73")
    code = row["source_codes"][-1]
    stripped, removed = strip_example_calls(code, "smallest_change")
    assert removed[:3] == ["print(smallest_change([1, 2, 3, 5, 4, 7, 9, 6]))",
                           "print(smallest_change([1, 2, 3, 4, 3, 2, 2]))", "print(smallest_change([1, 2, 3, 2, 1]))"]
    assert "print(smallest_change" not in stripped and "def smallest_change" in stripped


def test_detector_removes_calls_only_and_keeps_every_assignment() -> None:
    """#19: an assignment is part of the program whatever it calls (``_PAT = re.compile(...)`` removed used
    to fail with a NameError); bare call statements, loops that call the function or read input, and
    ``__main__`` blocks go."""
    code = ("import math, re\nLIMIT = 10\n_PAT = re.compile('[a-z]+')\n\"\"\"doc\"\"\"\ndef f(x):\n    return _PAT.sub('', x)\n"
            "result = f('3')\nfor i in range(3):\n    print(i)\nfor s in ['a', 'b']:\n    print(f(s))\n"
            "f('x')\nmain()\nif __name__ == '__main__':\n    print(f(input()))\n")
    stripped, removed = strip_example_calls(code, "f")
    for kept in ("import math, re", "LIMIT = 10", "_PAT = re.compile('[a-z]+')", "def f", "result = f('3')",
                 "for i in range(3):"):
        assert kept in stripped, kept
    assert removed == ["for s in ['a', 'b']:", "f('x')", "main()", "if __name__ == '__main__':"]


def test_signature_from_the_first_test_where_the_prompt_has_no_def() -> None:
    """MBPP's prompts have no ``def``: the parameters come from the first test's call, one per argument
    (#19: it used to print ``Signature: remove_Occ()`` beside a two-argument call)."""
    signature = signature_from("Write a python function to remove first and last occurrence of a given character.",
                               "remove_Occ", 'assert remove_Occ("hello","l") == "heo"')
    assert (signature.parameters, signature.example_call) == ("arg1, arg2", "remove_Occ('hello', 'l')")
    assert "heo" not in signature.describe()
    keyword = signature_from("", "f", "assert f(1, key=2) == 3")
    assert keyword.parameters == "arg1, key"


@pytest.mark.parametrize(("task", "label"), [
    ("HumanEval/1", "Wrong answer: a test's assertion failed"),     # wrong grouping of parentheses
    ("HumanEval/32", "TypeError raised while running a test"),      # find_zero calling poly wrongly
])
def test_error_handler_on_released_failing_solutions(data_dir, pool, task, label) -> None:
    """CoT's released solutions that MapCoder's logs mark unsolved, run on the visible tests."""
    problem = load_dataset("humaneval", data_dir).by_id()[task]
    row = _published(data_dir, "ChatGPT-CoT-Python3-0-1.jsonl", task)
    assert row["is_solved"] is False
    result = run_visible(pool, problem, row["source_codes"][-1])
    processed = process_error(result, problem.visible_tests)
    assert processed.label == label
    assert "Failing test: assert " in processed.message
    assert "<candidate>" in processed.message or "<test>" in processed.message
    assert "_child.py" not in processed.message and "_zygote" not in processed.message
    assert len(processed.render()) <= 1400


def test_error_handler_truncates_recursion(problem, pool) -> None:
    code = "def truncate_number(number):\n    return truncate_number(number)\n"
    result = run_visible(pool, problem, code)
    processed = process_error(result, problem.visible_tests)
    assert processed.label == "RecursionError raised while running a test"
    assert "repeated frames removed" in processed.message
    assert processed.message.count("<candidate>") <= 12
