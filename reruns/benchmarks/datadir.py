"""Where benchmark files are looked up: ``--data-dir``, then ``$SOTACHECK_DATA``, then ``../shared/data``."""

from __future__ import annotations

import os
from pathlib import Path

from reruns.errors import DataFileNotFound

ENV_VAR = "SOTACHECK_DATA"
_REPO_ROOT = Path(__file__).resolve().parents[2]


def candidate_dirs(data_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Directories searched for data files, in order, without duplicates."""
    dirs: list[Path] = []
    if data_dir is not None:
        dirs.append(Path(data_dir))
    if os.environ.get(ENV_VAR):
        dirs.append(Path(os.environ[ENV_VAR]))
    dirs.append(Path.cwd().parent / "shared" / "data")
    dirs.append(_REPO_ROOT.parent / "shared" / "data")
    unique: list[Path] = []
    for d in dirs:
        resolved = d.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def find_data_file(relative: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The first existing ``<dir>/<relative>``; a one-line error naming every place looked otherwise."""
    looked = []
    for directory in candidate_dirs(data_dir):
        path = directory / relative
        if path.is_file():
            return path
        looked.append(str(path))
    raise DataFileNotFound(relative, looked)
