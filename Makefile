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

.PHONY: FORCE setup setup-core setup-local setup-native setup-browser setup-bigcodebench test test-all check docs bench demo clean

setup: setup-core setup-local setup-browser

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
	touch $@

$(CORE_FILES): FORCE
	@mkdir -p $(VENV)
	@printf '%s\n' $(PACKAGE_FILES) > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

FORCE:

# llama.cpp's own llama-server (the embedded model's `--engine llama-server`, reruns/model/native_server.py), from
# the very source llama-cpp-python $(LLAMA_VERSION) vendors and with the wheel's compiler options, so both engines
# run the same arithmetic; about 10 minutes on 2 cores, kept in a cache keyed by version, options and patches.
# scripts/native/*.patch are applied to that source first: aligned-prefix-reuse.patch makes the server reuse
# only a cached prefix that ends on a micro-batch boundary when SOTACHECK_ALIGNED_REUSE is set (see
# docs/embedded-model.md); without it the binary behaves as llama.cpp's own.
NATIVE_CMAKE_ARGS := $(LLAMA_CMAKE_ARGS) -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
	-DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_APP=OFF -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release
NATIVE_PATCHES := $(sort $(wildcard scripts/native/*.patch))
NATIVE_KEY := $(shell (echo '$(NATIVE_CMAKE_ARGS)'; cat $(NATIVE_PATCHES)) | sha256sum | cut -c1-12)
NATIVE_SERVER := $(HOME)/.cache/sotacheck/llama-server-$(LLAMA_VERSION)-$(NATIVE_KEY)/llama-server

setup-native: $(NATIVE_SERVER)

$(NATIVE_SERVER): | setup-core
	@echo "building llama.cpp's llama-server from llama-cpp-python $(LLAMA_VERSION)'s source (about 10 minutes on 2 cores)"
	@command -v cmake >/dev/null || $(PIP) install -q cmake
	rm -rf $(@D).build && mkdir -p $(@D).build
	$(PIP) download -q --no-deps --no-binary :all: -d $(@D).build 'llama-cpp-python==$(LLAMA_VERSION)'
	tar xzf $(@D).build/llama_cpp_python-$(LLAMA_VERSION).tar.gz -C $(@D).build
	for p in $(abspath $(NATIVE_PATCHES)); do \
		patch -s -p1 -d $(@D).build/llama_cpp_python-$(LLAMA_VERSION)/vendor/llama.cpp <$$p || exit 1; done
	PATH="$(abspath $(VENV))/bin:$$PATH" cmake -S $(@D).build/llama_cpp_python-$(LLAMA_VERSION)/vendor/llama.cpp \
		-B $(@D).build/out $(NATIVE_CMAKE_ARGS) >$(@D).build/cmake.log
	PATH="$(abspath $(VENV))/bin:$$PATH" cmake --build $(@D).build/out -j $$(nproc) --target llama-server >$(@D).build/build.log
	mkdir -p $(@D) && cp $(@D).build/out/bin/llama-server $@.new && mv $@.new $@ && rm -rf $(@D).build

setup-local: setup-core setup-native
	@if ! ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1; then \
		echo "building llama-cpp-python $(LLAMA_VERSION) from source (about 7 minutes on 2 cores)"; \
		mkdir -p $(LLAMA_WHEELS) && CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) wheel -q --no-deps --no-cache-dir \
			-w $(LLAMA_WHEELS) 'llama-cpp-python==$(LLAMA_VERSION)'; fi
	$(PIP) install -q $(LLAMA_WHEELS)/llama_cpp_python-*.whl
	$(PIP) install -q $(EDITABLE) '.[local]'

# BigCodeBench's evaluation environment (docs/bigcodebench.md): a virtual environment of its own, never the product's,
# from PyPI with the library versions of scripts/bigcodebench/requirements.txt (BigCodeBench's pins moved to releases
# that have wheels for this Python), kept in the cache keyed by that file and the interpreter's version. The judge
# finds it there (or at $$SOTACHECK_BIGCODEBENCH_PYTHON). About 2.4 GB; some minutes on 2 cores (wheels only).
BIGCODEBENCH_PYTHON ?= python3
BIGCODEBENCH_REQUIREMENTS := scripts/bigcodebench/requirements.txt
BIGCODEBENCH_KEY := $(shell (cat $(BIGCODEBENCH_REQUIREMENTS); $(BIGCODEBENCH_PYTHON) -c 'import sys; print(sys.version)') | sha256sum | cut -c1-12)
BIGCODEBENCH_ENV := $(HOME)/.cache/sotacheck/bigcodebench-env-$(BIGCODEBENCH_KEY)

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

DEMO_LIMIT ?= 10
DEMO_REPEATS ?= 1
ifdef FULL
DEMO_LIMIT := 164
endif
demo: setup
	scripts/demo.sh $(DEMO_LIMIT) $(DEMO_REPEATS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
