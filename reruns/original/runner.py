"""The parent side of an ``@original`` pipeline: start the child (``_child.py``) on one problem and answer
what it asks — each model call through ``PipelineContext.chat`` (so the authors' calls are recorded,
seeded, cached, resumed, replayed and reused like any pipeline's), each sample-I/O evaluation through
``PipelineContext.run_visible_tests`` (the harness's sandbox) — then submit the code their loop ends with,
which the cell judges once on the hidden tests.

Their exceptions (an XML reply their parser rejects, a fence their regex cannot close) end the child with
an ``error`` message; it becomes the cell's ``error`` with that message and its place in their code, and the
run goes on. The child is killed when the cell ends any other way (a failed model call, a replay miss).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from sotacheck.core.errors import SotacheckError, UsageError
from sotacheck.reruns.benchmarks.registry import BENCHMARKS, card
from sotacheck.reruns.context import CellError, PipelineContext
from sotacheck.reruns.original.checkout import OriginalClass, require_class, source_dir
from sotacheck.reruns.pipelines.feedback import sample_test_verdicts

CHILD = Path(__file__).with_name("_child.py")
LANGUAGE = "Python3"  # their main.py's default, the language of every published Python run
_HUMANEVAL = ("datasets.HumanEvalDataset", "HumanDataset")
_MBPP = ("datasets.MBPPDataset", "MBPPDataset")
_APPS = ("datasets.APPSDataset", "APPSDataset")
# A benchmark's family (its card's ``family``) → their dataset class (the type their prompting classes test,
# e.g. CoT's few-shot HumanEval prompt is chosen by ``type(self.data) == HumanDataset``).
DATASET_CLASSES: dict[str, tuple[str, str]] = {"humaneval": _HUMANEVAL, "mbpp": _MBPP, "apps": _APPS}
# Our statuses as ExecEval's outcomes, for their APPS feedback (``_child.ExecEvalRouter``).
_EXEC_OUTCOMES = {"passed": "PASSED", "failed": "WRONG_ANSWER", "timeout": "TIME_LIMIT_EXCEEDED",
                  "memory_exceeded": "MEMORY_LIMIT_EXCEEDED", "error": "RUNTIME_ERROR", "crashed": "RUNTIME_ERROR"}
_LINE_LIMIT = 1 << 26  # one protocol line carries a prompt or a program; 64 MiB is far beyond either


def dataset_class(dataset: str) -> tuple[str, str]:
    """Their dataset class for a sotacheck dataset, by the family on its card; a dataset their code does not
    run on is a one-line error."""
    family = card(dataset).family
    if family is None:
        runs_on = ", ".join(name for name in BENCHMARKS if card(name).family is not None)
        raise UsageError(f"the authors' code runs on {runs_on} here, not {dataset!r}")
    return DATASET_CLASSES[family]


def job_for(ctx: PipelineContext, original: OriginalClass, src: Path, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The child's job: their class, their dataset class and the problem as their loaders read it (prompt,
    entry point, sample tests; no hidden tests, no canonical solution)."""
    module, name = dataset_class(ctx.cell.dataset)
    problem = ctx.problem
    item: dict[str, Any] = {"task_id": problem.id, "name": problem.id, "prompt": problem.prompt,
                            "entry_point": problem.entry_point, "sample_io": list(problem.visible_tests)}
    if problem.kind == "program":  # their APPS rows: statement, starter code, sample tests; `test_list` empty
        item = {"id": problem.id, "name": problem.id, "description": problem.prompt,
                "starter_code": problem.starter_code, "test_list": [],
                "sample_io": [{"input": t.input, "output": list(t.outputs)} for t in problem.visible_io]}
    return {"src": str(src), "module": original.module, "class": original.name, "kwargs": kwargs,
            "flavor": original.flavor, "dataset_module": module, "dataset_class": name, "item": item,
            "language": LANGUAGE, "execeval": problem.kind == "program"}


