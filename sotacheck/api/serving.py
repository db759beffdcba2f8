"""The API on the embedded model's server: what a command line's ``auto`` engine settings stand for, and the
server itself (``sotacheck serve``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sotacheck.core.errors import UsageError

if TYPE_CHECKING:
    from sotacheck.reruns.model.local import LocalServer
    from sotacheck.reruns.model.native_server import EngineChoice


def engine_choice(model: str = "local", *, engine: str = "auto", speculative: str = "auto", slots: int = 1,
                  prefix_reuse: int | None = None, check: bool = True) -> EngineChoice:
    """The engine, speculative decoding and prefix reuse that ``auto`` settings stand for with ``model``, and
    the line that says so: for the embedded model, llama.cpp's llama-server where it is built, else
    llama-cpp-python's server (docs/embedded-model.md); for a model served elsewhere, the spec's neutral
    defaults.

    Parameters
    ----------
    model : str
        ``local``, ``gguf:PATH`` (the embedded model) or an OpenAI-compatible base URL.
    engine : str
        ``auto``, ``llama-cpp-python`` or ``llama-server``.
    speculative : str
        ``auto``, ``off`` or ``ngram-simple`` (llama-server only).
    slots : int
        Sequences in flight at once (llama-server only).
    prefix_reuse : int, optional
        The alignment of a reused prompt prefix, 0 for none; None: ``auto``.
    check : bool
        Refuse settings that do not fit each other (``slots`` above 1 without llama-server, say); False leaves
        that to the run spec, which checks them when it is validated.

    Returns
    -------
    sotacheck.reruns.model.native_server.EngineChoice
        The settings ``auto`` stands for (``engine``, ``speculative``, ``prefix_reuse``) and ``line``, the
        sentence that says so (empty for a model served elsewhere).

    Raises
    ------
    UsageError
        With ``check``, settings that do not fit (the message names the option).

    Examples
    --------
    >>> import sotacheck
    >>> sotacheck.engine_choice("http://127.0.0.1:8080/v1")
    EngineChoice(engine='llama-cpp-python', speculative='off', prefix_reuse=0, line='')
    >>> print(sotacheck.engine_choice("local", engine="llama-cpp-python").line)
    the embedded model: llama-cpp-python's server
    >>> sotacheck.engine_choice("local", engine="llama-cpp-python", slots=2)
    Traceback (most recent call last):
    sotacheck.core.errors.UsageError: --slots 2: only --engine llama-server has it
    """
    from sotacheck.reruns.model.native_server import misfit, resolve
    from sotacheck.reruns.model.registry import EMBEDDED_SCHEMES, scheme_of

    embedded = scheme_of(model) in EMBEDDED_SCHEMES
    choice = resolve(engine, speculative, slots, prefix_reuse, embedded=embedded)
    if check:
        wrong = misfit(choice.engine, slots, choice.speculative, choice.prefix_reuse, embedded=embedded, model=model)
        if wrong:
            raise UsageError(wrong)
    return choice


def local_server(choice: EngineChoice, *, gguf: str | Path | None = None, port: int = 8080, slots: int = 1,
                 probe: bool = False) -> LocalServer:
    """A server of the embedded model (or of a GGUF file) on 127.0.0.1 with the engine settings of ``choice``,
    not started: run it in a ``with`` block, or in the foreground from its ``command()`` and ``environment()``.

    Parameters
    ----------
    choice : sotacheck.reruns.model.native_server.EngineChoice
        The engine settings (:func:`engine_choice`).
    gguf : str or Path, optional
        Another GGUF file (default: the embedded model, assembled and verified on first use).
    port : int
        The port on 127.0.0.1.
    slots : int
        Sequences in flight at once (llama-server only).
    probe : bool
        With llama-server's aligned prefix reuse, start the server once now to check that the reuse is exact
        here; where it is not, the server evaluates every prompt afresh (said on standard error). The result
        is the server's ``probe_result``.

    Returns
    -------
    sotacheck.reruns.model.local.LocalServer
        The server (``base_url``, ``command()``, ``environment()``, ``probe_result``).

    Raises
    ------
    SotacheckError
        The embedded model's files missing or not matching their hash; with ``probe``, a server that cannot
        start.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import sotacheck
    >>> choice = sotacheck.engine_choice("local", engine="llama-cpp-python")
    >>> with tempfile.NamedTemporaryFile(suffix=".gguf") as model:
    ...     server = sotacheck.local_server(choice, gguf=model.name, port=8081)
    >>> server.base_url, server.model_alias == Path(model.name).stem, server.native
    ('http://127.0.0.1:8081/v1', True, None)
    """
    from sotacheck.reruns.model.local import LOCAL_MODEL_ID, LocalServer, assemble_gguf
    from sotacheck.reruns.model.native_server import server_settings

    prefix_reuse, native = server_settings(choice.engine, slots, choice.speculative, choice.prefix_reuse)
    path = Path(gguf) if gguf is not None else assemble_gguf()
    server = LocalServer(path, port=port, model_alias=LOCAL_MODEL_ID if gguf is None else path.stem,
                         prefix_reuse=prefix_reuse, native=native)
    if probe and native is not None and native.prefix_reuse:
        with server:  # the probe; where it fails, the server falls back to fresh evaluation and says so
            pass
    return server
