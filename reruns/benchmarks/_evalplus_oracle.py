"""Expected outputs for EvalPlus problems: the canonical solutions run on every input, in child processes.

EvalPlus computes its expected outputs by running each task's canonical solution on each input (its
``get_groundtruth``); so does this module, but never in the process that loads the dataset: the solutions
run in ``python -s -P -m sotacheck.reruns.benchmarks._evalplus_oracle`` children (a few in parallel, each
in an empty temporary directory, with ``PYTHONHASHSEED=0`` so that an output built from a set's order is
the same on every load), which get the jobs on standard input and answer with one line per task, values
as the judge's own channel writes them (``sandbox/child/_wire.py``: exact types, no pickle). A task whose
solution raises, returns something that is not plain data, or runs past ``TASK_TIMEOUT_S`` is reported,
with the input, and the dataset does not load. (The leading underscore: a child process's module, though
its parent side, :func:`canonical_outputs`, is here too; docs/design.md, "One meaning per name".)

The outputs are cached under ``$SOTACHECK_CACHE/evalplus/`` (default ``~/.cache/sotacheck``), one file per
release file, keyed by the SHA-256 of its content, this module's source, the input conversions' and the
interpreter's version: a second load reads them back and runs nothing.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sotacheck.reruns.benchmarks.suites import SUITES
from sotacheck.reruns.sandbox.child import _wire

TASK_TIMEOUT_S = 300.0  # per task, both suites: a guard against a hang, not a judge's limit
Outputs = dict[str, list[Any]]  # suite -> expected output of each input


def _no_handles(value: Any) -> Any:
    raise _wire.NotData(f"a value of type {type(value).__name__!r}")


def _decode(payload: bytes) -> Any:
    def refuse(tag: dict[str, Any]) -> Any:
        raise ValueError(f"unexpected tag {tag.get('~')!r}")

    return _wire.decoder(refuse, refuse)(payload)


def _encode(value: Any) -> Any:
    return _wire.encode_value(value, _no_handles)


def _message(**fields: Any) -> bytes:
    """A dict of already-encoded values, as the channel's text (``_encode`` of the dict would tag them again)."""
    return _wire.dumps({"~": "d", "v": [[key, value] for key, value in fields.items()]})


# --- the child -------------------------------------------------------------------------------------------

def _run_task(job: dict[str, Any]) -> bytes:
    """One task's answer: every suite's encoded outputs, or an error naming the input."""
    namespace: dict[str, Any] = {"__name__": "__evalplus_canonical__"}
    where = "loading the canonical solution"
    key = job["key"]
    try:
        exec(compile(job["code"], f"<canonical {key}>", "exec"), namespace)
        function = namespace[job["entry_point"]]
        answer: dict[str, Any] = {}
        for suite in SUITES:
            outputs = []
            for index, arguments in enumerate(job["inputs"][suite]):
                where = f"{suite}_input[{index}]"
                output = function(*copy.deepcopy(arguments))
                if job["not_none"]:
                    output = output is not None
                try:
                    outputs.append(_encode(output))
                except (_wire.NotData, RecursionError) as exc:
                    return _message(key=key, error=f"{where}: the output is not plain data ({exc})")
            answer[suite] = outputs
        return _message(key=key, **answer)
    except BaseException as exc:  # the dataset's code may raise anything, SystemExit included
        return _message(key=key, error=f"{where}: {type(exc).__name__}: {str(exc)[:300]}")


def main() -> None:
    """The child: jobs on standard input, one JSON line per task on standard output (after a line naming
    the task it starts), nothing else there: what the solutions print goes to /dev/null."""
    jobs = _decode(sys.stdin.buffer.read())
    protocol = os.fdopen(os.dup(1), "wb")
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(quiet, fd)
    for job in jobs:
        protocol.write(_message(start=job["key"]) + b"\n")
        protocol.flush()
        protocol.write(_run_task(job) + b"\n")
        protocol.flush()


# --- the parent ------------------------------------------------------------------------------------------

def _child_command() -> list[str]:
    return [sys.executable, "-s", "-P", "-m", "sotacheck.reruns.benchmarks._evalplus_oracle"]


def _child_environment() -> dict[str, str]:
    keep = ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "SYSTEMROOT")
    return {**{k: os.environ[k] for k in keep if k in os.environ}, "PYTHONHASHSEED": "0"}


