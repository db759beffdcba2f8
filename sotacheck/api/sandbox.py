"""The API on the judge's sandbox before any judging: how many workers it has by default, and starting them
early.

Nothing is imported at module level: the ``sotacheck`` launcher calls these before the command line
interface is imported (:mod:`sotacheck.cli.launch`), so that the sandbox's start overlaps the CLI's."""

from __future__ import annotations


def default_workers() -> int:
    """The sandbox workers :func:`sotacheck.judge` uses when ``workers`` is not given: one per CPU.

    Returns
    -------
    int
        The CPU count (at least 1).

    Raises
    ------
    Nothing
        A CPU count that cannot be read counts as 1.

    Examples
    --------
    >>> import os
    >>> import sotacheck
    >>> sotacheck.default_workers() == max(1, os.cpu_count() or 1)
    True
    """
    from sotacheck.reruns.sandbox.supervisor import default_workers as workers

    return workers()


def warm_up_sandbox(workers: int, *, isolate_network: bool = True) -> None:
    """Lease ``workers`` sandbox slots and start their supervisors now, for a judgement later in this process
    with as many workers (:func:`sotacheck.judge`), which then starts at once; a lease nobody takes is
    released when the process exits.

    Parameters
    ----------
    workers : int
        The sandbox workers (at least 1).
    isolate_network : bool
        Run the tests without network access, as the judge does.

    Returns
    -------
    None

    Raises
    ------
    UsageError
        ``workers`` below 1.
    RuntimeError
        Not that many free sandbox slots on this machine.

    Examples
    --------
    >>> import sotacheck
    >>> sotacheck.warm_up_sandbox(0)
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: `workers` must be at least 1, got 0
    """
    if workers < 1:
        from sotacheck.core.errors import UsageError

        raise UsageError(f"{{workers}} must be at least 1, got {workers}", parameters=("workers",))
    from sotacheck.reruns.sandbox.supervisor import warm_up

    warm_up(workers, isolate_network)
