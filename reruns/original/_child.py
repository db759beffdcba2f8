"""The child process that runs one of the authors' prompting classes, unmodified, on one problem.

``runner.py`` starts it as ``python -I _child.py`` (a child process's script, standard library only: hence
the leading underscore, docs/design.md, "One meaning per name"); it imports nothing of sotacheck. The authors' ``src/``
goes on ``sys.path`` here and nowhere else, so their top-level packages (``datasets``, which shadows Hugging
Face's, ``models``, ``results``, ``utils``, ...) and what they import (``tiktoken``) never enter sotacheck's
process. Their class runs through its own ``run()`` loop (pass_at_k 1) on a one-problem dataset of their own
class, built from a JSON-lines file as their loader reads it. Four things are routed to the harness:

- the model: a shim with their model interface whose ``prompt`` sends the messages to the parent and waits
  for the harness's reply (``PipelineContext.chat``: records, seeds, cache, resume, replay);
- their sample-I/O evaluation: their own ``evaluate_sample_io`` and ``evaluate_io`` run as written, but the
  ``function_with_timeout(exec, ...)`` that would run each sample test in this process asks the harness's
  sandbox instead (one ``run_visible_tests`` per evaluation) and raises where the sandbox says a test failed,
  so their pass/fail and their own test-log text come from their code;
- their final judgement (``data.evaluate``): the code their loop would judge is sent to the parent, which
  judges it on the hidden tests; their loop gets ``False``, which at pass_at_k 1 changes nothing but their
  own printed tally. No hidden test ever reaches this process.
- two modules are stubbed: ``evaluations.evalute`` (imported by their xCodeEval/APPS/CodeContests datasets;
  at import it needs data files relative to the working directory and an ExecEval server), except for APPS,
  where it is imported as written, with the files it asserts made in the working directory (their limits
  file, an empty xCodeEval database) and their ExecEval client's ``execute_code`` answered by the harness
  (``-> {"op": "run_visible_io", "code": C}  <- {"op": "io_results", "results": [{exec_outcome, result}...]}``
  or ``{"op": "io_error", "message": M}`` where ExecEval could not read the tests); and, only where it is not
  installed, ``tiktoken`` (imported, never called on these code paths; token counts come from the
  endpoint's reported usage, relayed by the harness).

Protocol, JSON lines over the process's original stdin/stdout (moved to private descriptors first; fd 0
and 1 then point to /dev/null, so their prints never reach the pipe). The first line in is the job; then:

    -> {"op": "chat", "stage": S, "messages": [...], "frequency_penalty": F, "presence_penalty": P}
    <- {"op": "reply", "text": T, "prompt_tokens": N, "completion_tokens": M}
    -> {"op": "run_visible", "code": C}      <- {"op": "verdicts", "passed": [true, false, ...]}
    -> {"op": "final", "code": C}
    -> {"op": "done", "own_api_calls": N}     or     -> {"op": "error", "message": M, "where": W}

``stage`` names the call site: the caller's local variable that holds the messages
(``input_for_improving_code``), else ``function:line``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable
from typing import Any


class HarnessMismatch(BaseException):
    """Their code executed something the harness does not run for it. Not an ``Exception``: their own
    ``except Exception`` around each sample test must not read it as a failed test."""


class Wire:
    """The pipe to the parent, on private copies of fd 0 and 1."""

    def __init__(self) -> None:
        self._in = os.fdopen(os.dup(0), "r", encoding="utf-8")
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)

    def send(self, message: dict[str, Any]) -> None:
        self._out.write(json.dumps(message) + "\n")
        self._out.flush()

    def receive(self) -> dict[str, Any]:
        line = self._in.readline()
        if not line:
            raise SystemExit(3)  # the parent is gone
        return dict(json.loads(line))

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(message)
        return self.receive()


def call_site(processed_input: object) -> str:
    """The stage name of a model call: the name under which the calling method holds the messages."""
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_code.co_name == "gpt_chat":
        frame = frame.f_back
    for name, value in frame.f_locals.items():
        if value is processed_input:
            return name
    return f"{frame.f_code.co_name}:{frame.f_lineno}"


class HarnessModel:
    """Their model interface; every call goes to the parent. ``flavor`` ``mapcoder`` returns
    ``(text, prompt_tokens, completion_tokens)``; ``codegenerator`` returns ``(text, run_details)``."""

    def __init__(self, wire: Wire, flavor: str) -> None:
        self.wire = wire
        self.flavor = flavor
        self.sleep_time = 0

    def prompt(self, processed_input: list[dict[str, str]], frequency_penalty: float = 0,
               presence_penalty: float = 0) -> tuple[Any, ...]:
        stage = call_site(processed_input)
        for message in processed_input:
            if set(message) != {"role", "content"}:
                raise HarnessMismatch(f"a message with keys {sorted(message)}; the harness sends role and content")
        started = time.perf_counter()
        reply = self.wire.ask({"op": "chat", "stage": stage, "messages": [dict(m) for m in processed_input],
                               "frequency_penalty": frequency_penalty, "presence_penalty": presence_penalty})
        text, prompt_tokens, completion_tokens = reply["text"], reply["prompt_tokens"], reply["completion_tokens"]
        if self.flavor == "mapcoder":
            return text, prompt_tokens, completion_tokens
        return text, {"api_calls": 1, "taken_time": time.perf_counter() - started, "prompt_tokens": prompt_tokens,
                      "completion_tokens": completion_tokens,
                      "details": [{"model_prompt": processed_input, "model_response": text,
                                   "frequency_penalty": frequency_penalty, "presence_penalty": presence_penalty}]}


class SampleRouter:
    """Their sample-I/O evaluation with each test's execution answered by the harness's sandbox."""

    def __init__(self, wire: Wire, sample_io: list[str]) -> None:
        self.wire = wire
        self.sample_io = sample_io
        self.pending: str | None = None
        self.verdicts: list[bool] | None = None
        self.next = 0

    def route(self, evaluate_sample_io: Callable[..., Any]) -> Callable[..., Any]:
        def routed(item: dict[str, Any], cur_imp: str, language: str) -> Any:
            self.pending, self.verdicts, self.next = cur_imp, None, 0
            try:
                result = evaluate_sample_io(item, cur_imp, language)
            finally:
                self.pending = None
            if self.verdicts is not None and self.next != len(self.verdicts):
                raise HarnessMismatch(f"their evaluation ran {self.next} of {len(self.verdicts)} sample tests")
            return result

        return routed

    def function_with_timeout(self, func: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> None:
        if self.pending is None:
            raise HarnessMismatch("their code executes code outside the sample-I/O evaluation (e.g. tests it "
                                  "generated itself), which the harness does not run")
        if self.verdicts is None:
            self.verdicts = [bool(v) for v in self.wire.ask({"op": "run_visible", "code": self.pending})["passed"]]
        if self.next >= len(self.verdicts) or not str(args[0]).endswith("\n" + self.sample_io[self.next] + "\n"):
            raise HarnessMismatch(f"their evaluation ran a test other than sample test {self.next}")
        passed = self.verdicts[self.next]
        self.next += 1
        if not passed:
            raise AssertionError(f"sample test {self.next} failed in sotacheck's sandbox")


class ExecEvalRouter:
    """Their ExecEval client (``APICommunication.execute_code``) answered by the harness's sandbox, for their
    APPS dataset: their own ``contest_evaluate_public_tests`` runs as written and builds its feedback from
    per-test results in ExecEval's form (``exec_outcome``, ``result``). Only the sample tests are run."""

    def __init__(self, wire: Wire, sample_io: list[dict[str, Any]]) -> None:
        self.wire = wire
        self.sample_io = sample_io

    def execute_code(self, client: object, language: str, source_code: str, unittests: list[dict[str, Any]],
                     *args: Any, task_id: Any = None, **kwargs: Any) -> tuple[Any, Any, Any]:
        if [dict(t) for t in unittests] != self.sample_io:
            raise HarnessMismatch("their code sent ExecEval tests other than the sample tests, which the harness "
                                  "does not run")
        reply = self.wire.ask({"op": "run_visible_io", "code": source_code})
        if reply["op"] == "io_error":  # ExecEval could not read the tests: its request failed
            return "error", reply["message"], task_id
        return reply["results"], None, task_id


