"""Progress of a long rerun: tqdm's bar on a terminal, plain lines in a log (CI, a file, ``make demo``
piped), so that a log shows how far a run that takes hours has got, and that it is still alive."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO


def progress_bar(name: str, total: int, done: int, enabled: bool) -> Any:
    """A tqdm bar on a terminal, else :class:`ProgressLines`; both take ``update``, ``set_postfix`` and
    ``close``."""
    if enabled and not sys.stderr.isatty():
        return ProgressLines(name, total, done)
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="cell", desc=f"rerun {name}", disable=not enabled, file=sys.stderr)


class ProgressLines:
    """tqdm's stand-in when stderr is not a terminal (a CI log, a file): a plain line at once, then every
    ``interval`` seconds (so never more than 10 s apart), when a cell finishes or, while none does (a model call
    can take half a minute), from a ticker thread. A line says what, how many cells of how many, the calls, the
    time so far and, once a cell of this sitting has finished, the time the whole sitting is expected to take at
    the pace so far."""

    interval = 9.0

    def __init__(self, name: str, total: int, done: int, stream: TextIO | None = None) -> None:
        self.name, self.total, self.n, self.initial = name, total, done, done
        self.stream = stream
        self.started = self.last = time.monotonic()
        self.postfix: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._line()  # at once: what started the run (a model server, the data) may have taken seconds already
        self._ticker = threading.Thread(target=self._tick, name=f"progress {name}", daemon=True)
        self._ticker.start()

    def set_postfix(self, ordered_dict: dict[str, Any] | None = None, refresh: bool = True, **kwargs: Any) -> None:
        with self._lock:
            self.postfix = {**(ordered_dict or {}), **kwargs}

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.n += n
            if time.monotonic() - self.last >= self.interval:
                self._line()

    def close(self) -> None:
        self._closed.set()
        if self._ticker is not threading.current_thread():
            self._ticker.join()

    def _tick(self) -> None:
        while not self._closed.wait(self.interval / 10):
            with self._lock:
                if time.monotonic() - self.last >= self.interval:
                    self._line()

    def _line(self) -> None:
        now = time.monotonic()
        self.last = now
        elapsed = now - self.started
        calls = (f"{self.postfix['sent']} calls sent" if "sent" in self.postfix
                 else f"{self.postfix.get('calls', 0)} calls")
        finished = self.n - self.initial
        expected = (f", about {elapsed * (self.total - self.initial) / finished:.0f} s expected at this pace"
                    if finished else ", expected time known after the first cell")
        print(f"rerun {self.name}: {self.n}/{self.total} cells, {calls}, {elapsed:.0f} s{expected}",
              file=self.stream or sys.stderr, flush=True)
