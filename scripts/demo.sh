#!/usr/bin/env bash
# The main job so far: judge the canonical solutions, rerun Direct and CoT on a HumanEval slice with the
# embedded model (resumable), analyze it, import MapCoder's released logs, audit the published claims and
# render the HTML report.
# Usage: scripts/demo.sh [LIMIT]   (default 10 problems: about 3-4 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
SOTACHECK=.venv/bin/sotacheck
LIMIT=${1:-10}
DATA=${SOTACHECK_DATA:-$(cd .. && pwd)/shared/data}
RUN=runs/demo-$LIMIT

$SOTACHECK judge --dataset humaneval --canonical
if [[ -f $RUN/store.sqlite ]]; then
  $SOTACHECK resume "$RUN"
else
  $SOTACHECK rerun --dataset humaneval --pipelines direct,cot --model local --limit "$LIMIT" --seed 7 \
    --concurrency 1 --out "$RUN"
fi
$SOTACHECK analyze "$RUN" --baseline direct
$SOTACHECK import mapcoder "$DATA/published-runs/mapcoder/ChatGPT/HumanEval" --out runs/mapcoder-he --force
$SOTACHECK analyze runs/mapcoder-he --baseline MapCoder-5-5
$SOTACHECK claims --runs runs/mapcoder-he --runs data/runs/reference-qwen05b > runs/claims.txt
head -1 runs/claims.txt
echo "(every claim with its verdict and reason: runs/claims.txt)"
CLAIMS=()
for file in data/claims/*.yaml; do CLAIMS+=(--claims "$file"); done
$SOTACHECK report "$RUN" data/runs/reference-qwen05b runs/mapcoder-he "${CLAIMS[@]}" --baseline direct \
  -o runs/report.html
echo
echo "report: $(pwd)/runs/report.html (self-contained; open it in any browser)"
echo "run directories: $RUN (this rerun), data/runs/reference-qwen05b (recorded), runs/mapcoder-he (imported)"