def _kill(child: subprocess.Popen[bytes]) -> None:
    """The child and anything the canonical solutions started (its own session, so its own group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)


def _run_chunk(jobs: list[dict[str, Any]], timeout_s: float) -> tuple[dict[str, Outputs], dict[str, str]]:
    """One child over ``jobs``: (outputs by key, failure message by key; every job gets one or the other)."""
    outputs: dict[str, Outputs] = {}
    failures: dict[str, str] = {}
    payload = _wire.dumps(_encode(jobs))
    with tempfile.TemporaryDirectory(prefix="sotacheck-evalplus-") as workdir, \
            tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(_child_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                 cwd=workdir, env=_child_environment(), start_new_session=True)
        assert child.stdin is not None and child.stdout is not None
        feeder = threading.Thread(target=_feed, args=(child.stdin, payload), daemon=True)
        feeder.start()
        current: str | None = None
        timer: threading.Timer | None = None
        timed_out: list[str] = []

        def expire(key: str) -> None:
            timed_out.append(key)
            _kill(child)

        try:
            for line in child.stdout:
                message = _decode(line)
                if timer is not None:
                    timer.cancel()
                if "start" in message:
                    current = str(message["start"])
                    timer = threading.Timer(timeout_s, expire, (current,))
                    timer.daemon = True
                    timer.start()
                    continue
                current = None
                key = str(message["key"])
                if "error" in message:
                    failures[key] = str(message["error"])
                else:
                    outputs[key] = {suite: list(message[suite]) for suite in SUITES}
        finally:
            if timer is not None:
                timer.cancel()
            _kill(child)
            child.wait()
            feeder.join(timeout=5)
        stderr.seek(0)
        last = stderr.read().decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        ended = f"the process running the canonical solutions ended (exit status {child.returncode}: {last[0][:300]})"
        if current is not None:
            failures[current] = f"the canonical solution ran past {timeout_s:g} s" if timed_out else ended
        for job in jobs:
            if job["key"] not in outputs and job["key"] not in failures:
                failures[job["key"]] = f"not computed: {ended}"
    return outputs, failures


def _feed(stream: Any, payload: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, OSError):
        stream.write(payload)
        stream.close()


def canonical_outputs(jobs: list[dict[str, Any]], workers: int | None = None,
                      timeout_s: float = TASK_TIMEOUT_S) -> tuple[dict[str, Outputs], dict[str, str]]:
    """Each job's expected outputs (``{key, code, entry_point, inputs: {base, plus}, not_none}``), from
    ``workers`` children (default: up to 4, one per CPU); returns (outputs, failures), both by key."""
    if not jobs:
        return {}, {}
    count = max(1, min(workers or min(os.cpu_count() or 1, 4), len(jobs)))
    chunks = [jobs[i::count] for i in range(count)]  # interleaved: slow tasks tend to sit together
    outputs: dict[str, Outputs] = {}
    failures: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=count) as pool:
        for done, failed in pool.map(lambda chunk: _run_chunk(chunk, timeout_s), chunks):
            outputs.update(done)
            failures.update(failed)
    return outputs, failures


def cache_dir() -> Path:
    return Path(os.environ.get("SOTACHECK_CACHE", Path.home() / ".cache" / "sotacheck")) / "evalplus"


def cache_key(content_sha256: str, flavour: str, rules_source: str) -> str:
    """The cache entry's name: the release file's content, what turns it into inputs, and what runs them."""
    digest = hashlib.sha256()
    for part in (content_sha256, flavour, rules_source, Path(__file__).read_text(), sys.version.split()[0]):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def read_cache(key: str) -> dict[str, Outputs] | None:
    path = cache_dir() / f"{key}.json"
    try:
        stored = _decode(path.read_bytes())
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None  # missing or damaged: computed again
    if not isinstance(stored, dict) or stored.get("key") != key or not isinstance(stored.get("outputs"), dict):
        return None
    outputs: dict[str, Outputs] = stored["outputs"]
    return outputs


def write_cache(key: str, outputs: dict[str, Outputs]) -> None:
    path = cache_dir() / f"{key}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        temporary.write_bytes(_wire.dumps(_encode({"key": key, "outputs": outputs})))
        os.replace(temporary, path)
    except (OSError, _wire.NotData, RecursionError):
        pass  # caching is an optimisation: a read-only home must not stop a load


if __name__ == "__main__":
    main()
