"""The benchmark registry: every dataset sotacheck loads, its loader and its card in one entry.

A benchmark is one :class:`Benchmark`: its name, where it comes from and under which licence (what
``sotacheck datasets`` prints), whether it can be read from a hub dataset instead of local files, and the
function that loads it. Adding one is a module that defines ``BENCHMARK = Benchmark(...)`` and one line in
:data:`BENCHMARKS` (a lazy :class:`~sotacheck.core.registry.Registry`, like every other kind of plug-in);
``load_dataset``, ``sotacheck datasets``, ``judge``, ``rerun`` and the claims' dataset sizes pick it up.
The built-in ones are in :mod:`.catalog`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from sotacheck.core.errors import InputError, SotacheckError
from sotacheck.core.registry import Entry, Registry, named
from sotacheck.reruns.benchmarks.datadir import DataDir
from sotacheck.reruns.benchmarks.problem import Dataset

OutputRules = Literal["strict", "execeval"]
Continues = Literal["prompt", "starter_code"]


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its loader and its card.

    Attributes
    ----------
    name : the dataset's name (``--dataset``), the same as its registry key.
    source : the upstream files it is built from, in a line.
    licence : of those files, and of the original benchmark where it differs.
    loader : ``loader(data_dir)``, or ``loader(data_dir, hub_id)`` when ``reads_hub``: the problems.
    reads_hub : whether it can be read from a hub dataset (``--hub-id``) instead of local files.
    family : the benchmark the authors' released code (MapCoder's, CodeSim's: ``reruns/original``) runs it as
        (``humaneval``, ``mbpp``, ``apps``); None where their code does not run on it.
    output_rules : how a program task's standard output is compared with the expected one: ``strict`` (a NaN
        matches only a NaN, integers digit for digit) or ExecEval's own, ``execeval`` (``child/_outputs.py``).
    continues : what a completion that continues the prompt (an indented body) is appended to: the
        ``prompt``, or the ``starter_code`` where the prompt is prose (BigCodeBench's instruct split).
    """

    name: str
    source: str
    licence: str
    loader: Callable[..., Dataset]
    reads_hub: bool = False
    family: str | None = None
    output_rules: OutputRules = "strict"
    continues: Continues = "prompt"

    def load(self, data_dir: DataDir = None, hub_id: str | None = None) -> Dataset:
        """The problems, from ``hub_id`` where given (only for a benchmark that ``reads_hub``).

        Raises
        ------
        InputError
            ``hub_id`` for a benchmark that is not read from a hub (it would be ignored).
        SotacheckError
            A data file that cannot be found or read (the message names it).
        """
        self.check_hub_id(hub_id)
        return self.loader(data_dir, hub_id) if self.reads_hub else self.loader(data_dir)


    def check_hub_id(self, hub_id: str | None) -> None:
        """Refuse a hub id for a benchmark that is not read from a hub (``InputError``: it would be ignored)."""
        if hub_id and not self.reads_hub:
            raise InputError(f"--hub-id {hub_id!r}: dataset {self.name!r} is not read from a hub (only "
                             f"{', '.join(hub_datasets())} are)")


@dataclass(frozen=True)
class DatasetCard:
    """A benchmark's provenance as ``sotacheck datasets`` prints it, and the facts the judge and the authors'
    code read (:class:`Benchmark`'s ``family``, ``output_rules`` and ``continues``)."""

    name: str
    source: str
    licence: str
    family: str | None = None
    output_rules: OutputRules = "strict"
    continues: Continues = "prompt"


BENCHMARKS: Registry[Benchmark] = Registry("dataset", {
    "humaneval": Entry("sotacheck.reruns.benchmarks.catalog:HUMANEVAL", "HumanEval (164)"),
    "humaneval-et": Entry("sotacheck.reruns.benchmarks.catalog:HUMANEVAL_ET", "HumanEval-ET: HumanEval with extended tests"),
    "mbpp": Entry("sotacheck.reruns.benchmarks.catalog:MBPP", "MBPP (974)"),
    "mbpp-test": Entry("sotacheck.reruns.benchmarks.catalog:MBPP_TEST", "MBPP's test split (500)"),
    "mbpp-mapcoder": Entry("sotacheck.reruns.benchmarks.catalog:MBPP_MAPCODER", "the 397 MBPP problems MapCoder and CodeSim run"),
    "mbpp-et": Entry("sotacheck.reruns.benchmarks.catalog:MBPP_ET", "MBPP-ET as MapCoder and CodeSim publish it (not bundled)"),
    "mbpp-et-rows": Entry("sotacheck.reruns.benchmarks.catalog:MBPP_ET_ROWS", "every row of MBPP_ET.jsonl (not bundled)"),
    "apps": Entry("sotacheck.reruns.benchmarks.catalog:APPS", "the 150 APPS problems MapCoder and CodeSim run"),
    "apps-execeval": Entry("sotacheck.reruns.benchmarks.catalog:APPS_EXECEVAL", "the same, judged by ExecEval's own rules"),
    "humaneval-plus": Entry("sotacheck.reruns.benchmarks.catalog:HUMANEVAL_PLUS", "HumanEval+ from EvalPlus (not bundled)"),
    "mbpp-plus": Entry("sotacheck.reruns.benchmarks.catalog:MBPP_PLUS", "MBPP+ from EvalPlus (not bundled)"),
    "bigcodebench-complete": Entry("sotacheck.reruns.benchmarks.catalog:BIGCODEBENCH_COMPLETE", "BigCodeBench, complete"),
    "bigcodebench-instruct": Entry("sotacheck.reruns.benchmarks.catalog:BIGCODEBENCH_INSTRUCT", "BigCodeBench, instruct"),
}, check=named(Benchmark, "dataset", "a Benchmark"))


def hub_datasets() -> tuple[str, ...]:
    """The benchmarks that can be read from a hub dataset (``hub_id``) instead of local files, sorted."""
    return tuple(sorted(benchmark.name for benchmark in BENCHMARKS.load_all() if benchmark.reads_hub))


def load_dataset(name: str, data_dir: DataDir = None, hub_id: str | None = None) -> Dataset:
    """Load a benchmark by name, from ``hub_id`` where given (one of :func:`hub_datasets`); an unknown name, or
    a hub id for a benchmark that is not read from a hub, is a one-line error."""
    return BENCHMARKS.get(name).load(data_dir, hub_id)


def check_hub_id(name: str, hub_id: str | None) -> None:
    """Refuse an unknown dataset (``UsageError`` listing the known ones), and a hub id given for a dataset that
    has no hub source (``InputError``: it would be ignored)."""
    BENCHMARKS.get(name).check_hub_id(hub_id)


def card(name: str) -> DatasetCard:
    """The card of a benchmark (one saying 'not recorded' for a name the registry does not list)."""
    if name not in BENCHMARKS:
        return DatasetCard(name, "not recorded", "not recorded")
    benchmark = BENCHMARKS.get(name)
    return DatasetCard(name, benchmark.source, benchmark.licence, benchmark.family, benchmark.output_rules,
                       benchmark.continues)


def loadable_sizes(names: Iterable[str], data_dir: DataDir = None) -> dict[str, int]:
    """The problem count of each dataset of ``names`` that can be loaded (the others are left out: a claim
    about one then says its shipped copy could not be counted)."""
    sizes = {}
    for name in names:
        try:
            sizes[name] = len(load_dataset(name, data_dir))
        except SotacheckError:
            continue
    return sizes
