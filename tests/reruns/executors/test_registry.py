"""The executors are named in one registry (``sotacheck.reruns.executors.EXECUTORS``, issue #47): one entry
added there is an executor ``make_executor`` makes, a choice of every command's ``--executor`` and a name the
API's checks accept; a name not registered is refused everywhere with the same list."""

from __future__ import annotations

from typing import Any

import click
import pytest
from click.testing import CliRunner

from sotacheck.core.errors import UsageError
from sotacheck.core.registry import Entry
from sotacheck.reruns.executors import EXECUTORS, make_executor


class NowhereExecutor:
    """An executor that runs nothing, registered by the test."""

    def __init__(self, address: str | None) -> None:
        self.address = address


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(EXECUTORS.entries, "nowhere", Entry(f"{__name__}:NowhereExecutor", "runs nothing"))
    return "nowhere"


def _executor_choice(command: str) -> Any:
    from sotacheck.cli.main import COMMANDS

    (option,) = [p for p in COMMANDS.get(command).params if p.name == "executor"]
    assert isinstance(option.type, click.Choice)
    return option.type


def test_the_registry_names_local_and_ray_first() -> None:
    assert EXECUTORS.names()[:2] == ("local", "ray")


@pytest.mark.parametrize("command", ["rerun", "sweep", "resume", "judge"])
def test_a_registered_executor_is_a_choice_of_the_cli(nowhere: str, command: str) -> None:
    assert nowhere in _executor_choice(command).choices


def test_the_cli_help_lists_the_registered_executors(nowhere: str) -> None:
    from sotacheck.cli.main import COMMANDS

    shown = CliRunner().invoke(COMMANDS.get("rerun"), ["--help"], terminal_width=200)
    assert "[local|ray|nowhere]" in shown.output, shown.output


def test_a_registered_executor_passes_the_api_check_and_is_made(nowhere: str) -> None:
    from sotacheck.api.reruns import check_executor, executor_names

    assert executor_names() == ("local", "ray", nowhere)
    check_executor(nowhere)
    made = make_executor(nowhere, "host:6379")
    assert isinstance(made, NowhereExecutor) and made.address == "host:6379"


def test_an_unregistered_executor_is_refused_with_the_registered_names(nowhere: str) -> None:
    import sotacheck
    from sotacheck.api.reruns import check_executor

    for refuse in (lambda: check_executor("elsewhere"),
                   lambda: sotacheck.judge("humaneval", canonical=True, executor="elsewhere")):
        with pytest.raises(UsageError, match="'elsewhere': expected 'local' or 'ray' or 'nowhere'"):
            refuse()
    with pytest.raises(UsageError, match="unknown executor 'elsewhere'; choose one of local, ray, nowhere"):
        make_executor("elsewhere")
