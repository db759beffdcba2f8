"""``sotacheck.core.pyast``: parsing from several threads of one process.

CPython 3.11 keeps the AST constructor's recursion counter per interpreter: a parse during which a collection
runs Python code, while another thread parses, ends in ``SystemError: AST constructor recursion depth
mismatch``. A replay of a run of ``@original`` pipelines failed so (the judge parses prompts on its threads
while the event loop parses the authors' checkout). The interleaving is forced here: a ``gc`` callback that
fires inside thread A's ``ast.parse`` (its caller's frame is ``ast.parse``) lets thread B parse before A goes
on."""

from __future__ import annotations

import ast
import gc
import sys
import threading
from collections.abc import Callable
from typing import Any

from sotacheck.core import pyast

SOURCE = "def f(x):\n    return [y * 2 for y in range(x) if y % 3]\n" * 50


def _interleave(parse: Callable[[str], Any]) -> dict[str, Any]:
    """Thread A parses ``SOURCE`` 20 frames deep; the first collection inside its ``ast.parse`` starts thread B,
    which parses too, and waits up to 1 s for it. Returns whether B finished inside A's parse, and the errors."""
    seen: dict[str, Any] = {"fired": False, "b_inside_a": None, "errors": []}

    def thread_b() -> None:
        try:
            parse(SOURCE)
        except SystemError as exc:
            seen["errors"].append(("B", str(exc)))

    b = threading.Thread(target=thread_b)

    def inside_a(phase: str, info: dict[str, int]) -> None:
        if (phase == "start" and not seen["fired"] and threading.current_thread() is a
                and sys._getframe(1).f_code is ast.parse.__code__):
            seen["fired"] = True
            b.start()
            b.join(timeout=1.0)
            seen["b_inside_a"] = not b.is_alive()

    def thread_a(depth: int) -> None:
        if depth:
            return thread_a(depth - 1)
        threshold = gc.get_threshold()
        gc.set_threshold(1)  # a collection at the first tracked object the AST constructor makes
        try:
            parse(SOURCE)
        except SystemError as exc:
            seen["errors"].append(("A", str(exc)))
        finally:
            gc.set_threshold(*threshold)

    a = threading.Thread(target=thread_a, args=(20,))
    gc.callbacks.append(inside_a)
    try:
        a.start()
        a.join()
    finally:
        gc.callbacks.remove(inside_a)
    if seen["fired"]:
        b.join()
    return seen


def test_a_parse_interleaved_with_another_threads_parse_fails_in_plain_ast_on_311() -> None:
    """The hazard itself, on the interpreters where it was seen (3.11); newer ones may keep the counter per
    thread, so there the plain parse is only required to have been interleaved."""
    seen = _interleave(ast.parse)
    assert seen["fired"] and seen["b_inside_a"] is True
    if sys.version_info[:2] == (3, 11):
        assert [who for who, _ in seen["errors"]] == ["A"]
        assert "AST constructor recursion depth mismatch" in seen["errors"][0][1]


def test_pyast_parse_lets_no_other_parse_in_and_never_fails() -> None:
    seen = _interleave(pyast.parse)
    assert seen["fired"] and seen["b_inside_a"] is False  # B waited for A's parse to end
    assert seen["errors"] == []


def test_pyast_gives_what_ast_gives() -> None:
    assert ast.dump(pyast.parse(SOURCE, "f.py")) == ast.dump(ast.parse(SOURCE, "f.py"))
    assert pyast.literal_eval("  ['assert f(1) == 2', (1, 2.5)]") == ["assert f(1) == 2", (1, 2.5)]


def test_no_module_of_sotacheck_parses_around_the_lock() -> None:
    """Every parse in sotacheck's process goes through ``pyast``. Exempt: the sandbox's child-process scripts
    (``reruns/sandbox/child/_*.py``, standard library only, one thread at a time in a process of their own)."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    bare = [f"{path.relative_to(repo)}:{number}"
            for folder in ("sotacheck", "reruns", "audit", "reports") for path in sorted((repo / folder).rglob("*.py"))
            if path.name != "pyast.py" and path.parent != repo / "reruns" / "sandbox" / "child"
            for number, line in enumerate(path.read_text().splitlines(), start=1)
            if "ast.parse(" in line.replace("pyast.parse(", "") or "ast.literal_eval(" in line.replace("pyast.literal_eval(", "")]
    assert bare == []
