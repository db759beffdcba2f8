#!/usr/bin/env bash
# `make demo` from a fresh clone, timed end to end: clone this checkout's HEAD into a new temporary
# directory (no .venv, no runs/, no unpacked stores), run `make demo` there, and print the wall time.
# Usage: scripts/fresh_clone_demo.sh [MAKE ARGS...]   e.g. scripts/fresh_clone_demo.sh FULL=1
# The benchmark files and MapCoder's logs are the copies bundled with sotacheck (data/). pip's
# cache on this machine is used as on any machine that installed once (a cold cache adds the
# llama-cpp-python build, about 7 minutes on 2 cores).
set -euo pipefail
SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
CLONE=$(mktemp -d /tmp/sotacheck-fresh-XXXXXX)
git clone --quiet "$SOURCE" "$CLONE/sotacheck"
cd "$CLONE/sotacheck"
echo "fresh clone of $(git rev-parse --short HEAD) in $(pwd)"
started=$(date +%s)
make demo "$@"
elapsed=$(( $(date +%s) - started ))
echo "fresh-clone make demo $*: ${elapsed} s wall ($(nproc) CPUs), clone left in $CLONE for inspection"
