"""Ending a helper process (the embedded model server) once the process that started it is gone."""

from __future__ import annotations

import os
import time


def exit_with_parent(parent: int, every_s: float = 1.0) -> None:
    """Poll for the parent: once this process is re-parented, the run that owned it is gone (killed with
    SIGKILL, say), so exit instead of holding the cores for ever."""
    while os.getppid() == parent:
        time.sleep(every_s)
    os._exit(0)
