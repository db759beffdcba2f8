"""What every layer shares: the run-directory format, the error family, the version and provenance.

Imports nothing from ``reruns``, ``audit``, ``reports`` or ``cli`` (the layering contract checks it)."""
