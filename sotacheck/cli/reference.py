"""The CLI reference (``docs/cli.md``), generated from the commands' own help so that it cannot drift:
``python -m sotacheck.cli.reference`` rewrites it, ``tests/cli/test_cli_reference.py`` fails when a
command's help changed and the file was not regenerated (``make docs`` regenerates it)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sotacheck.cli.main import app

WIDTH = 100
HEADER = """# CLI reference

Generated from the commands' own `--help` by `python -m sotacheck.cli.reference` (`make docs`); do not edit
by hand: `tests/cli/test_cli_reference.py` fails when a command's help and this file disagree.
"""


def _help(command: click.Command, name: str, parent: click.Context | None) -> str:
    context = click.Context(command, info_name=name, parent=parent, terminal_width=WIDTH, max_content_width=WIDTH)
    return command.get_help(context)


def render() -> str:
    """The whole reference: the group's help, then every command's, in the order ``--help`` lists them."""
    root = click.Context(app, info_name="sotacheck", terminal_width=WIDTH, max_content_width=WIDTH)
    parts = [HEADER, "## sotacheck", "", "```text", _help(app, "sotacheck", None), "```", ""]
    for name in app.list_commands(root):
        command = app.get_command(root, name)
        assert command is not None, name
        parts += [f"## sotacheck {name}", "", "```text", _help(command, name, root), "```", ""]
    return "\n".join(parts)


def main(argv: list[str]) -> None:
    target = Path(argv[0]) if argv else Path("docs/cli.md")
    target.write_text(render())
    print(f"wrote {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
