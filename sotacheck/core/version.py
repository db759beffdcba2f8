"""sotacheck's version, read from the installed distribution's metadata (``pyproject.toml`` is its one
source). Read lazily: ``importlib.metadata`` scans the installed distributions, which a judge run that never
prints a version should not pay for."""

from __future__ import annotations

from functools import cache

DISTRIBUTION = "sotacheck"


@cache
def version() -> str:
    """The installed sotacheck's version; ``0+unknown`` when run from a tree that was never installed."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"
