"""Options several commands share, and small printing helpers."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

PATH = click.Path(path_type=Path)
F = TypeVar("F", bound=Callable[..., Any])

data_dir_option = click.option("--data-dir", type=PATH, default=None,
                               help="Local benchmark files (else $SOTACHECK_DATA, else the copies shipped with "
                                    "sotacheck).")
hub_id_option = click.option("--hub-id", default=None,
                             help="Read the benchmark from this hub dataset instead of local files (the benchmarks "
                                  "not bundled: mbpp-et, mbpp-et-rows, humaneval-plus, mbpp-plus).")
baseline_option = click.option("--baseline", default=None,
                               help="Baseline arm of every study that has it, by its name in its run (default per "
                                    "study: the first pipeline its first run lists, else its first arm).")
compare_option = click.option("--compare", nargs=2, multiple=True, metavar="ARM AGAINST",
                              help="Also compare ARM with AGAINST (names as `analyze` prints them), across studies "
                                   "if need be, labelled as such; repeatable; these form their own Holm family.")
class ExecutorChoice(click.Choice):
    """``--executor``'s choice: the executors registered when it is read (:func:`sotacheck.api.reruns.executor_names`),
    an executor added after the CLI was imported included."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from sotacheck.api.reruns import executor_names

        return executor_names()

    @choices.setter
    def choices(self, _value: object) -> None:
        pass


executor_option = click.option("--executor", type=ExecutorChoice(), default="local",
                               help="'local' (this machine) or 'ray' (cells as Ray tasks; pip install 'sotacheck[ray]').")
ray_address_option = click.option("--ray-address", default=None,
                                  help="Ray cluster HOST:PORT, or 'auto' for one started on this machine "
                                       "(default: a private local Ray).")
reuse_option = click.option("--reuse", type=PATH, multiple=True,
                            help="Another run (directory) whose replies answer identical requests here instead of "
                                 "the model; repeatable.")


class PrefixReuse(click.ParamType):
    """``--prefix-reuse``: ``auto`` (None: the engine's default), ``off`` (0), or an alignment in tokens."""

    name = "prefix-reuse"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | None:
        if value is None or isinstance(value, int):
            return value
        text = str(value).strip().lower()
        if text == "auto":
            return None
        if text == "off":
            return 0
        if not text.isdigit():
            self.fail(f"{value!r}: expected auto, off, or an alignment in tokens (a whole number)", param, ctx)
        return int(text)


def prefix_reuse_option(help_text: str) -> Callable[[F], F]:
    """``--prefix-reuse A|off|auto``, shared by ``rerun``, ``sweep`` and ``serve``."""
    return click.option("--prefix-reuse", "prefix_reuse", type=PrefixReuse(), default="auto", metavar="A|off|auto",
                        help=help_text)


def deprecated_alias(old: str, new: str, dest: str, **option: Any) -> Callable[[F], F]:
    """The old spelling ``old`` of the option ``new`` (which sets the parameter ``dest``), kept for one release
    after a rename: hidden from ``--help``, it sets ``dest`` as ``new`` does (``new`` wins when both are given)
    and says on standard error, in one line, that it is deprecated. ``option``: the old option's click settings
    (its ``type``, or ``is_flag=True``). Put it just below ``@click.command``."""
    alias = f"deprecated_{dest}"

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            value = kwargs.pop(alias)
            if value is not None and value is not False:
                click.echo(f"sotacheck: {old} is deprecated, use {new} (the old spelling goes in the next release)",
                           err=True)
                if kwargs.get(dest) is None or kwargs.get(dest) is False:
                    kwargs[dest] = value
            return function(*args, **kwargs)

        return click.option(old, alias, hidden=True, default=None, **option)(wrapper)  # type: ignore[return-value]

    return decorate


def json_default(value: object) -> object:
    """``json.dumps`` fallback for numpy scalars in result objects."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def write_text(path: Path, text: str) -> None:
    """Write an output file atomically (a reader never sees half of it)."""
    from sotacheck.core.files import write_atomically

    write_atomically(path, text)


@contextmanager
def as_flags(**flags: str) -> Iterator[None]:
    """Say an API error in the command line's words: the API names its parameters (`` `format` must be ...``,
    ``pass `allow_large` ``), the CLI the flags that set them (``as_flags(format="--format", allow_large="--yes")``
    gives ``--format must be ...``, ``pass --yes``). Only the words the error lists in ``parameters`` change
    (:class:`sotacheck.core.errors.SotacheckError`); the error is re-raised, its type kept."""
    from sotacheck.core.errors import SotacheckError

    try:
        yield
    except SotacheckError as exc:
        if exc.parameters:  # the error says which of its words are parameters (others may quote a column)
            exc.args = (exc.naming(flags), *exc.args[1:])
        raise
