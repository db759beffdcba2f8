"""The ``sotacheck`` command line: argument parsing and printing only; every command calls
:mod:`sotacheck.api`. One module per command or group of related commands; ``main.py`` assembles them.

Its one public name is ``main`` (the module whose ``main(argv)`` runs a command line); Python code uses
:mod:`sotacheck.api` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.lazy import lazy_submodules

if TYPE_CHECKING:
    from sotacheck.cli import main

__all__ = ["main"]

__getattr__ = lazy_submodules(__name__, __all__)
