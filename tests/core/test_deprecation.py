"""Old names kept for one release: each use warns, naming the new one, and gives the new name's value."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pytest

from sotacheck.core.deprecation import renamed_attribute, renamed_names


@dataclass(frozen=True)
class _Pair:
    pvalue: float
    p = renamed_attribute("p", "pvalue")


def test_an_old_attribute_reads_the_new_one_and_warns() -> None:
    pair = _Pair(0.25)
    with pytest.warns(DeprecationWarning, match=r"^_Pair\.p is deprecated: it was renamed _Pair\.pvalue"):
        assert pair.p == 0.25
    assert asdict(pair) == {"pvalue": 0.25}  # not a field: the JSON a result gives has the new name only
    with pytest.raises(AttributeError):
        pair.p = 0.5  # type: ignore[misc]  # read-only


def test_an_old_module_name_gives_the_new_object_and_warns() -> None:
    class New:
        pass

    lookup = renamed_names("pkg.mod", {"Old": "New"}, {"New": New})
    with pytest.warns(DeprecationWarning, match=r"^pkg\.mod\.Old is deprecated: it was renamed pkg\.mod\.New"):
        assert lookup("Old") is New
    with pytest.raises(AttributeError, match="has no attribute 'Other'"):
        lookup("Other")


def test_an_old_module_name_can_resolve_through_a_lazy_lookup() -> None:
    lookup = renamed_names("pkg", {"Old": "New"}, {}, fallback=lambda name: f"lazy {name}")
    with pytest.warns(DeprecationWarning):
        assert lookup("Old") == "lazy New"
    assert lookup("Other") == "lazy Other"


def test_a_renamed_json_key_is_also_written_under_its_old_name() -> None:
    from sotacheck.core.deprecation import with_old_keys

    record = {"a": 1, "pvalue": 0.5, "pvalue_adjusted": 0.75}
    assert with_old_keys(record, {"p": "pvalue", "p_adjusted": "pvalue_adjusted", "p_holm": "absent"}) == {
        "a": 1, "pvalue": 0.5, "pvalue_adjusted": 0.75, "p": 0.5, "p_adjusted": 0.75}
    assert list(with_old_keys(record, {"p": "pvalue"}))[-1] == "p"  # after the object's own keys


def test_an_old_keyword_argument_passes_its_value_as_the_new_one_and_warns() -> None:
    import inspect
    import warnings

    from sotacheck.core.deprecation import renamed_keywords

    @renamed_keywords(samples="sample_count")
    def read(path: str, *, sample_count: int | None = None) -> tuple[str, int | None]:
        return path, sample_count

    with pytest.warns(DeprecationWarning, match=r"^read\(samples=\.\.\.\) is deprecated: it was renamed "
                                                r"sample_count=\.\.\."):
        assert read("t.csv", samples=3) == ("t.csv", 3)  # type: ignore[call-arg]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name does not warn
        assert read("t.csv", sample_count=3) == ("t.csv", 3)
    with pytest.raises(TypeError, match=r"both samples= .* and sample_count="):
        read("t.csv", samples=3, sample_count=4)  # type: ignore[call-arg]
    assert list(inspect.signature(read).parameters) == ["path", "sample_count"]
