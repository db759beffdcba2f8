#!/usr/bin/env bash
# The main job: judge the canonical solutions; rerun Direct, CoT, PyCapsule, CodeSim, MapCoder and the
# evidence gate with the embedded model on a HumanEval slice with repeats (resumable: run it again after an
# interruption); analyze; import MapCoder's released logs; audit the published claims; render the report.
# Usage: scripts/demo.sh LIMIT REPEATS   (make demo: 1 problem x 2 repeats, under 10 minutes on 2 cores;
#        make demo FULL=1: all 164 problems)
set -euo pipefail
cd "$(dirname "$0")/.."
SOTACHECK=.venv/bin/sotacheck
LIMIT=${1:-1}
REPEATS=${2:-2}
# MapCoder's released HumanEval logs, bundled with sotacheck (data/SOURCES.md says where they come from).
MAPCODER_LOGS=$(.venv/bin/python -c 'import importlib.resources as r; print(r.files("sotacheck.data") / "published/mapcoder/ChatGPT/HumanEval")')
RUN=runs/demo-${LIMIT}x${REPEATS}
started=$(date +%s)

$SOTACHECK judge --dataset humaneval --canonical
if [[ -f $RUN/store.sqlite ]]; then
  $SOTACHECK resume "$RUN"
else
  # Temperature 0.2 so that repeats are real samples; each (problem, repeat, call) has its own seed. To keep
  # the live part to minutes on 2 cores, replies are capped at 768 tokens (the methods' own default is no
  # cap: the report's fidelity section shows which replies the cap cut) and the two multi-agent methods run
  # at their smallest budgets: CodeSim one plan and one debugging round (p=1, d=1: at most 5 calls), MapCoder
  # one exemplar asked for and one improvement (k=1, t=1; as the released code it plans every exemplar the
  # model gives back, 1 + 3m calls for m of them). Their paper budgets (p=d=5, k=3 t=5) can take 40 calls
  # on one problem: `scripts/demo.sh` is only a demonstration, not a rerun to cite.
  $SOTACHECK rerun --dataset humaneval --pipelines direct,cot,pycapsule,codesim,mapcoder,gate --model local \
    --param codesim.p=1 --param codesim.d=1 --param mapcoder.k=1 --param mapcoder.t=1 \
    --limit "$LIMIT" --repeats "$REPEATS" --temperature 0.2 --max-tokens 768 --seed 7 --concurrency 1 --out "$RUN"
fi
$SOTACHECK analyze "$RUN" --baseline direct
$SOTACHECK import mapcoder "$MAPCODER_LOGS" --out runs/mapcoder-he --force
$SOTACHECK analyze runs/mapcoder-he --baseline MapCoder-5-5
RECORDED=()
for dir in data/runs/*/; do RECORDED+=("${dir%/}"); done
RUNS=()
for dir in runs/mapcoder-he "${RECORDED[@]}"; do RUNS+=(--runs "$dir"); done
$SOTACHECK claims "${RUNS[@]}" > runs/claims.txt
head -1 runs/claims.txt
echo "(every claim with its verdict and reason: runs/claims.txt)"
CLAIMS=()
for file in data/claims/*.yaml; do CLAIMS+=(--claims "$file"); done
$SOTACHECK report "$RUN" "${RECORDED[@]}" runs/mapcoder-he "${CLAIMS[@]}" --baseline direct -o runs/report.html
echo
echo "report: $(pwd)/runs/report.html (self-contained; open it in any browser)"
echo "run directories: $RUN (this rerun), ${RECORDED[*]} (recorded), runs/mapcoder-he (imported)"
echo "demo wall time: $(( $(date +%s) - started )) s"
