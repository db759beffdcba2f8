"""Copy a live run's store into a file that git keeps, so a recording that outlasts a session survives it.

A session's machine keeps neither its processes nor files outside the checkout; a long model run (hours of
the embedded model) is therefore recorded in ``runs/NAME`` (ignored) and checkpointed into a tracked file,
``recordings/NAME.partial.sqlite.gz`` (a file, never a folder: ``recordings/NAME/`` is a finished recorded run,
recordings/README.md), with SQLite's online backup (consistent while the run writes). The next session
continues it with ``scripts/checkpoint_run.py --restore recordings/NAME.partial.sqlite.gz runs/NAME`` and
``sotacheck resume runs/NAME``.

    python scripts/checkpoint_run.py runs/originals-qwen05b recordings/originals-qwen05b.partial.sqlite.gz
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from sotacheck.reruns.store.run_store import pack, unpack

CHECKPOINT_SUFFIX = ".partial.sqlite.gz"


def _checkpoint_file(path: Path) -> Path:
    if not path.name.endswith(CHECKPOINT_SUFFIX):
        raise SystemExit(f"{path}: a checkpoint is a file named NAME{CHECKPOINT_SUFFIX} (recordings/README.md)")
    return path


def checkpoint(run_dir: Path, dest: Path) -> tuple[int, int]:
    """Write the checkpoint file ``dest`` from ``run_dir/store.sqlite``; return (cells, received calls).

    The live store is copied with SQLite's online backup first: :func:`pack` itself checkpoints and vacuums
    the store it is given, which must not be the one a running run writes."""
    live = run_dir / "store.sqlite"
    if not live.is_file():
        raise SystemExit(f"{live}: no live run store to checkpoint")
    dest = _checkpoint_file(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        source = sqlite3.connect(f"file:{live.resolve()}?mode=ro", uri=True)
        copy = sqlite3.connect(Path(tmp) / "store.sqlite")
        source.backup(copy)
        source.close()
        cells = copy.execute("SELECT count(*) FROM cells").fetchone()[0]
        received = copy.execute("SELECT count(*) FROM calls WHERE state = 'received'").fetchone()[0]
        copy.close()
        os.replace(pack(Path(tmp)), dest)
    return cells, received


def restore(dest: Path, run_dir: Path) -> None:
    """Unpack a checkpoint into a run directory that has no store yet."""
    if (run_dir / "store.sqlite").exists():
        raise SystemExit(f"{run_dir}/store.sqlite exists; not overwriting a live store")
    run_dir.mkdir(parents=True, exist_ok=True)
    unpack(_checkpoint_file(dest), run_dir / "store.sqlite")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restore", action="store_true", help="unpack FIRST (a checkpoint) into SECOND")
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args(argv)
    if args.restore:
        restore(args.first, args.second)
        print(f"restored {args.first} into {args.second}")
    else:
        cells, received = checkpoint(args.first, args.second)
        print(f"checkpointed {args.first}: {cells} cells, {received} calls received")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
