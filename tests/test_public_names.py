"""Every package's public face: its ``__all__`` is the list ``docs/python-api.md`` gives, every name in it
resolves, and the examples of :mod:`sotacheck.api` run as doctests on the bundled data (as
``pytest --doctest-modules sotacheck/api`` runs them)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
import time
from pathlib import Path

import pytest

import sotacheck.api

DOCS = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
ROW = re.compile(r"^\| `(sotacheck[\w.]*)` \| (.*) \|$")


def documented() -> dict[str, list[str]]:
    """Package → the public names its row of docs/python-api.md lists (none: an empty list)."""
    rows = {}
    for line in DOCS.read_text().splitlines():
        found = ROW.match(line)
        if found:
            rows[found[1]] = re.findall(r"`([\w]+)`", found[2])
    return rows


def test_the_docs_list_every_package_with_an_all() -> None:
    assert set(documented()) == {
        "sotacheck", "sotacheck.api", "sotacheck.cli", "sotacheck.core", "sotacheck.audit", "sotacheck.audit.importers",
        "sotacheck.reports", "sotacheck.reruns", "sotacheck.reruns.benchmarks", "sotacheck.reruns.executors",
        "sotacheck.reruns.model", "sotacheck.reruns.original", "sotacheck.reruns.pipelines", "sotacheck.reruns.sandbox",
        "sotacheck.reruns.sandbox.child", "sotacheck.reruns.store", "sotacheck.data"}


@pytest.mark.parametrize("package", sorted(documented()))
def test_all_matches_the_docs_and_resolves(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted(documented()[package]), f"{package}.__all__ and docs/python-api.md differ"
    for name in module.__all__:
        assert getattr(module, name) is not None



def api_doctests() -> list[doctest.DocTest]:
    """The examples of every module of :mod:`sotacheck.api`."""
    finder = doctest.DocTestFinder()
    modules = [importlib.import_module(f"sotacheck.api.{info.name}") for info in pkgutil.iter_modules(sotacheck.api.__path__)]
    return [test for module in modules for test in finder.find(module) if test.examples]


def test_every_api_function_has_numpydoc_sections_and_an_example() -> None:
    for name in sotacheck.api.__all__:
        function = getattr(sotacheck.api, name)
        doc = function.__doc__ or ""
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            takes_nothing = section == "Parameters" and not inspect.signature(function).parameters
            assert f"\n    {section}\n    {'-' * len(section)}\n" in doc or takes_nothing, f"sotacheck.{name}: no {section}"
    names = {test.name.rsplit(".", 1)[-1] for test in api_doctests()}
    assert set(sotacheck.api.__all__) <= names, sorted(set(sotacheck.api.__all__) - names)


@pytest.mark.parametrize("test", api_doctests(), ids=lambda test: test.name.rsplit(".", 1)[-1])
def test_the_api_examples_run_fast(test: doctest.DocTest) -> None:
    """Each example passes on the bundled data, in under 4 s (2.7 s at most measured on a loaded machine)."""
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    started = time.perf_counter()
    runner.run(test)
    took = time.perf_counter() - started
    assert runner.failures == 0, f"{runner.failures} of {runner.tries} examples of {test.name} failed (above)"
    assert took < 4, f"the examples of {test.name} took {took:.1f} s"


@pytest.mark.parametrize(("module", "old", "new"), [
    ("sotacheck.reruns.sandbox", "Verdict", "JudgedSubmission"),
    ("sotacheck.reruns.sandbox.submission", "Verdict", "JudgedSubmission"),
    ("sotacheck.audit.claim_registry", "Registry", "ClaimRegistry"),
    ("sotacheck.audit.claim_model", "Registry", "ClaimRegistry"),
    ("sotacheck", "audit_claims", "check_claims"),
    ("sotacheck.api", "audit_claims", "check_claims"),
    ("sotacheck.api.claims", "audit_claims", "check_claims"),
    ("sotacheck.audit.claims", "audit_claims", "check_claims"),
    ("sotacheck.audit.claims", "audit_registries", "check_registries"),
    ("sotacheck", "audit_tests", "find_suspect_tests"),
    ("sotacheck.api", "audit_tests", "find_suspect_tests"),
    ("sotacheck.api.judging", "audit_tests", "find_suspect_tests"),
])
def test_a_renamed_public_name_still_imports_for_a_release_and_warns(module: str, old: str, new: str) -> None:
    """The old names of #47's renames (docs/python-api.md) give the new object and warn; the new names do not."""
    import warnings

    found = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"^{re.escape(module)}\.{old} is deprecated: it was renamed "
                                                rf"{re.escape(module)}\.{new}"):
        assert getattr(found, old) is getattr(found, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr(found, new).__name__ == new
    assert old not in getattr(found, "__all__", ())
    with pytest.raises(AttributeError):
        getattr(found, old + "_never_a_name")
