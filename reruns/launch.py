"""The ``sotacheck`` console entry point.

For ``sotacheck judge`` (with the local executor) it leases the sandbox slots and starts their
supervisors first, before the command line interface and its dependencies are imported: a supervisor
takes about 50 ms to start, which then overlaps the CLI's own start-up instead of following it. Only
the worker count is read from the arguments here; everything else, errors included, is the CLI's job
(a pool that does not match what the CLI then asks for is simply not used).
"""

from __future__ import annotations

import os
import sys


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
        return max(1, os.cpu_count() or 1)
    return int(text) if text.isdigit() and int(text) > 0 else None


def main() -> None:
    workers = judge_workers(sys.argv[1:])
    if workers is not None:
        from reruns.sandbox.supervisor import warm_up

        try:
            warm_up(workers, isolate_network=True)
        except RuntimeError:
            pass  # no free slots: the CLI's own pool reports it
    from reruns.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
