"""sotacheck's rerun engine: benchmarks, the sandboxed judge, and (later) the harness and pipelines."""

__version__ = "0.1.0"
