"""Named crash points for crash-recovery tests: ``SOTACHECK_CRASH_AT=NAME:K`` makes the process SIGKILL
itself the K-th time it reaches ``crash_point(NAME)``. Unset (always, outside tests), it does nothing.

Points: ``before_send`` (request record prepared, not sent), ``after_send`` (answer in hand, not saved),
``after_receive`` (answer saved), ``during_execution`` (judging the submission), ``during_outcome_write``
(inside the cell's outcome transaction, before it commits), ``during_group_commit`` (the group committer's
transaction holding several cells' records, before it commits; counted only for such transactions).
"""

from __future__ import annotations

import os
import signal
from collections import Counter

POINTS = ("before_send", "after_send", "after_receive", "during_execution", "during_outcome_write", "during_group_commit")
_hits: Counter[str] = Counter()


def _target() -> tuple[str, str]:
    """(point, K) of ``SOTACHECK_CRASH_AT=POINT:K``; ("", "") when unset."""
    point, _, nth = os.environ.get("SOTACHECK_CRASH_AT", "").partition(":")
    return point, nth


def armed(name: str) -> bool:
    """Whether this process is to crash at ``name`` (a test asked for it)."""
    return _target()[0] == name


def crash_point(name: str) -> None:
    point, nth = _target()
    if point != name:
        return
    _hits[name] += 1
    if _hits[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
