"""What every layer shares (``sotacheck.core``): the run-directory format, arm identity, the error family,
the version and provenance.

Imports nothing from ``reruns``, ``audit``, ``reports`` or ``cli`` (the layering contract checks it). Every
module is public (``__all__``; ``docs/python-api.md`` lists them), imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.lazy import lazy_submodules

if TYPE_CHECKING:
    from sotacheck.core import arms, deprecation, errors, files, lazy, outcomes, provenance, pyast, registry, rundir, version

__all__ = ["arms", "deprecation", "errors", "files", "lazy", "outcomes", "provenance", "pyast", "registry", "rundir", "version"]

__getattr__ = lazy_submodules(__name__, __all__)
