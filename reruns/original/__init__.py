"""The authors' released code under the harness: a checkout the user names (``checkout``), one of its
prompting classes run unmodified in a child process of its own (``_child``), every model call and every
sample-I/O evaluation it makes answered by the harness over a pipe (``runner``).

The public modules are ``__all__`` (``docs/python-api.md`` lists them), imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.lazy import lazy_submodules

if TYPE_CHECKING:
    from sotacheck.reruns.original import checkout, runner

__all__ = ["checkout", "runner"]

__getattr__ = lazy_submodules(__name__, __all__)
