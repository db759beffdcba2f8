"""Benchmarks: one ``Problem`` type, and every dataset's loader and card in one registry (``BENCHMARKS``)."""

from sotacheck.reruns.benchmarks.problem import Dataset, Problem
from sotacheck.reruns.benchmarks.registry import BENCHMARKS, Benchmark, load_dataset

__all__ = ["BENCHMARKS", "Benchmark", "Dataset", "Problem", "load_dataset"]
