"""Files that ship with sotacheck (``sotacheck.data``): benchmark files, the claim registries and the
published logs the demo reads; their licences and provenance are in ``SOURCES.md`` here.
``data/runs/`` (recorded runs) stays in the repository and is not installed.

No Python names: the files are read through ``sotacheck.reruns.benchmarks.datadir`` and
``sotacheck.audit.claim_registry``.
"""

__all__: list[str] = []
