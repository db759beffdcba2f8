"""The report model's small value types, shared by ``html`` and ``glance``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Figure:
    title: str
    alt: str
    svg: str
    left_out: str = ""  # the arms this figure leaves out, each with the reason


@dataclass(frozen=True)
class GlanceRow:
    """One line of the report's first table: a claim's or a comparison's verdict and its decisive numbers."""

    kind: str
    what: str
    verdict: str
    numbers: str
    tone: str  # "good", "bad" or "neutral", for the verdict cell's colour
