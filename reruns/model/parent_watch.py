"""Ending a helper process (the embedded model server) once the process that started it is gone."""

from __future__ import annotations

import os
import time
from collections.abc import Callable


def exit_with_parent(parent: int, every_s: float = 1.0, before_exit: Callable[[], None] | None = None) -> None:
    """Poll for the parent: once this process is re-parented, the run that owned it is gone (killed with
    SIGKILL, say), so exit instead of holding the cores for ever (``before_exit`` first: ending a child)."""
    while os.getppid() == parent:
        time.sleep(every_s)
    if before_exit is not None:
        before_exit()
    os._exit(0)
