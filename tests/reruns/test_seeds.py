"""The seed schedule (``sotacheck.reruns.seeds``)."""

from __future__ import annotations

from sotacheck.reruns.seeds import derive_seed


def test_same_problem_repeat_and_path_give_the_same_seed_in_every_pipeline() -> None:
    # the pipeline is not an input: direct's generate[0] and cot's generate[0] share a seed
    assert derive_seed(7, "HumanEval/3", 0, "generate[0]") == derive_seed(7, "HumanEval/3", 0, "generate[0]")
    seeds_by_repeat = {derive_seed(7, "HumanEval/3", r, "generate[0]") for r in range(20)}
    assert len(seeds_by_repeat) == 20  # repeats differ
    assert derive_seed(7, "HumanEval/3", 0, "plan[1]/debug[0]") != derive_seed(7, "HumanEval/3", 0, "plan[0]/debug[1]")
    assert derive_seed(8, "HumanEval/3", 0, "generate[0]") != derive_seed(7, "HumanEval/3", 0, "generate[0]")
    assert all(0 <= s < 2**31 for s in seeds_by_repeat)