async def run_original(ctx: PipelineContext, original: OriginalClass, kwargs: dict[str, Any]) -> None:
    """Run ``original`` on ``ctx``'s problem in a child process and submit the code it ends with."""
    path = ctx.checkouts.get(original.repository)
    if path is None:
        raise CellError(f"{original.qualified_name} needs the authors' code: --original-code "
                        f"{original.repository}=PATH")
    try:
        require_class(original.repository, path, original)
        job = job_for(ctx, original, source_dir(original.repository, path), kwargs)
    except SotacheckError as exc:
        raise CellError(str(exc)) from None
    with tempfile.TemporaryFile() as stderr:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-I", str(CHILD), stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=stderr,
                                                    limit=_LINE_LIMIT)
        try:
            final, own_calls = await _converse(ctx, proc, job, original, stderr)
        finally:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
    ctx.state.record["original"] = {"class": original.qualified_name, "own_api_calls": own_calls}
    ctx.submit(final, None if final is not None else f"{original.name} ended without code to judge")


async def _converse(ctx: PipelineContext, proc: asyncio.subprocess.Process, job: dict[str, Any],
                    original: OriginalClass, stderr: IO[bytes]) -> tuple[str | None, int | None]:
    assert proc.stdin is not None and proc.stdout is not None

    async def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(message) + "\n").encode())
        await proc.stdin.drain()

    await send(job)
    final: str | None = None
    while True:
        line = await proc.stdout.readline()
        if not line:
            await proc.wait()
            raise CellError(f"{original.name}: its process ended without an answer (exit {proc.returncode})"
                            f"{_tail(stderr)}")
        message = json.loads(line)
        op = message.get("op")
        if op == "chat":
            if message.get("frequency_penalty") or message.get("presence_penalty"):
                raise CellError(f"{original.name}: a call with frequency/presence penalties "
                                f"({message['frequency_penalty']}, {message['presence_penalty']}), which the harness "
                                f"does not send")
            prompt_before, completion_before = ctx.accounting.prompt_tokens, ctx.accounting.completion_tokens
            text = await ctx.chat([(m["role"], m["content"]) for m in message["messages"]], stage=message["stage"])
            await send({"op": "reply", "text": text, "prompt_tokens": ctx.accounting.prompt_tokens - prompt_before,
                        "completion_tokens": ctx.accounting.completion_tokens - completion_before})
        elif op == "run_visible":
            result = await ctx.run_visible_tests(message["code"])
            await send({"op": "verdicts", "passed": sample_test_verdicts(result, len(ctx.problem.visible_tests))})
        elif op == "run_visible_io":
            await send(await _execeval_results(ctx, message["code"]))
        elif op == "final":
            final = message["code"]
        elif op == "done":
            return final, message.get("own_api_calls")
        elif op == "error":
            raise CellError(f"{original.name}: {message['message']} (at {message['where']})")
        else:
            raise CellError(f"{original.name}: unknown message {op!r} from its process")


async def _execeval_results(ctx: PipelineContext, code: str) -> dict[str, Any]:
    """The sample tests run in the sandbox, reported as ExecEval reports them: one ``exec_outcome`` and
    ``result`` (what the program printed; for a runtime error its traceback; ``None`` on a timeout) per test,
    a single ``COMPILATION_ERROR`` for a program that does not load; ``io_error`` where ExecEval could not read
    the tests at all (``apps-execeval``)."""
    if not all(test.judgeable for test in ctx.problem.visible_io):
        return {"op": "io_error", "message": "ExecEval could not read these tests (an output that is not a string, "
                                             "or an input that is not ASCII)"}
    result = await ctx.run_visible_tests(code)
    if not result.tests and not result.passed:
        return {"op": "io_results", "results": [{"exec_outcome": "COMPILATION_ERROR",
                                                 "result": result.feedback or result.message or ""}]}
    results = []
    for test in result.tests:
        output: str | None = (test.output or "").strip()
        if test.status == "timeout":
            output = None
        elif test.status in ("error", "crashed"):
            output = test.feedback or test.message or ""
        results.append({"exec_outcome": _EXEC_OUTCOMES[test.status], "result": output})
    return {"op": "io_results", "results": results}


def _tail(stderr: IO[bytes], limit: int = 300) -> str:
    """The last line of the child's stderr, for a child that died outside the protocol (an import error)."""
    stderr.seek(0)
    lines = [line for line in stderr.read().decode(errors="replace").splitlines() if line.strip()]
    return f": {lines[-1][-limit:]}" if lines else ""
