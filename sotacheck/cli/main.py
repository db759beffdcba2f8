"""The ``sotacheck`` command group and its entry point: user errors (the ``SotacheckError`` family) are one
line on stderr and exit code 2; anything else is a bug and shows its traceback. ``--debug`` shows the
traceback of a user error too."""

from __future__ import annotations

import importlib
import sys
import traceback

import click

from sotacheck.core.errors import SotacheckError

# Each command's module and function, imported only when that command runs (or ``--help`` lists them):
# a ``judge`` run does not pay for importing the other commands' modules (click's documented pattern for
# lazily loaded subcommands).
COMMANDS = {
    "analyze": "analysis.analyze", "claims": "claims.claims", "compare": "compare.compare", "datasets": "datasets.datasets",
    "gate": "gate.gate_command", "import": "imports.import_", "judge": "judge.judge", "leaderboard": "leaderboard.leaderboard",
    "leakage": "tools.leakage",
    "migrate": "imports.migrate", "report": "report.report", "rerun": "runs.rerun", "resume": "runs.resume",
    "serve": "tools.serve", "sweep": "runs.sweep", "table": "analysis.table",
}


class LazyGroup(click.Group):
    """A group whose commands (``COMMANDS``) are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, _, name = COMMANDS[cmd_name].rpartition(".")
        command = getattr(importlib.import_module(f"sotacheck.cli.{module}"), name)
        assert isinstance(command, click.Command) and command.name == cmd_name, COMMANDS[cmd_name]
        return command


@click.group(cls=LazyGroup, context_settings={"show_default": True}, no_args_is_help=True)
@click.version_option(package_name="sotacheck", prog_name="sotacheck", version=None, message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="Show the traceback of an error that is otherwise one line.")
@click.pass_context
def app(context: click.Context, debug: bool) -> None:
    """sotacheck: rerun LLM code-generation methods and audit their claimed margins."""
    context.obj = {"debug": debug}



_terminated: list[int] = []  # the signal that asked this process to stop, once one has


def _exit_on_sigterm(signum: int, frame: object) -> None:
    """Stop as Ctrl-C stops a run, so that ``finally`` blocks stop the model server and close the store. In a
    running event loop (a rerun) every task is cancelled and the loop unwinds them; raising here instead would
    leave the run's task pending, its cleanup undone. Elsewhere, ``SystemExit`` unwinds the call stack."""
    _terminated.append(signum)
    asyncio = sys.modules.get("asyncio")  # a loop can only be running if asyncio was imported
    try:
        loop = asyncio.get_running_loop() if asyncio is not None else None
    except RuntimeError:  # asyncio imported, no loop running
        loop = None
    if asyncio is None or loop is None:
        raise SystemExit(128 + signum)
    loop.call_soon_threadsafe(lambda: [task.cancel() for task in asyncio.all_tasks(loop)])


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
        click.echo(f"sotacheck: error: {' '.join(str(exc).split())}", err=True)  # one line, always
        sys.exit(2)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:  # usage errors arrive here in non-standalone mode
        exc.show()
        sys.exit(exc.exit_code)
    except BaseException:
        if _terminated:  # the cancellation _exit_on_sigterm started, come out of the event loop
            click.echo(f"sotacheck: stopped by signal {_terminated[0]}; `sotacheck resume` continues a run", err=True)
            sys.exit(128 + _terminated[0])
        raise
    sys.exit(code if isinstance(code, int) else 0)

