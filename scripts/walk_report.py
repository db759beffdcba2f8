"""Walk the ``runs`` of one report through the code (issue #47): which of sotacheck's modules a report's runs
pass through, in call order, and how often the same work is done again.

Usage: ``.venv/bin/python scripts/walk_report.py [--sequence] [--rev REV]`` from the repository root; with
``--rev`` (``--rev main``) it measures that revision's code instead of the working tree's, exported with
``git archive`` into a temporary folder laid out as the installed package. It imports MapCoder's
bundled ChatGPT HumanEval logs (``sotacheck import mapcoder``, as the golden-output test does) into a temporary
folder, then calls the public :func:`sotacheck.report` on that run with the bundled claims (``data/claims/*.yaml``)
and ``leaderboard=["humaneval"]`` under :func:`sys.setprofile`, and prints:

* ``stops``: the calls that receive the runs, laid end to end by module: a stop is a move into another module of
  the project (consecutive such calls in one module are one stop). A call receives the runs when one of its
  arguments is the ``runs`` argument given to ``report``, a :class:`~sotacheck.core.rundir.Run`, or holds one
  within two levels of lists, tuples, dict values and dataclass fields (a run's own methods, ``self`` a Run, aside);
* ``modules``: how many modules the stops visit; ``returns``: the stops into a module visited before;
* per module, its number of stops (entries);
* how many times the combined outcome table is built (``combine_runs``), the studies found (``find_studies``)
  and the analysis made (``audit.analysis.analyze``), over every call, whether or not it receives the runs.

The figures depend only on the code's call structure, not on timing: the same code gives the same figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("sotacheck", "audit", "reports", "reruns")  # the project's top folders (audit/ is sotacheck.audit, ...)
COUNTED = {"combine_runs": None, "find_studies": None, "analyze": "audit/analysis.py"}
"""Functions whose calls are counted, by name, in any module or in the one named (``combine_runs`` lived in
``audit/analysis.py`` before issue #47, in ``audit/combined.py`` since)."""


def _module(filename: str, cache: dict[str, str | None]) -> str | None:
    """The project-relative path of a code object's file (the editable install's links resolved), or None."""
    if filename not in cache:
        real = Path(os.path.realpath(filename))
        try:
            relative = real.relative_to(REPO).as_posix()
        except ValueError:
            relative = None
        cache[filename] = relative if relative and relative.split("/")[0] in PACKAGES else None
    return cache[filename]


def walk(runs: list[Any], **kwargs: Any) -> tuple[list[tuple[str, str]], Counter[str]]:
    """Call ``sotacheck.report(runs, **kwargs)`` under the profiler: the (module, function) of every call that
    receives the runs, in order, and the counts of :data:`COUNTED`."""
    import sotacheck
    from sotacheck.core.rundir import Run

    def holds_runs(value: Any, depth: int = 0) -> bool:
        if value is runs or isinstance(value, Run):
            return True
        if depth == 2:
            return False
        if isinstance(value, list | tuple):
            return any(holds_runs(item, depth + 1) for item in value[:100])
        if isinstance(value, dict):
            return any(holds_runs(item, depth + 1) for item in list(value.values())[:100])
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return any(holds_runs(getattr(value, f.name, None), depth + 1) for f in dataclasses.fields(value))
        return False

    cache: dict[str, str | None] = {}
    calls: list[tuple[str, str]] = []
    counted: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        module = _module(code.co_filename, cache)
        if module is None:
            return
        if code.co_name in COUNTED and COUNTED[code.co_name] in (None, module):
            counted[code.co_name] += 1
        n_args = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
        values = frame.f_locals
        names = [n for n in code.co_varnames[:n_args] if not (n == "self" and isinstance(values.get(n), Run))]
        if any(holds_runs(values.get(name)) for name in names):
            calls.append((module, code.co_qualname))

    sys.setprofile(profile)
    try:
        sotacheck.report(runs, **kwargs)
    finally:
        sys.setprofile(None)
    return calls, counted


def _use_revision(rev: str, folder: Path) -> None:
    """Import sotacheck from revision ``rev`` (exported under ``folder``) and read its data from there."""
    global REPO
    tree, package = folder / "tree", folder / "package" / "sotacheck"
    tree.mkdir()
    package.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    for entry in [*(tree / "sotacheck").iterdir(), *(tree / name for name in (*PACKAGES[1:], "data"))]:
        (package / entry.name).symlink_to(entry)
    sys.path.insert(0, str(package.parent))
    REPO = tree.resolve()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequence", action="store_true", help="print the stops in order, with their calls")
    parser.add_argument("--rev", help="measure this git revision's code (default: the working tree's)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if options.rev:
            _use_revision(options.rev, Path(folder))
        _measure(options.sequence)


def figures() -> tuple[list[tuple[str, list[str]]], Counter[str]]:
    """The stops of one report's walk (module, the functions called there in turn) and the counts of
    :data:`COUNTED`."""
    saved = {name: os.environ.pop(name) for name in [n for n in os.environ if n.startswith("SOTACHECK_")]}
    # without $SOTACHECK_*: the benchmark copies shipped with sotacheck, as the golden-output test reads them
    try:
        import sotacheck

        with tempfile.TemporaryDirectory() as folder:
            run_dir = Path(folder) / "mapcoder-he"
            sotacheck.import_logs("mapcoder", path=REPO / "data/published/mapcoder/ChatGPT/HumanEval", out=run_dir)
            claims = sorted((REPO / "data" / "claims").glob("*.yaml"))
            calls, counted = walk([run_dir], output=Path(folder) / "report.html", claims=claims,
                                  leaderboard=["humaneval"])
    finally:
        os.environ.update(saved)
    stops: list[tuple[str, list[str]]] = []
    for module, function in calls:
        if stops and stops[-1][0] == module:
            stops[-1][1].append(function)
        else:
            stops.append((module, [function]))
    return stops, counted


def entries_of(stops: list[tuple[str, list[str]]]) -> Counter[str]:
    """How many stops each module has."""
    return Counter(module for module, _ in stops)


def _measure(sequence: bool) -> None:
    stops, counted = figures()
    entries = entries_of(stops)
    print(f"stops {len(stops)}, modules {len(entries)}, returns {len(stops) - len(entries)}, "
          f"calls receiving the runs {sum(len(functions) for _, functions in stops)}")
    print("entries per module: " + ", ".join(f"{m} {n}" for m, n in sorted(entries.items(), key=lambda e: (-e[1], e[0]))))
    print("calls of: " + ", ".join(f"{name} {counted[name]}" for name in COUNTED))
    if sequence:
        for index, (module, functions) in enumerate(stops, 1):
            print(f"{index:3} {module}: {', '.join(dict.fromkeys(functions))}")


if __name__ == "__main__":
    main()
