"""The importer protocol: what every ``sotacheck import`` kind is.

An importer has a ``name`` (the KIND argument), ``reads`` (what PATH is, in a few words), ``accepts`` (the
options it reads), ``recognises(path)`` (whether a file looks like its input: used to say, for a file given
under the wrong kind, which kind it looks like) and ``read(path, options)``, which returns the outcome table
(the schema is in :mod:`sotacheck.core.rundir`) and the manifest fields that say where it came from
(``source``, ``files`` with their SHA-256, ``repairs`` made while reading, ``systems``...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pandas is imported when an importer runs: `sotacheck --help` stays fast
    import pandas as pd

Result = tuple["pd.DataFrame", dict[str, Any]]


@dataclass(frozen=True)
class ImportOptions:
    """The options of ``sotacheck import`` (None: not given).

    Attributes
    ----------
    arm : the arm's name, for input of one arm (``--arm``).
    dataset : the dataset's name (``--dataset``).
    sample_count : the number of samples behind each fraction of a long table (``--sample-count``).
    instances : the file listing a benchmark's instance ids (``--instances``, SWE-bench results).
    """

    arm: str | None = None
    dataset: str | None = None
    sample_count: int | None = None
    instances: Path | None = None

    def given(self) -> list[str]:
        """The names of the options given."""
        return [field.name for field in fields(self) if getattr(self, field.name) is not None]


@runtime_checkable
class Importer(Protocol):
    """One ``sotacheck import`` kind (see the module docstring)."""

    name: str
    reads: str
    accepts: frozenset[str]

    def recognises(self, path: Path) -> bool:
        """Whether ``path`` looks like this kind's input (reads at most the file's first bytes or document)."""
        ...

    def read(self, path: Path, options: ImportOptions) -> Result:
        """The outcome table and manifest fields of ``path``.

        Raises
        ------
        OutcomeError
            Input that cannot be read; the one-line message names the file and the row or field.
        """
        ...


@dataclass(frozen=True)
class FunctionImporter:
    """An :class:`Importer` made of two functions, the form every built-in importer takes."""

    name: str
    reads: str
    accepts: frozenset[str]
    recognise: Callable[[Path], bool]
    reader: Callable[[Path, ImportOptions], Result]

    def recognises(self, path: Path) -> bool:
        return self.recognise(path)

    def read(self, path: Path, options: ImportOptions) -> Result:
        return self.reader(path, options)
