"""The embedded model's ``llama-server`` process, watched: runs the binary given on the command line as a child,
passes SIGTERM on to it, and kills it once the process that started this one is gone (killed with SIGKILL, say),
so a native server never holds both cores for ever. Run as ``python -P -m
sotacheck.reruns.model._native_server_watch BINARY ARGS...`` by ``local.LocalServer``: a child process's module,
hence the leading underscore (docs/design.md, "One meaning per name"); the engine itself, its settings and its
start, is ``native_server``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

from sotacheck.reruns.model.parent_watch import exit_with_parent


def main(argv: list[str]) -> int:
    parent = os.getppid()
    child = subprocess.Popen(argv)

    def stop(*_: object) -> None:
        child.terminate()

    signal.signal(signal.SIGTERM, stop)

    threading.Thread(target=exit_with_parent, args=(parent, 1.0, child.kill), daemon=True, name="parent-watch").start()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
