"""llama.cpp's own ``llama-server`` as the embedded model's engine: native n-gram speculative decoding, and
slots for several sequences in flight, with the settings under which llama-cpp-python's server evaluated the
recorded runs.

``make setup-local`` builds the binary from the source llama-cpp-python vendors (the same llama.cpp, the same
compiler options); it lies in ``~/.cache/sotacheck/llama-server-VERSION/`` or at ``$SOTACHECK_LLAMA_SERVER``.
With one slot a request is evaluated alone, from an empty cache, in 512-token batches, without flash attention,
as llama-cpp-python's server does it, so a reply is a function of its request alone; speculative decoding then
changes only which rows are evaluated together, and those are set by the request's own prompt and reply.

Several slots batch the rows of different requests together, and there a reply depends on what else was in
flight (llamafile's tinyBLAS takes products of two or more rows, ggml's dot products single rows, in another
summation order; the repacked weights take a tiled kernel for batches; measured in docs/embedded-model.md).
Each mode is named in the endpoint identity, so the cache key: replies served in one mode never answer another
mode's request.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from sotacheck.core.errors import SotacheckError

SPECULATIVE_KINDS = ("off", "ngram-simple")
# What every mode shares: llama-cpp-python's server's batch sizes and attention, no prompt cache (the server's
# own prefix reuse is not aligned, so it changes logits), one KV stream for each slot, no web UI.
SHARED_FLAGS = ("-b", "512", "-ub", "512", "-fa", "off", "--no-cache-prompt", "--no-kv-unified", "--no-webui")


@dataclass(frozen=True)
class NativeMode:
    """How ``llama-server`` serves: ``slots`` sequences in flight, ``speculative`` drafting (``off`` or
    ``ngram-simple``: drafts looked up in the request's own prompt and reply so far, verified in one batch)."""

    slots: int = 1
    speculative: str = "off"

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError(f"`slots` must be at least 1, got {self.slots}")
        if self.speculative not in SPECULATIVE_KINDS:
            raise ValueError(f"`speculative` must be one of {', '.join(SPECULATIVE_KINDS)}, got {self.speculative!r}")

    @property
    def identity(self) -> str:
        """The mode as the endpoint identity names it."""
        return f"llama-server:slots-{self.slots}:spec-{self.speculative}"

    def flags(self) -> list[str]:
        spec = [] if self.speculative == "off" else ["--spec-type", self.speculative]
        return ["-np", str(self.slots), *SHARED_FLAGS, *spec]


def binary() -> Path:
    """The ``llama-server`` binary: ``$SOTACHECK_LLAMA_SERVER``, else the one ``make setup-local`` built."""
    explicit = os.environ.get("SOTACHECK_LLAMA_SERVER")
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise SotacheckError(f"$SOTACHECK_LLAMA_SERVER={explicit}: not an executable file")
        return path
    built = sorted((Path.home() / ".cache" / "sotacheck").glob("llama-server-*/llama-server"))
    if built:
        return built[-1]
    found = shutil.which("llama-server")
    if found is None:
        raise SotacheckError("the llama-server engine needs llama.cpp's llama-server (`make setup-local` builds it; "
                             "or set $SOTACHECK_LLAMA_SERVER)")
    return Path(found)


def misfit(engine: str, slots: int, speculative: str, prefix_reuse: int, *, embedded: bool, model: str) -> str | None:
    """What is wrong with these engine settings, in one line naming the option, or None: the one check behind
    a run spec and ``sotacheck serve``."""
    if engine != "llama-cpp-python" and not embedded:
        return (f"--engine {engine}: only the embedded model (local, gguf:PATH) is served here; --model {model!r} "
                "is served elsewhere")
    if engine != "llama-server":
        for name, value, default in (("--slots", slots, 1), ("--speculative", speculative, "off")):
            if value != default:
                return f"{name} {value}: only --engine llama-server has it"
    elif prefix_reuse:
        return (f"--prefix-reuse {prefix_reuse}: only --engine llama-cpp-python reuses prompt prefixes exactly; "
                "llama-server evaluates every prompt afresh")
    return None


def resolve(engine: str, speculative: str, slots: int, *, embedded: bool, prefix_reuse: int) -> tuple[str, str, str]:
    """The engine and speculative decoding a command line's ``auto`` stands for, and a line saying what was chosen.

    ``auto`` is the fastest mode whose replies are a function of their request alone (docs/embedded-model.md):
    ``llama-server`` with one slot and ``ngram-simple`` drafting when the binary is built and nothing asks for
    llama-cpp-python's own settings (``prefix_reuse``), else llama-cpp-python's server. Models served elsewhere
    keep ``llama-cpp-python`` (the spec's neutral default) and ``off``. The choice is written into the spec, so a
    resumed run keeps it, and the endpoint identity names it."""
    if not embedded:
        return (("llama-cpp-python" if engine == "auto" else engine), ("off" if speculative == "auto" else speculative),
                "")
    if engine == "auto":
        if prefix_reuse:
            engine = "llama-cpp-python"
        elif slots > 1 or speculative == "ngram-simple":
            engine = "llama-server"
        else:
            try:
                binary()
                engine = "llama-server"
            except SotacheckError:
                engine = "llama-cpp-python"
                if speculative == "auto":
                    return engine, "off", ("the embedded model: llama-cpp-python's server (llama.cpp's llama-server, "
                                           "the faster engine, is not built: make setup-local)")
    if speculative == "auto":
        speculative = "ngram-simple" if engine == "llama-server" else "off"
    mode = (f"llama-server, {slots} slot{'s' if slots > 1 else ''}, speculative decoding {speculative}"
            if engine == "llama-server" else "llama-cpp-python's server")
    return engine, speculative, f"the embedded model: {mode}"


def command(gguf: Path, port: int, threads: int, n_ctx: int, alias: str, mode: NativeMode) -> list[str]:
    """The server's command line; the context is ``n_ctx`` tokens for each slot."""
    return [str(binary()), "-m", str(gguf), "-a", alias, "--host", "127.0.0.1", "--port", str(port),
            "-t", str(threads), "-tb", str(threads), "-c", str(n_ctx * mode.slots), *mode.flags()]
