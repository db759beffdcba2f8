"""Model calls and judging overlap: cells whose submissions wait for the judge do not keep other cells from
their model calls, and nothing the judge occupies (its threads, the event loop's default executor) sits in
a model call's way."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime
from typing import Any

from sotacheck.reruns.benchmarks import load_dataset
from sotacheck.reruns.model.loopback import LoopbackServer
from sotacheck.reruns.run import execute_run, validate_spec
from sotacheck.reruns.sandbox.supervisor import default_workers


def _when(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else datetime.fromisoformat(value).timestamp()


def test_model_calls_go_on_while_every_sandbox_slot_runs_a_program_until_its_timeout(tmp_path) -> None:
    """The first problems, one per sandbox slot, get a program that loops until the test timeout (2 s), the
    rest their canonical solutions; Direct at concurrency 1 (two cells' pipelines in flight). Before, a
    cell held its place in flight while it waited for its verdict, so with every slot looping no other
    cell could make its call until a timeout ended. Now every call is made while the slots still loop, and
    every verdict is as the programs deserve."""
    problems = load_dataset("humaneval").problems
    looping = {p.entry_point for p in problems[:default_workers()]}
    solutions = {p.entry_point: p.prompt + (p.canonical_solution or "") for p in problems}

    def respond(body: dict[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        name = next(n for n in solutions if f"def {n}(" in text)
        code = f"def {name}(*args):\n    while True:\n        pass\n" if name in looping else solutions[name]
        return f"```python\n{code}\n```"

    limit = len(looping) + 6
    with LoopbackServer(respond) as server:
        spec = validate_spec({"dataset": "humaneval", "pipelines": [{"name": "direct"}], "model": server.base_url,
                              "model_name": "m", "limit": limit, "seed": 7, "concurrency": 1, "test_timeout_s": 2.0},
                             "spec")
        summary = asyncio.run(execute_run(tmp_path / "r", spec, progress=False))
    assert summary.cells == limit
    with sqlite3.connect(tmp_path / "r" / "store.sqlite") as db:
        last_prepared = max(_when(t) for (t,) in db.execute("SELECT prepared_at FROM calls"))
        cells = db.execute("SELECT problem, status, finished_at FROM cells").fetchall()
    ids = {p.id for p in problems[:len(looping)]}
    first_loop_done = min(_when(t) for problem, _, t in cells if problem in ids)
    assert last_prepared < first_loop_done, "a model call waited for a looping program's verdict"
    assert {problem: status for problem, status, _ in cells} == {
        p.id: "failed" if p.id in ids else "passed" for p in problems[:limit]}
