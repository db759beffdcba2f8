#!/usr/bin/env bash
# `make demo` (or other targets) as on a fresh machine, timed: clone this checkout's HEAD into a new temporary
# directory with nothing beside it (no ../shared), and run make there with an empty HOME (no ~/.cache: no pip
# cache, no llama.cpp build, no assembled model) and pip's cache off. Every line of output is prefixed with the
# seconds since the start and the 1-minute load average, so each step's time and the machine's load stand
# side by side.
# Usage: scripts/fresh_clone_demo.sh [MAKE ARGS...]   (default: demo)
#        e.g. scripts/fresh_clone_demo.sh setup-core test;  scripts/fresh_clone_demo.sh demo FULL=1
set -euo pipefail
SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
ROOT=$(mktemp -d /tmp/sotacheck-fresh-XXXXXX)
git clone --quiet "$SOURCE" "$ROOT/sotacheck"
mkdir "$ROOT/home"
cd "$ROOT/sotacheck"
(( $# )) || set -- demo
load() { cut -d' ' -f1 /proc/loadavg; }
echo "fresh clone of $(git rev-parse --short HEAD) in $(pwd); HOME=$ROOT/home (empty); $(nproc) CPUs; $(date -u +%FT%TZ)"
echo "    s  load  output of: make $*"
started=$(date +%s)
set +e
HOME=$ROOT/home PIP_NO_CACHE_DIR=1 make "$@" 2>&1 | while IFS= read -r line; do
  printf '%5d %5s  %s\n' $(( $(date +%s) - started )) "$(load)" "$line"
done
status=${PIPESTATUS[0]}
set -e
echo "make $*: $(( $(date +%s) - started )) s wall, exit $status, load $(load) at the end; left in $ROOT"
exit "$status"
