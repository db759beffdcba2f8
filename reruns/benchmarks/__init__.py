"""Benchmarks: one ``Problem`` type and a loader per dataset."""

from sotacheck.reruns.benchmarks.loaders import LOADERS, load_dataset
from sotacheck.reruns.benchmarks.problem import Dataset, Problem

__all__ = ["LOADERS", "Dataset", "Problem", "load_dataset"]
