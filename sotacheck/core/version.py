"""sotacheck's version: the one source of it (``pyproject.toml`` reads it from here, so the installed
distribution's metadata says the same; ``tests/cli/test_errors.py`` checks that). A constant rather than
``importlib.metadata.version``: importing ``importlib.metadata`` and scanning the installed distributions
costs a judge run 12–20 ms at its end, where nothing else runs."""

from __future__ import annotations

__version__ = "0.1.0"


def version() -> str:
    """The running sotacheck's version (the installed distribution's, which is built from this module)."""
    return __version__
