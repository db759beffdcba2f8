# sotacheck: set-up, tests, checks, benchmarks and the main job.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# llama-cpp-python compiles from source; these options cut the build from ~19 to ~7 minutes on 2 cores.
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF

.PHONY: setup setup-core setup-local test check bench demo clean

setup: setup-core setup-local

setup-core: $(VENV)/.core-installed

$(VENV)/.core-installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev]'
	touch $@

setup-local: setup-core
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install -q -e '.[local]'

test: setup-core
	$(PY) -m pytest -q

check: setup-core
	$(VENV)/bin/ruff check reruns audit reports tests bench
	$(VENV)/bin/mypy

bench: setup-core
	$(PY) bench/bench_judge.py
	$(PY) bench/bench_analysis.py
	$(PY) bench/bench_coverage.py

demo: setup-core
	$(VENV)/bin/sotacheck judge --dataset humaneval --canonical

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
