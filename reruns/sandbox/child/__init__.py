"""The sandbox's child side: the scripts its child processes run (``README.md`` here), not modules of the
judge's own process.

``supervisor.py`` starts ``python -I -S child/_zygote.py``, which puts this folder first on its ``sys.path``;
the scripts import each other as top-level modules (``import _wire``), standard library only. A few are also
imported by the trusted parent side, as ``sotacheck.reruns.sandbox.child._procs`` and so on: those import no
sibling. This file is never run there and imports nothing.
"""

__all__: list[str] = []
