"""The ``sotacheck`` command group and its entry point: user errors (the ``SotacheckError`` family) are one
line on stderr and exit code 2; anything else is a bug and shows its traceback. ``--debug`` shows the
traceback of a user error too."""

from __future__ import annotations

import sys
import traceback

import click

from sotacheck.cli import analysis, claims, datasets, gate, imports, judge, report, runs, tools
from sotacheck.core.errors import SotacheckError


@click.group(context_settings={"show_default": True}, no_args_is_help=True)
@click.version_option(package_name="sotacheck", prog_name="sotacheck", version=None, message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="Show the traceback of an error that is otherwise one line.")
@click.pass_context
def app(context: click.Context, debug: bool) -> None:
    """sotacheck: rerun LLM code-generation methods and audit their claimed margins."""
    context.obj = {"debug": debug}


for command in (datasets.datasets, judge.judge, imports.import_, imports.migrate, analysis.analyze, analysis.table,
                gate.gate_command, claims.claims, runs.rerun, runs.sweep, runs.resume, tools.leakage, tools.serve,
                report.report):
    app.add_command(command)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds, so `finally` blocks stop the model server and close the store


def _debug_requested(args: list[str]) -> bool:
    """``--debug`` among the group's options (those before the command's name)."""
    for arg in args:
        if not arg.startswith("-"):
            return False
        if arg == "--debug":
            return True
    return False


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run one command, turn its outcome into an exit code."""
    import signal

    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    args = sys.argv[1:] if argv is None else argv
    try:
        code = app.main(args, prog_name="sotacheck", standalone_mode=False)  # returns a click Exit's code
    except SotacheckError as exc:
        if _debug_requested(args):
            traceback.print_exc()
        click.echo(f"sotacheck: error: {exc}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:  # usage errors arrive here in non-standalone mode
        exc.show()
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)

