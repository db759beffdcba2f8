"""The plain progress lines of a rerun whose stderr is a log (``make demo``, CI): a line at least every
``interval`` seconds even while no cell finishes, with how many cells of how many, the time so far and, once a
cell has finished, the time expected at that pace."""

from __future__ import annotations

import io
import re
import time

from sotacheck.reruns.progress import ProgressLines


class FastLines(ProgressLines):
    interval = 0.05


def test_lines_keep_coming_while_no_cell_finishes_and_stop_when_closed() -> None:
    out = io.StringIO()
    bar = FastLines("demo", total=4, done=0, stream=out)
    time.sleep(0.3)  # six intervals with no cell finished: a model call that takes long
    waiting = out.getvalue().splitlines()
    assert len(waiting) >= 3
    assert all(re.fullmatch(r"rerun demo: 0/4 cells, 0 calls, \d+ s, expected time known after the first cell", line)
               for line in waiting)
    bar.set_postfix({"calls": 1, "sent": 1})
    bar.update(1)
    time.sleep(0.15)
    bar.close()
    closed_at = len(out.getvalue().splitlines())
    time.sleep(0.2)
    lines = out.getvalue().splitlines()
    assert len(lines) == closed_at  # the ticker stopped with the run
    after = lines[len(waiting):]
    assert after and all(re.fullmatch(r"rerun demo: 1/4 cells, 1 calls sent, \d+ s, about \d+ s expected at this pace",
                                      line) for line in after)


def test_expected_time_is_the_pace_of_this_sitting() -> None:
    """A resumed run (2 of 6 cells done before) that took 100 s for 2 more cells is expected to take about
    200 s for its 4: the cells done before do not count in the pace."""
    out = io.StringIO()
    bar = ProgressLines("resumed", total=6, done=2, stream=out)
    bar.started = bar.last = time.monotonic() - 100.0  # as if 100 s had passed since the start and the last line
    bar.set_postfix({"calls": 2})
    bar.update(2)
    bar.close()
    assert out.getvalue().splitlines()[-1].startswith("rerun resumed: 4/6 cells, 2 calls, 100 s, about 200 s expected")
