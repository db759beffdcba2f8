"""The ``sotacheck`` console entry point.

For ``sotacheck judge`` (with the local executor) it leases the sandbox slots and starts their
supervisors first, before the command line interface and its dependencies are imported: a supervisor
takes about 40 ms to start, which then overlaps the CLI's own start-up instead of following it. Only
the worker count is read from the arguments here; everything else, errors included, is the CLI's job
(a pool that does not match what the CLI then asks for is simply not used). A judge run, a rerun and a
resume also end without the interpreter's teardown (see ``_exit_without_teardown``: after a rerun, whose
export imported pandas and pyarrow, the teardown took 0.2–0.26 s).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def judge_workers(argv: list[str]) -> int | None:
    """How many sandbox workers ``sotacheck judge`` will ask for, or None when this is not a local judge
    run (another command, ``--executor ray``, ``--help``) or the count cannot be read."""
    if not argv or argv[0] != "judge" or "--help" in argv:
        return None
    options: dict[str, str] = {}
    for index, arg in enumerate(argv):
        name, equals, value = arg.partition("=")
        if name in ("--workers", "--executor"):
            if not equals:
                value = argv[index + 1] if index + 1 < len(argv) else ""
            options[name] = value
    if options.get("--executor", "local") != "local":
        return None
    text = options.get("--workers")
    if text is None:
        from sotacheck.api.sandbox import default_workers

        return default_workers()
    return int(text) if text.isdigit() and int(text) > 0 else None


def _exit_without_teardown(code: str | int | None) -> NoReturn:
    """Exit as ``sys.exit(code)`` would, minus the interpreter's teardown (freeing every module and
    object: ~15 ms after a judge run). Used only when no other thread is left, after the exit handlers
    have run and the standard streams are flushed, so that nothing is lost by it."""
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # what Python exits with when it cannot flush stdout
    os._exit(code or 0)


def main() -> None:
    workers = judge_workers(sys.argv[1:])
    if workers is not None:
        from sotacheck.api.sandbox import warm_up_sandbox

        try:
            warm_up_sandbox(workers, isolate_network=True)  # SandboxLimits' default, which the judge command uses
        except RuntimeError:
            pass  # no free slots: the CLI's own pool reports it
    from sotacheck.cli.main import main as cli_main

    if workers is None and sys.argv[1:2] not in (["rerun"], ["resume"]):
        cli_main()
        return
    try:
        cli_main()
    except SystemExit as exc:
        _exit_without_teardown(exc.code)
    _exit_without_teardown(0)


if __name__ == "__main__":
    main()
