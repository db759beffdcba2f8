# sotacheck: set-up, tests, checks, benchmarks and the main job.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# llama-cpp-python compiles from source; the first four options cut the build from ~19 to ~7 minutes on
# 2 cores. GGML_NATIVE=OFF with AVX2: the default -march=native build dies with a general protection fault
# in libggml-cpu on this machine's (virtualised) AVX-512 CPUs at the first token; the AVX2 build works.
# The wheel is kept in a cache keyed by version and options (pip's own cache ignores CMAKE_ARGS).
LLAMA_VERSION ?= 0.3.36
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_WHEELS := $(HOME)/.cache/sotacheck/wheels/llama-$(LLAMA_VERSION)-$(shell echo '$(LLAMA_CMAKE_ARGS)' | sha256sum | cut -c1-12)

.PHONY: setup setup-core setup-local setup-browser test test-all check docs bench demo clean

setup: setup-core setup-local setup-browser

# Debian's Chromium and ChromeDriver for the report's real-browser test (needs root, as on CI).
setup-browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

setup-core: $(VENV)/.core-installed

$(VENV)/.core-installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev,ray,tools]'
	touch $@

setup-local: setup-core
	@if ! ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1; then \
		echo "building llama-cpp-python $(LLAMA_VERSION) from source (about 7 minutes on 2 cores)"; \
		mkdir -p $(LLAMA_WHEELS) && CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) wheel -q --no-deps --no-cache-dir \
			-w $(LLAMA_WHEELS) 'llama-cpp-python==$(LLAMA_VERSION)'; fi
	$(PIP) install -q $(LLAMA_WHEELS)/llama_cpp_python-*.whl
	$(PIP) install -q -e '.[local]'

# `make test`: everything but the embedded model, the Ray cluster, the browser and the slow re-judging
# (pytest markers in pyproject.toml); from any clone, on the data bundled with the package and tests/fixtures.
# `make test-all`: everything; beside the project's shared folder it also reads the full data copy and the
# authors' code checkouts (SOTACHECK_DATA, SOTACHECK_REFERENCE_IMPLS), else those tests skip and say why.
FAST := not slow and not model and not ray and not browser
SHARED ?= $(abspath ../shared)
SHARED_ENV := $(if $(wildcard $(SHARED)/data/benchmarks),SOTACHECK_DATA=$(SHARED)/data) \
	$(if $(wildcard $(SHARED)/reference-impls/mapcoder),SOTACHECK_REFERENCE_IMPLS=$(SHARED)/reference-impls)

test: setup-core
	$(PY) -m pytest -q -m '$(FAST)'

test-all: setup
	$(SHARED_ENV) $(PY) -m pytest -q

# ruff, mypy (on the package as installed: scripts/typecheck_tree.py), the layering contract and the docs
# check (relative links, tables, the commands shown in the README: scripts/check_docs.py).
check: setup-core
	$(VENV)/bin/ruff check sotacheck reruns audit reports data tests bench scripts
	$(PY) scripts/typecheck_tree.py build/typecheck >/dev/null
	$(VENV)/bin/mypy
	$(PY) -m pytest -q -p no:cacheprovider tests/test_layering.py
	$(PY) scripts/check_docs.py

# docs/cli.md from the commands' own help (tests/cli/test_cli_reference.py fails when it is stale).
docs: setup-core
	$(PY) -m sotacheck.cli.reference docs/cli.md

bench: setup-core
	$(PY) bench/bench_judge.py
	$(PY) bench/bench_analysis.py
	$(PY) bench/bench_coverage.py
	$(PY) bench/bench_ray.py

DEMO_LIMIT ?= 10
DEMO_REPEATS ?= 1
ifdef FULL
DEMO_LIMIT := 164
endif
demo: setup
	scripts/demo.sh $(DEMO_LIMIT) $(DEMO_REPEATS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
