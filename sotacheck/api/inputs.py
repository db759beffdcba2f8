"""What several API functions read the same way: runs given as paths or loaded, and the benchmark sizes
that claims files name. Not part of the public API's names (``sotacheck.api.__all__``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sotacheck.core.errors import UsageError

if TYPE_CHECKING:
    from sotacheck.audit.claim_registry import ClaimRegistry
    from sotacheck.core.rundir import Run


def runs_of(runs: Iterable[Run | str | Path]) -> list[Run]:
    """``runs`` loaded (paths read with :func:`sotacheck.core.rundir.load_run`); none is a :class:`UsageError`."""
    from sotacheck.core.rundir import Run, load_run

    loaded = [run if isinstance(run, Run) else load_run(run) for run in runs]
    if not loaded:
        raise UsageError("no runs given")
    return loaded


def dataset_sizes(claims: Sequence[Path | ClaimRegistry], data_dir: str | Path | None) -> dict[str, int]:
    """Problem counts of the datasets that benchmark-size claims name (those that can be loaded)."""
    from sotacheck.audit.claim_registry import load_registry
    from sotacheck.reruns.benchmarks.registry import loadable_sizes

    registries = [load_registry(c) if isinstance(c, Path) else c for c in claims]
    return loadable_sizes({d for r in registries for c in r.claims if (d := getattr(c, "dataset", None))}, data_dir)
