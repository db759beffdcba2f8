#!/usr/bin/env bash
# The baseline of bench/bench_bigcodebench.py: BigCodeBench's own evaluator, `bigcodebench` 0.2.5 from PyPI, in a
# virtual environment of its own with the same evaluation libraries as sotacheck's BigCodeBench environment
# (scripts/bigcodebench/requirements.txt), so that the two judges differ only in the judge.
#
#   scripts/bigcodebench/make_baseline.sh      build it; where it is there already, only add what is missing
#
# `bigcodebench` is installed without its dependencies (they pull vllm and a GPU stack); what its `evaluate`
# imports is added by name: appdirs, tempdir, wget, termcolor, fire, gradio_client, e2b; transformers, pqdm and
# tree-sitter with its Python grammar (imported by its generation and sanitising side, which `evaluate` imports; no
# torch needed); datasets < 2.20 and pyarrow < 15 (the versions its data loading works with); typing-extensions
# (newer than tensorflow's pin: gradio_client needs it). A fresh build
# happens in $DEST.build and is moved to $DEST when complete, so an interrupted build never looks finished; the
# console scripts' first lines are rewritten to the final path after the move. Every pip call goes through the
# environment's interpreter (`python -m pip`), never a script whose first line may name another place.
# Environment: DEST (default ~/.cache/sotacheck/bigcodebench-0.2.5-baseline), PYTHON (default python3). About
# 2.5 GB, wheels only; some minutes.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DEST=${DEST:-$HOME/.cache/sotacheck/bigcodebench-0.2.5-baseline}
PYTHON=${PYTHON:-python3}
REQUIREMENTS=$REPO/scripts/bigcodebench/requirements.txt
EVALUATOR=(bigcodebench==0.2.5)
EVALUATOR_IMPORTS=(appdirs tempdir wget termcolor fire gradio_client e2b transformers 'pqdm>=0.2.0' 'tree_sitter>=0.22.0'
                   'tree-sitter-python>=0.21.0' 'datasets<2.20' 'pyarrow<15' typing-extensions)

ready() { "$1/bin/python" -c 'import bigcodebench.evaluate' 2>/dev/null; }
check() { "$1/bin/python" -c 'import bigcodebench.evaluate'; }  # the same, saying why not
install() {  # into the environment at $1: the evaluation libraries, the evaluator, what it imports
    local pip=("$1/bin/python" -m pip install -q --prefer-binary)
    "${pip[@]}" -r "$REQUIREMENTS"
    "${pip[@]}" --no-deps "${EVALUATOR[@]}"
    "${pip[@]}" "${EVALUATOR_IMPORTS[@]}"
    check "$1"
}

mkdir -p "$(dirname "$DEST")"
exec 9>"$DEST.lock"
flock 9  # a second run waits for the first instead of building beside it
if [ -x "$DEST/bin/python" ]; then
    if ready "$DEST"; then echo "the baseline is there: $DEST"; exit 0; fi
    install "$DEST"  # an environment that lacks something: completed in place, never rebuilt under a user
    echo "the baseline is completed: $DEST"
    exit 0
fi

BUILD=$DEST.build
rm -rf "$BUILD"
"$PYTHON" -m venv --prompt "$(basename "$DEST")" "$BUILD"
"$BUILD/bin/python" -m pip install -q --upgrade pip
install "$BUILD"
mv "$BUILD" "$DEST"
for script in "$DEST"/bin/*; do
    if [ -f "$script" ] && [ ! -L "$script" ] && [ "$(head -c 2 "$script")" = "#!" ]; then
        sed -i "1s|^#!$BUILD/|#!$DEST/|" "$script"
    fi
done
sed -i "s|$BUILD|$DEST|g" "$DEST"/bin/activate*
echo "the baseline is built: $DEST"
