"""Pipeline parameters: typed, validated, and the source of every arm's label and columns."""

from __future__ import annotations

import pytest

from sotacheck.core.errors import SotacheckError, UsageError
from sotacheck.reruns.pipelines import Arm, get_pipeline, names
from sotacheck.reruns.run import validate_spec


def test_unknown_pipeline_or_parameter_is_an_error() -> None:
    with pytest.raises(UsageError, match="unknown pipeline 'codesimm'; choose one of direct, cot, pycapsule, codesim"):
        Arm.of("codesimm")
    with pytest.raises(UsageError, match="pipeline 'direct': parameter p: not a parameter of this pipeline"):
        Arm.of("direct", {"p": 3})
    with pytest.raises(SotacheckError, match=r"spec.yaml: unknown pipeline 'nope'"):
        validate_spec({"dataset": "humaneval", "pipelines": [{"name": "nope"}]}, "spec.yaml")
    with pytest.raises(SotacheckError, match=r"^spec.yaml: pipeline 'codesim': parameter p: Input should be greater than "
                                             r"or equal to 1$"):
        validate_spec({"dataset": "humaneval", "pipelines": [{"name": "codesim", "params": {"p": -1}}]}, "spec.yaml")


def test_arm_labels_and_columns_come_from_the_typed_parameters() -> None:
    labels = {name: Arm.of(name).name for name in names()}
    assert {n: label for n, label in labels.items() if not n.endswith("@original")} == {
        "direct": "direct", "cot": "cot", "cot-fewshot": "cot-fewshot", "pycapsule": "pycapsule[max_attempts=5]",
        "codesim": "codesim[d=5,p=5]",
        "mapcoder": "mapcoder[k=3,t=5]", "gate": "gate[base=direct,hold_budget=3]"}
    # the authors' own classes (reruns/pipelines/original.py) carry the same typed parameters
    assert labels["mapcoder@original"] == "mapcoder@original[k=3,t=5]"
    assert labels["codesim@original"] == "codesim@original[d=5,p=5]" and labels["direct@original"] == "direct@original"
    arm = Arm.of("codesim", {"p": 3, "d": 2})
    assert arm.name == "codesim[d=2,p=3]" and arm.params.p == 3 and arm.param_dict() == {"p": 3, "d": 2}
    assert arm.columns() == {"arm": "codesim[d=2,p=3]", "pipeline": "codesim", "param.p": 3, "param.d": 2}
    assert arm == Arm.of("codesim", {"d": 2, "p": 3}) and hash(arm) == hash(Arm.of("codesim", {"d": 2, "p": 3}))
    with pytest.raises(ValueError, match="frozen"):
        arm.params.p = 4  # type: ignore[misc]
    spec = validate_spec({"dataset": "humaneval", "pipelines": [{"name": "gate", "params": {"hold_budget": 0}},
                                                                {"name": "direct"}]}, "spec.yaml")
    assert [a.name for a in spec.arms()] == ["gate[base=direct,hold_budget=0]", "direct"]
    assert spec.model_dump()["pipelines"][0] == {"name": "gate", "params": {"hold_budget": 0}}  # stored as written
    for name in names():
        assert get_pipeline(name).name == name and get_pipeline(name).defaults() == Arm.of(name).params
