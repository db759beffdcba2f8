"""llama.cpp's own ``llama-server`` as the embedded model's engine: native n-gram speculative decoding, and
slots for several sequences in flight, with the settings under which llama-cpp-python's server evaluated the
recorded runs.

``make setup-local`` builds the binary in the CMake tree of llama-cpp-python's wheel, linked against the very shared
libraries the wheel ships (scripts/build_llama.sh: one llama.cpp build for both engines); it lies in
``~/.cache/sotacheck/llama-VERSION-KEY/`` with those libraries, or at ``$SOTACHECK_LLAMA_SERVER``.
With one slot a request is evaluated alone, from an empty cache, in 512-token batches, without flash attention,
as llama-cpp-python's server does it, so a reply is a function of its request alone; speculative decoding then
changes only which rows are evaluated together, and those are set by the request's own prompt and reply.

Several slots batch the rows of different requests together, and there a reply depends on what else was in
flight (llamafile's tinyBLAS takes products of two or more rows, ggml's dot products single rows, in another
summation order; the repacked weights take a tiled kernel for batches; measured in docs/embedded-model.md).
Each mode is named in the endpoint identity, so the cache key: replies served in one mode never answer another
mode's request.

Prefix reuse (``prefix_reuse=512``): the binary ``make setup-local`` builds carries
``scripts/native/aligned-prefix-reuse.patch``, under which the server, when ``SOTACHECK_ALIGNED_REUSE`` is set,
reuses a cached prompt prefix only up to a multiple of its 512-token micro-batch, so the rest of the prompt is
evaluated in the same micro-batches as from an empty cache. Whether that gives the same logits on this build and
CPU is checked when the server starts (``reuse_probe``), and the server falls back to fresh evaluation when it
does not.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from sotacheck.core.errors import SotacheckError

SPECULATIVE_KINDS = ("off", "ngram-simple")
# The micro-batch: prompts are evaluated in runs of this many tokens, as llama-cpp-python's server does; the
# only alignment at which a reused prefix leaves the rest of the prompt in a fresh evaluation's micro-batches.
UBATCH = 512
# What every mode shares: llama-cpp-python's server's batch sizes and attention, one KV stream for each slot, no
# web UI.
SHARED_FLAGS = ("-b", str(UBATCH), "-ub", str(UBATCH), "-fa", "off", "--no-kv-unified", "--no-webui")
# Fresh evaluation: no prompt cache at all (the stock server's reuse is not aligned, so it changes logits).
FRESH_FLAGS = ("--no-cache-prompt", "--cache-ram", "0")
# Aligned reuse: the slot's cache and up to 2 GiB of saved prompts (a cell's earlier calls while other cells'
# requests held the slot); the patched server aligns what it reuses when this variable is set.
REUSE_FLAGS = ("--cache-ram", "2048")
REUSE_ENV = "SOTACHECK_ALIGNED_REUSE"


@dataclass(frozen=True)
class NativeMode:
    """How ``llama-server`` serves: ``slots`` sequences in flight, ``speculative`` drafting (``off`` or
    ``ngram-simple``: drafts looked up in the request's own prompt and reply so far, verified in one batch)."""

    slots: int = 1
    speculative: str = "off"
    # 0: every prompt evaluated from an empty cache; UBATCH: a cached prefix reused up to a multiple of it
    prefix_reuse: int = 0

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError(f"`slots` must be at least 1, got {self.slots}")
        if self.speculative not in SPECULATIVE_KINDS:
            raise ValueError(f"`speculative` must be one of {', '.join(SPECULATIVE_KINDS)}, got {self.speculative!r}")
        if self.prefix_reuse not in (0, UBATCH):
            raise ValueError(f"`prefix_reuse` must be 0 (off) or {UBATCH} (the micro-batch), got {self.prefix_reuse}")

    @property
    def identity(self) -> str:
        """The mode as the endpoint identity names it."""
        reuse = f":aligned-prefix-reuse-{self.prefix_reuse}" if self.prefix_reuse else ""
        return f"llama-server:slots-{self.slots}:spec-{self.speculative}{reuse}"

    def flags(self) -> list[str]:
        spec = [] if self.speculative == "off" else ["--spec-type", self.speculative]
        cache = REUSE_FLAGS if self.prefix_reuse else FRESH_FLAGS
        return ["-np", str(self.slots), *SHARED_FLAGS, *cache, *spec]

    def env(self) -> dict[str, str]:
        """What the server's environment adds: the patched server's switch for aligned reuse."""
        return {REUSE_ENV: str(self.prefix_reuse)} if self.prefix_reuse else {}

    def fresh(self) -> NativeMode:
        """The same mode with every prompt evaluated afresh (the fallback when aligned reuse is not exact here)."""
        return replace(self, prefix_reuse=0)


def binary() -> Path:
    """The ``llama-server`` binary: ``$SOTACHECK_LLAMA_SERVER``, else the one ``make setup-local`` built."""
    explicit = os.environ.get("SOTACHECK_LLAMA_SERVER")
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise SotacheckError(f"$SOTACHECK_LLAMA_SERVER={explicit}: not an executable file")
        return path
    # the newest build: another recipe's (older options or patches, or the older separate static build,
    # llama-server-VERSION-KEY/) may still lie beside it
    built = sorted((Path.home() / ".cache" / "sotacheck").glob("llama-*/llama-server"),
                   key=lambda path: path.stat().st_mtime)
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
    elif prefix_reuse not in (0, UBATCH):
        return (f"--prefix-reuse {prefix_reuse}: llama-server reuses a prefix aligned to its {UBATCH}-token "
                f"micro-batch only (--prefix-reuse {UBATCH}, or off)")
    return None


def server_settings(engine: str, slots: int, speculative: str, prefix_reuse: int) -> tuple[int, NativeMode | None]:
    """How the embedded server starts for these settings: llama-cpp-python's prefix reuse (0 under llama-server,
    whose reuse is part of its mode) and llama-server's mode (None for llama-cpp-python's server)."""
    if engine != "llama-server":
        return prefix_reuse, None
    return 0, NativeMode(slots, speculative, prefix_reuse)


@dataclass(frozen=True)
class EngineChoice:
    """What a command line's ``auto`` settings stand for, and the line that says so (empty for remote models)."""

    engine: str
    speculative: str
    prefix_reuse: int
    line: str


def resolve(engine: str, speculative: str, slots: int, prefix_reuse: int | None, *, embedded: bool) -> EngineChoice:
    """The engine, speculative decoding and prefix reuse a command line's ``auto`` (``prefix_reuse=None``)
    stands for.

    ``auto`` is the fastest mode whose replies are a function of their request alone (docs/embedded-model.md):
    ``llama-server`` with one slot, ``ngram-simple`` drafting and prefix reuse aligned to the micro-batch (used
    only where the start-up probe finds it exact) when the binary is built and nothing asks for
    llama-cpp-python's own settings (a prefix reuse at another alignment), else llama-cpp-python's server with
    every prompt evaluated afresh. Models served elsewhere keep ``llama-cpp-python`` (the spec's neutral
    default), ``off`` and no reuse. The choice is written into the spec, so a resumed run keeps it, and the
    endpoint identity names it."""
    if not embedded:
        return EngineChoice("llama-cpp-python" if engine == "auto" else engine,
                            "off" if speculative == "auto" else speculative, prefix_reuse or 0, "")
    missing = ""
    if engine == "auto":
        if prefix_reuse not in (None, 0, UBATCH):
            engine = "llama-cpp-python"
        elif slots > 1 or speculative == "ngram-simple" or prefix_reuse == UBATCH:
            engine = "llama-server"
        else:
            try:
                binary()
                engine = "llama-server"
            except SotacheckError:
                engine = "llama-cpp-python"
                missing = " (llama.cpp's llama-server, the faster engine, is not built: make setup-local)"
    native = engine == "llama-server"
    if speculative == "auto":
        speculative = "ngram-simple" if native else "off"
    if prefix_reuse is None:
        prefix_reuse = UBATCH if native else 0
    reuse = (f", prefix reuse aligned to {prefix_reuse} tokens" + (" where exact here (checked at start)" if native
                                                                   else "")) if prefix_reuse else ""
    mode = (f"llama-server, {slots} slot{'s' if slots > 1 else ''}, speculative decoding {speculative}"
            if native else "llama-cpp-python's server")
    return EngineChoice(engine, speculative, prefix_reuse, f"the embedded model: {mode}{reuse}{missing}")


def command(gguf: Path, port: int, threads: int, n_ctx: int, alias: str, mode: NativeMode) -> list[str]:
    """The server's command line; the context is ``n_ctx`` tokens for each slot."""
    return [str(binary()), "-m", str(gguf), "-a", alias, "--host", "127.0.0.1", "--port", str(port),
            "-t", str(threads), "-tb", str(threads), "-c", str(n_ctx * mode.slots), *mode.flags()]
