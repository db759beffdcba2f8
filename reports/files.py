"""Writing output files atomically: a temporary sibling, then a rename — never a half-written file; the
file gets the mode the umask gives (:mod:`sotacheck.core.files`)."""

from __future__ import annotations

from sotacheck.core.files import write_atomically

__all__ = ["write_atomically"]
