"""Progress of a long rerun: tqdm's bar on a terminal, plain lines in a log (CI, a file, ``make demo``
piped), so that a log shows how far a run that takes hours has got."""

from __future__ import annotations

import sys
import time
from typing import Any


def progress_bar(name: str, total: int, done: int, enabled: bool) -> Any:
    """A tqdm bar on a terminal, else :class:`ProgressLines`; both take ``update`` and ``set_postfix``."""
    if enabled and not sys.stderr.isatty():
        return ProgressLines(name, total, done)
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="cell", desc=f"rerun {name}", disable=not enabled, file=sys.stderr)


class ProgressLines:
    """tqdm's stand-in when stderr is not a terminal (a CI log, a file): a plain line when a cell
    finishes, at most one per ``interval`` seconds (so every cell of a slow run is shown)."""

    interval = 30.0

    def __init__(self, name: str, total: int, done: int) -> None:
        self.name, self.total, self.n = name, total, done
        self.started = self.last = time.monotonic()
        self.postfix: dict[str, Any] = {}

    def set_postfix(self, ordered_dict: dict[str, Any] | None = None, refresh: bool = True, **kwargs: Any) -> None:
        self.postfix = {**(ordered_dict or {}), **kwargs}

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            calls = (f"{self.postfix['sent']} calls sent" if "sent" in self.postfix
                     else f"{self.postfix.get('calls', 0)} calls")
            print(f"rerun {self.name}: {self.n}/{self.total} cells, {calls}, {now - self.started:.0f} s",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        pass
