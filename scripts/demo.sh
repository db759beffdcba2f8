#!/usr/bin/env bash
# The main job so far: judge the canonical solutions, rerun Direct and CoT on a HumanEval slice with the
# embedded model (resumable), analyze it, import MapCoder's released logs and audit the published claims.
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
$SOTACHECK claims --runs runs/mapcoder-he | head -40
echo "run directories: $RUN (rerun), runs/mapcoder-he (imported); full claims: $SOTACHECK claims --runs runs/mapcoder-he"
