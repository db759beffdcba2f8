"""Files that ship with sotacheck (``sotacheck.data``): benchmark files, the claim registries and the
published logs the demo reads; their licences and provenance are in ``SOURCES.md`` here.
The recorded runs are not here: they are the repository's top-level ``recordings/``, which is not installed.

No Python names: the files are read through ``sotacheck.reruns.benchmarks.datadir`` and
``sotacheck.audit.claim_registry``.
"""

__all__: list[str] = []
