"""One family of user-facing errors: each is reported as one line naming what is wrong and where, with a
non-zero exit. Anything else that escapes a command is a bug and is shown as a traceback.

``SotacheckError`` is the base; ``UsageError`` is a command used wrongly (exit 2, like a usage error of
the command line itself); ``InputError`` is input that cannot be used as it is (a file, a table, a run
directory, a spec). The audit's input errors derive from ``InputError`` *and* ``ValueError``, so code that
calls the statistics directly can keep catching ``ValueError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from json import JSONDecodeError

    from pydantic import ValidationError


class SotacheckError(Exception):
    """An error caused by the user's input or environment, reported as one line and a non-zero exit.

    A message that names a parameter of the function the user called gives it as a ``{placeholder}`` and
    lists it in ``parameters``: the error then reads `` `min_n` `` to a Python caller, and the command line
    says it in its own words (``--min-n``, :func:`sotacheck.cli.options.as_flags`) without rewriting the rest
    of the message (where, say, a table's `` `samples` `` column is not the ``samples`` parameter).
    """

    def __init__(self, *args: object, parameters: tuple[str, ...] = ()) -> None:
        self.parameters = parameters
        self.template = str(args[0]) if parameters and args else None
        if self.template is not None:
            args = (self.naming({}), *args[1:])
        super().__init__(*args)

    def naming(self, words: dict[str, str]) -> str:
        """The message with each named parameter in ``words`` (parameter → how the caller writes it), the
        others as `` `name` ``."""
        if self.template is None:
            return str(self)
        message = self.template
        for name in self.parameters:
            message = message.replace("{" + name + "}", words.get(name, f"`{name}`"))
        return message


class UsageError(SotacheckError):
    """A command or function used wrongly: an option out of range, options that exclude each other."""


class ArgumentError(UsageError, ValueError):
    """A statistics function called with an argument out of its domain; the message names the argument
    in backticks (scipy's ``ValueError`` convention, kept so callers may catch ``ValueError``)."""


class InputError(SotacheckError):
    """Input that cannot be used as it is; the message names the file, row, column or field."""


class DataFileNotFound(InputError):
    """A benchmark file that is missing from every place sotacheck looked."""

    def __init__(self, filename: str, looked_in: list[str]) -> None:
        places = ", ".join(looked_in) if looked_in else "(no data directory configured)"
        super().__init__(f"data file {filename!r} not found; looked in: {places}")
        self.filename = filename
        self.looked_in = looked_in


def describe_validation_error(exc: ValidationError, whole: str) -> str:
    """pydantic's first error as ``field `a.b`: message`` (``whole`` names the object when the error is
    about it rather than one field): the one-line form every spec, manifest and registry error takes."""
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"]) or whole
    return f"field `{field}`: {error['msg']}"


def describe_json_error(exc: JSONDecodeError) -> str:
    """The json module's error in one clause with its place: ``expecting value at line 3, column 1``,
    ``unterminated string starting at line 1, column 10`` (some of its messages end in "at" already)."""
    message = exc.msg[0].lower() + exc.msg[1:] if exc.msg else "invalid JSON"
    at = "" if message.endswith(" at") else " at"
    return f"{message}{at} line {exc.lineno}, column {exc.colno}"


def describe_unreadable_json(exc: JSONDecodeError | UnicodeDecodeError) -> str:
    """``invalid JSON (expecting value at line 3, column 1)``, or ``not UTF-8 text (byte 7)``."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    return f"invalid JSON ({describe_json_error(exc)})"