def prepare_execeval(job: dict[str, Any], wire: Wire, workdir: str) -> None:
    """What their ``evaluations/evalute.py`` needs at import, relative to the working directory (their
    limits file, an empty xCodeEval unit-test database), and their ExecEval client routed to the harness."""
    os.makedirs(os.path.join(workdir, "src", "evaluations"), exist_ok=True)
    os.makedirs(os.path.join(workdir, "data", "xCodeEval"), exist_ok=True)
    with open(os.path.join(job["src"], "evaluations", "limits_by_lang.yaml"), encoding="utf-8") as theirs, \
            open(os.path.join(workdir, "src", "evaluations", "limits_by_lang.yaml"), "w", encoding="utf-8") as ours:
        ours.write(theirs.read())
    with open(os.path.join(workdir, "data", "xCodeEval", "unittest_db.json"), "w", encoding="utf-8") as handle:
        handle.write("{}")
    router = ExecEvalRouter(wire, list(job["item"]["sample_io"]))
    client = importlib.import_module("evaluations.api_comm").APICommunication

    def execute_code(self: object, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
        return router.execute_code(self, *args, **kwargs)

    client.execute_code = execute_code


def stub_module(name: str, why: str) -> None:
    """A module whose every attribute is a function that raises, saying why."""
    module = types.ModuleType(name, why)

    def unavailable(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"{name} is stubbed under sotacheck: {why}")

    module.__getattr__ = lambda attribute: unavailable  # type: ignore[method-assign]
    sys.modules[name] = module


def run(job: dict[str, Any], wire: Wire, workdir: str) -> None:
    sys.path.insert(0, job["src"])
    if job.get("execeval"):
        prepare_execeval(job, wire, workdir)
    else:
        stub_module("evaluations.evalute", "it serves the xCodeEval/APPS/CodeContests datasets (data files and an "
                                           "ExecEval server), which sotacheck does not run here")
    if importlib.util.find_spec("tiktoken") is None:
        stub_module("tiktoken", "not installed; token counts come from the endpoint")
    strategy_class = getattr(importlib.import_module(job["module"]), job["class"])
    dataset_class = getattr(importlib.import_module(job["dataset_module"]), job["dataset_class"])
    items = os.path.join(workdir, "problem.jsonl")
    with open(items, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(job["item"]) + "\n")
    data = dataset_class(path=items)
    router = SampleRouter(wire, [str(test) for test in job["item"]["sample_io"]])
    func_evaluate: Any = importlib.import_module("evaluations.func_evaluate")
    func_evaluate.function_with_timeout = router.function_with_timeout
    data.evaluate_sample_io = router.route(data.evaluate_sample_io)

    def final(item: dict[str, Any], cur_imp: str, language: str) -> bool:
        wire.send({"op": "final", "code": cur_imp})
        return False

    data.evaluate = final
    results = importlib.import_module("results.Results").Results(os.path.join(workdir, "results.jsonl"))
    strategy = strategy_class(model=HarnessModel(wire, job["flavor"]), data=data, language=job["language"],
                              pass_at_k=1, results=results, **job["kwargs"])
    if job["flavor"] == "codegenerator":
        strategy.run(False)
        own = sum(d.get("api_calls", 0) for d in results.results[0].get("run_details", []))
    else:
        strategy.run()
        own = results.results[0].get("api_calls")
    wire.send({"op": "done", "own_api_calls": own})


def where(exc: BaseException, src: str) -> str:
    """The innermost frame of the exception inside their checkout, as ``path:line in function``."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(src)]
    if not frames:
        return "outside their code"
    last = frames[-1]
    return f"{os.path.relpath(last.filename, src)}:{last.lineno} in {last.name}"


def main() -> None:
    wire = Wire()
    job = wire.receive()
    with tempfile.TemporaryDirectory(prefix="sotacheck-original-") as workdir:
        os.chdir(workdir)  # their relative paths (results, usage logs) land here, and go with it
        try:
            run(job, wire, workdir)
        except SystemExit:
            raise
        except BaseException as exc:  # their exceptions, and a mismatch, become the cell's error
            message = " ".join(f"{type(exc).__name__}: {exc}".split())
            wire.send({"op": "error", "message": message[:2000], "where": where(exc, job["src"])})


if __name__ == "__main__":
    main()
