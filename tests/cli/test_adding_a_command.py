"""Adding a CLI command is one new file and one registry line: the command below (written only in this test)
is listed by ``sotacheck --help`` without its module being imported, and runs. Also: the listing, made from
the registry's descriptions, is the one click makes from the commands themselves (so they cannot drift), and
listing imports no command module."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from sotacheck.cli import main as cli_main
from sotacheck.core.registry import Entry

NEW_COMMAND = '''
"""``sotacheck hello``: greet someone."""

import click


@click.command()
@click.argument("name")
@click.option("--times", type=click.IntRange(min=1), default=1, help="How often.")
def hello(name: str, times: int) -> None:
    """Greet NAME, once or more."""
    for _ in range(times):
        click.echo(f"hello {name}")
'''


@pytest.fixture
def hello(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "hello_command.py").write_text(textwrap.dedent(NEW_COMMAND))  # the one new file
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli_main.COMMANDS.entries, "hello", Entry("hello_command:hello", "Greet NAME, once or more."))
    yield "hello"
    sys.modules.pop("hello_command", None)


def test_a_new_command_is_listed_and_runs(hello: str) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli_main.app, ["--help"])
    assert listed.exit_code == 0 and "  hello        Greet NAME, once or more." in listed.output, listed.output
    assert "hello_command" not in sys.modules
    done = runner.invoke(cli_main.app, ["hello", "world", "--times", "2"])
    assert done.exit_code == 0 and done.output == "hello world\nhello world\n"
    refused = runner.invoke(cli_main.app, ["hello", "world", "--times", "0"])
    assert refused.exit_code == 2 and "--times" in refused.output


def test_the_lazy_listing_is_the_one_click_makes_from_the_commands() -> None:
    context = click.Context(cli_main.app, info_name="sotacheck")
    lazy, eager = click.HelpFormatter(width=80), click.HelpFormatter(width=80)
    cli_main.app.format_commands(context, lazy)
    click.Group.format_commands(cli_main.app, context, eager)
    assert lazy.getvalue() == eager.getvalue() and "judge" in lazy.getvalue()
    for name in cli_main.COMMANDS:
        command = cli_main.COMMANDS.get(name)
        assert cli_main.COMMANDS.descriptions()[name] == command.get_short_help_str(10**6), name


def test_help_imports_no_command_module() -> None:
    code = ("import sys; from sotacheck.cli.main import main\ntry: main(['--help'])\nexcept SystemExit: pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('sotacheck.cli.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "['sotacheck.cli.main']"
