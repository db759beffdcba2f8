"""sotacheck's rerun engine (``sotacheck.reruns``): benchmarks, the sandboxed judge, the harness's
boundaries (model, sandbox, store), pipelines, executors and the orchestration of a run.

The public modules and subpackages are ``__all__`` (``docs/python-api.md`` lists them), imported on first
use (the sandbox's launcher imports this package, and must not import the harness with it). The others
(``cell``, ``context``, ``crashpoints``, ``progress``, ``samples``, ``seeds``, ``spec``) are the
orchestration's internals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.lazy import lazy_submodules

if TYPE_CHECKING:
    from sotacheck.reruns import (
        benchmarks,
        executors,
        grid,
        judging,
        leakage,
        model,
        original,
        pipelines,
        run,
        sandbox,
        store,
        suspects,
    )

__all__ = ["benchmarks", "executors", "grid", "judging", "leakage", "model", "original", "pipelines", "run",
           "sandbox", "store", "suspects"]

__getattr__ = lazy_submodules(__name__, __all__)
