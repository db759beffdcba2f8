"""The report's figures are reproducible: the same data give the same SVG bytes, run after run."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import matplotlib.pyplot as plt
from sotacheck.reports.figures import svg_text
fig, ax = plt.subplots()
ax.plot([0, 1, 2], [2, 0, 1], marker="o")
ax.set_title("a figure")
print(svg_text(fig))
"""


def test_the_same_figure_gives_the_same_svg_in_two_processes() -> None:
    """Two interpreters (matplotlib salted its element ids with a random UUID and stamped the date before)."""
    first, second = (subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
                     for _ in range(2))
    assert first.startswith("<svg") and "<dc:date>" not in first and 'id="' in first
    assert first == second
