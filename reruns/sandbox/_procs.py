"""Finding and killing every process of a sandbox uid (standard library only: the supervisor uses it
too, imported from beside it)."""

from __future__ import annotations

import os
import signal
import time


def _is_zombie(proc_path: str) -> bool:
    with open(f"{proc_path}/stat", "rb") as fh:
        return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"


def live_processes_of(uid: int) -> list[int]:
    """PIDs of the live (non-zombie) processes owned by ``uid``."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid and not _is_zombie(entry.path):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (a sandbox slot's uid is used by nothing else)."""
    for _ in range(50):
        victims = live_processes_of(uid)
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.002)
