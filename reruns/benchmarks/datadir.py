"""Where benchmark files are looked up: ``--data-dir``, then ``$SOTACHECK_DATA``, then the data bundled
with the package (``sotacheck.data``).

Each place holds the same relative layout (``benchmarks/humaneval/HumanEvalET.jsonl``, ...); a file may be
stored plain or gzip-compressed (``.jsonl.gz``), and the loaders read either. The bundled copies are
gzip-compressed; their provenance and licences are in ``data/SOURCES.md``.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from sotacheck.core.errors import DataFileNotFound

ENV_VAR = "SOTACHECK_DATA"
DataDir = str | os.PathLike[str] | None  # a loader's data_dir: --data-dir, or None for the usual places
BUNDLED_PACKAGE = "sotacheck.data"
GZIP_SUFFIX = ".gz"


def bundled_dir() -> Path | None:
    """The folder of the data bundled with the package, or None when it is not a folder on disk."""
    try:  # the package's own folder: importlib.resources would cost every command 6 ms of imports
        package = importlib.import_module(BUNDLED_PACKAGE)
    except ModuleNotFoundError:
        return None
    locations = list(getattr(package, "__path__", ()))
    root = Path(locations[0]) if len(locations) == 1 else None
    return root if root is not None and root.is_dir() else None


def candidate_dirs(data_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Directories searched for data files, in order, without duplicates."""
    dirs: list[Path] = []
    if data_dir is not None:
        dirs.append(Path(data_dir))
    if os.environ.get(ENV_VAR):
        dirs.append(Path(os.environ[ENV_VAR]))
    bundled = bundled_dir()
    if bundled is not None:
        dirs.append(bundled)
    unique: list[Path] = []
    for d in dirs:
        resolved = d.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def find_data_file(relative: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The first existing ``<dir>/<relative>`` or ``<dir>/<relative>.gz``, trying the directories in
    order; a one-line error naming every place looked otherwise."""
    looked = []
    for directory in candidate_dirs(data_dir):
        path = directory / relative
        for candidate in (path, path.with_name(path.name + GZIP_SUFFIX)):
            if candidate.is_file():
                return candidate
        looked.append(f"{path}[{GZIP_SUFFIX}]")
    raise DataFileNotFound(relative, looked)
