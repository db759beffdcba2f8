"""The ``sotacheck`` command group and its entry point: user errors (the ``SotacheckError`` family) are one
line on stderr and exit code 2; anything else is a bug and shows its traceback. ``--debug`` shows the
traceback of a user error too."""

from __future__ import annotations

import sys
import traceback

import click

from sotacheck.core.errors import SotacheckError
from sotacheck.core.registry import Entry, Registry, named

# Each command's function, imported only when that command runs: a ``judge`` run does not pay for importing the
# other commands' modules, and ``--help`` lists the commands from these descriptions (each command's short help,
# which tests/cli/test_adding_a_command.py keeps equal) without importing any of them.
COMMANDS: Registry[click.Command] = Registry("command", {
    "analyze": Entry("sotacheck.cli.analysis:analyze", "Pass rates with CIs per arm, grouped into studies (same problems, "
                     "model, endpoint, sampling and judge), and within each study paired comparisons against its "
                     "baseline with Holm."),
    "claims": Entry("sotacheck.cli.claims:claims", "Audit published claims: every check that what was published allows, "
                    "and one verdict by a documented rule (docs/claims.md)."),
    "compare": Entry("sotacheck.cli.compare:compare", "Is A (a pass rate in percent) significantly above B on N "
                     "problems? One verdict by the rule of claims files (docs/claims.md): the deciding test, the other "
                     "tests and the smallest detectable difference."),
    "datasets": Entry("sotacheck.cli.datasets:datasets", "List the benchmarks with their problem counts, content "
                      "hashes, sources and licences."),
    "gate": Entry("sotacheck.cli.gate:gate_command", "Fail CI on a real drop in pass rate: exit 0 pass, 1 regression, "
                  "2 unusable input."),
    "import": Entry("sotacheck.cli.imports:import_", "Import another tool's per-problem logs as a run directory that "
                    "every other command reads like a rerun (written atomically: nothing is written when PATH cannot "
                    "be read)."),
    "judge": Entry("sotacheck.cli.judge:judge", "Judge code against a benchmark's hidden tests in the sandbox."),
    "leaderboard": Entry("sotacheck.cli.leaderboard:leaderboard", "Rank every system (arm) of RUNS on one benchmark: "
                         "pass rates with intervals, every pair with the paired test under Holm, simultaneous rank "
                         "intervals, the top group (systems no other beats significantly), what the benchmark can "
                         "resolve, and suspect problems."),
    "leakage": Entry("sotacheck.cli.tools:leakage", "Prove from the stored requests that no hidden-test assert reached "
                     "any prompt."),
    "migrate": Entry("sotacheck.cli.imports:migrate", "Rewrite run directories of an older format in the current one "
                     "(tables and run.json)."),
    "report": Entry("sotacheck.cli.report:report", "A self-contained HTML audit report (no network needed to open it), "
                    "one section per study."),
    "rerun": Entry("sotacheck.cli.runs:rerun", "Re-execute pipelines on a benchmark under one harness and one seed "
                   "schedule."),
    "resume": Entry("sotacheck.cli.runs:resume", "Continue a stopped run (received calls are replayed from the store, "
                    "never re-sent)."),
    "serve": Entry("sotacheck.cli.tools:serve", "Serve the embedded model (or a GGUF) on an OpenAI-compatible "
                   "endpoint, in the foreground."),
    "sweep": Entry("sotacheck.cli.runs:sweep", "Run a pipeline at every setting of a grid in one store: settings that "
                   "share a prefix of calls (same seeds, same messages) share them through the response cache."),
    "table": Entry("sotacheck.cli.analysis:table", "Paper-ready tables (LaTeX booktabs, Markdown, CSV) from the same "
                   "numbers as `analyze`."),
}, check=named(click.Command, "command", "a click command"))


class LazyGroup(click.Group):
    """A group whose commands (:data:`COMMANDS`) are imported on first use; ``--help`` imports none of them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return COMMANDS.get(cmd_name) if cmd_name in COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help as click lists them, from the registry's descriptions."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        descriptions = COMMANDS.descriptions()
        with formatter.section("Commands"):
            # a stand-in command shortens the description exactly as click shortens the command's own help
            formatter.write_dl([(name, click.Command(name, help=descriptions[name]).get_short_help_str(limit))
                                for name in names])


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

