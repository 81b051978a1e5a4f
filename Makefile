# Each target sets up what it needs: a virtual environment with the package installed from pyproject.toml.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
WHEELHOUSE := $(VENV)/wheelhouse

.PHONY: bench test lint typecheck perf fuzz clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## make bench: replay the catalogue through every predicate, write reports/, compare with expected/
bench: $(STAMP)
	$(BIN)/stopbench run

## make test: lint, type-check, then the test suite (hypothesis in its derandomized CI profile) spread over
## TEST_WORKERS processes (pytest-xdist, a test file to a process, so a module's set-up is made once; TEST_WORKERS=0
## runs it in one); the docs extra is installed too, so the site is built strict by tests/docs
TEST_WORKERS ?= auto --maxprocesses=4
# more pytest arguments (make test-cost adds its plugin); not PYTEST_PLUGINS, which pytest reads from the environment
PYTEST_EXTRA ?=
PYTEST := HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_EXTRA)
# the package's bytecode, written before the tests: where PYTHONDONTWRITEBYTECODE is set (CI), every process a
# test starts would otherwise compile each module of bench it imports again
BYTECODE := $(BIN)/python -m compileall -q bench >/dev/null
test: $(STAMP) $(VENV)/.installed-docs $(WHEELHOUSE)/.filled lint typecheck
	$(BYTECODE)
	$(PYTEST)

## make test-fast: the quick loop while working, pytest without the tests marked slow (tests/conftest.py's
## SLOW says which and why); make test, and CI, run everything
.PHONY: test-fast
test-fast: $(STAMP) $(VENV)/.installed-docs
	$(BYTECODE)
	$(PYTEST) -m "not slow"

## make test-cost: make test timed on a clean clone of HEAD, each test's CPU by folder, into reports/test-cost.md
## and the README's sentence of it (python -m devtools.perf_tests; not a pass/fail test; about as long as make test)
.PHONY: test-cost
test-cost: $(STAMP)
	$(BIN)/python -m devtools.perf_tests --clean-clone

lint: $(STAMP)
	$(BIN)/ruff check bench tests predicates devtools ci setup.py

typecheck: $(STAMP)
	$(BIN)/mypy

## make perf: the replay benchmark (prints figures; not a pass/fail test)
perf: $(STAMP)
	$(BIN)/python -m devtools.perf

## make fuzz: the long local hypothesis profile
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest -q tests/properties

## make mutate: the mutation check (every port's mutants against the golden files); prints caught/made and
## survivors, fails on a survivor devtools/mutate.py's NOTES does not explain
.PHONY: mutate
mutate: $(STAMP)
	$(BIN)/python -m devtools.mutate

## make docs: the docs site from docs/ (mkdocs.yml), built with --strict into site/: a broken link, a page
## missing from the nav or a marker the build hook cannot fill fails it; the docs extra is installed once
DOCS_STAMP := $(VENV)/.installed-docs
.PHONY: docs
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $@

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

$(VENV)/.installed-release: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[release]'
	touch $@

## make dist: the sdist and the wheel (python -m build, isolated: setuptools from the index) into dist/,
## then twine check on both
.PHONY: dist smoke
dist: $(VENV)/.installed-release
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

## make wheelhouse: a wheel of every dependency the wheel declares, with the loops extra (ci/wheel_smoke.py
## --fill-wheelhouse, the network), so that the tests that install the built wheel into a fresh environment
## (tests/install, tests/docs) do it with no index, as a user's pip install would, and offline
.PHONY: wheelhouse
wheelhouse: $(WHEELHOUSE)/.filled
$(WHEELHOUSE)/.filled: $(STAMP) pyproject.toml
	$(BIN)/python ci/wheel_smoke.py --fill-wheelhouse $(WHEELHOUSE)
	touch $@

## make smoke: the wheel smoke test (ci/wheel_smoke.py): built, installed with its declared dependencies only
## (from the wheelhouse, no index) into a fresh environment outside the repository, used from an empty folder
smoke: $(STAMP) $(WHEELHOUSE)/.filled
	$(BIN)/python ci/wheel_smoke.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis site dist build

## make conformance: run the original loops against the replay server and compare each observed cell
## with its port's; writes reports/conformance.md. Each loop lives in its own venv or npm prefix under
## CONFORM_DIR (installed here, never by the plain install). Fails on a difference no port explains.
## It drives every driver of bench/conform/runner.py's DRIVERS but those whose record is reused
## (`stopbench conform --list-driven`), each installed from its pin in bench/conform/pins.py (PyPI or npm),
## (loop, sequence) runs CONFORM_JOBS at a time, each on its own replay server, longest first (the last run's
## wall times, CONFORM_DIR/timings.json), on the virtual clock (conformance/clock/: a retry
## back-off sleep is cut short, the loop's clock moves on by all of it; native binaries sleep for real).
CONFORM_DIR ?= /tmp/stopbench-conform
CONFORM_JOBS ?= 6
CONFORM_TIMEOUT ?= 400
CONFORM_FLAGS ?=
DRIVEN = $$($(BIN)/stopbench conform --list-driven)
# the pins, one place (standard library only, so it runs before the bench's venv exists): `$(PINS) LOOP` prints
# a loop's install words, `$(PINS) --loops pypi` the loops installed with pip (one venv each: CONFORM_DIR/<loop>),
# `--loops npm` those installed with npm (one prefix each)
PINS = $(PYTHON) bench/conform/pins.py
PY_LOOPS = $(shell $(PINS) --loops pypi)
NPM_LOOPS = $(shell $(PINS) --loops npm)
.PHONY: conformance conformance-installs conformance-driven-installs conformance-python conformance-venvs
conformance: conformance-driven-installs
	$(BIN)/stopbench conform $(DRIVEN) --conform-dir $(CONFORM_DIR) --jobs $(CONFORM_JOBS) \
	  --timeout $(CONFORM_TIMEOUT) --virtual-clock $(CONFORM_FLAGS)

## make conformance-driven-installs: every driven loop installed (network-bound: .ci/run starts it while
## the tests run)
conformance-driven-installs: $(STAMP)
	$(MAKE) --no-print-directory conformance-installs CONFORM_LOOPS="$(DRIVEN)"

# each loop of CONFORM_LOOPS from its pin; a driver without one stops here (exit 2), before anything runs
.SECONDEXPANSION:
conformance-installs: $$(foreach l,$$(CONFORM_LOOPS),$$(if $$(filter $$(l),$$(PY_LOOPS)),\
	$$(CONFORM_DIR)/$$(l)/.pinned,$$(if $$(filter $$(l),$$(NPM_LOOPS)),$$(CONFORM_DIR)/$$(l)/.pinned-npm,\
	conformance-no-pin-$$(l))))

conformance-no-pin-%:
	@echo "make: the driver $* (bench/conform/runner.py DRIVERS) has no pin in bench/conform/pins.py" >&2; exit 2

## make conformance-ci: what .ci/run drives: make conformance, CI_JOBS runs at a time, driving only the
## (loop, sequence) pairs whose record row has no key, a key other than the pair's key now, or fails,
## plus a rotating sample of CI_SAMPLE pairs, and reusing every other row (stopbench conform
## --reuse-unchanged; bench/conform/keys.py, bench/conform/reuse.py). On two cores with every loop on the
## virtual clock the runs are CPU-bound (Node and native start-up) but for the native loops' real
## back-off, which the longest-first order starts early.
CI_JOBS ?= 3
CI_SAMPLE ?= 80
.PHONY: conformance-ci
conformance-ci:
	$(MAKE) --no-print-directory conformance CONFORM_JOBS=$(CI_JOBS) \
	  CONFORM_FLAGS="--reuse-unchanged --sample $(CI_SAMPLE)"

## make conformance-python: the Python loops (those installed from PyPI) only
conformance-python: $(STAMP) conformance-venvs
	$(BIN)/stopbench conform $(PY_LOOPS) --conform-dir $(CONFORM_DIR) --timeout 300 --virtual-clock

conformance-venvs: $(PY_LOOPS:%=$(CONFORM_DIR)/%/.pinned)

$(CONFORM_DIR)/%/.pinned: bench/conform/pins.py bench/conform/ports.py
	test -x $(CONFORM_DIR)/$*/bin/python || $(PYTHON) -m venv $(CONFORM_DIR)/$*
	$(CONFORM_DIR)/$*/bin/python -m pip install --quiet --disable-pip-version-check $(shell $(PINS) $*)
	touch $@

## the Node/CLI loops: each installed with npm under its own prefix CONFORM_DIR/<loop>, driven with node
NODE_LOOPS := pi opencode codex
.PHONY: conformance-node $(NODE_LOOPS:%=conformance-%)
conformance-node: $(STAMP) $(NODE_LOOPS:%=$(CONFORM_DIR)/%/.pinned-npm)
	$(BIN)/stopbench conform $(NODE_LOOPS) --conform-dir $(CONFORM_DIR) --timeout 180 --virtual-clock

$(NODE_LOOPS:%=conformance-%): conformance-%: $(STAMP) $(CONFORM_DIR)/%/.pinned-npm
	$(BIN)/stopbench conform $* --conform-dir $(CONFORM_DIR) --timeout 180 --virtual-clock

## Gemini CLI, on the replay server's Gemini endpoint: its own target; a failing sequence spends about 4 minutes
## in its retry back-off on the real clock (10 attempts, 5 s doubling to 30 s; predicates/gemini_cli.py), about
## 30 s on the virtual one
.PHONY: conformance-gemini_cli
conformance-gemini_cli: $(STAMP) $(CONFORM_DIR)/gemini_cli/.pinned-npm
	$(BIN)/stopbench conform gemini_cli --conform-dir $(CONFORM_DIR) --timeout 400 --virtual-clock

$(CONFORM_DIR)/%/.pinned-npm: bench/conform/pins.py bench/conform/ports.py
	npm install --prefix $(CONFORM_DIR)/$* --no-audit --no-fund $(shell $(PINS) $*)
	touch $@

## The framework scorecard (docs/frameworks.md): each framework of examples/frameworks/<name>/ installed in
## FRAMEWORK_DIR/<name> (a venv from framework.json's pip pins, or an npm prefix from its package-lock.json),
## stamped so it is done once. `make scorecard-<name>` (or `make scorecard FRAMEWORK=<name>`) runs
## `stopbench check` on it (SCORECARD_JOBS at a time) and writes reports/frameworks/<name>.json, then rebuilds
## reports/frameworks/scorecard.md from the records; `make scorecard` alone only rebuilds; `make scorecard-all`
## records every framework, one after the other. RELEASE=<version> installs and records that release of the
## framework's main packages beside the pinned one (reports/frameworks/<name>@<version>.json). `make
## scorecard-bump` (network: it asks PyPI and npm) records each framework's newest release beside its pin.
FRAMEWORK_DIR ?= /tmp/stopbench-frameworks
SCORECARD_JOBS ?= 2
SCORECARD_TIMEOUT ?= 120
RELEASE ?=
.PHONY: framework-install scorecard scorecard-all scorecard-bump
framework-install: $(STAMP)
	@test -n "$(FRAMEWORK)" || { echo "make framework-install FRAMEWORK=<name> (a folder of examples/frameworks)" >&2; exit 2; }
	$(BIN)/stopbench scorecard install $(FRAMEWORK) $(if $(RELEASE),--release $(RELEASE)) --framework-dir $(FRAMEWORK_DIR)

scorecard: $(STAMP)
	@if [ -n "$(FRAMEWORK)" ]; then \
	  $(MAKE) --no-print-directory framework-install FRAMEWORK=$(FRAMEWORK) RELEASE=$(RELEASE) && \
	  $(BIN)/stopbench scorecard record $(FRAMEWORK) $(if $(RELEASE),--release $(RELEASE)) \
	    --framework-dir $(FRAMEWORK_DIR) -j $(SCORECARD_JOBS) --timeout $(SCORECARD_TIMEOUT); \
	fi
	$(BIN)/stopbench scorecard build

scorecard-bump: $(STAMP)
	$(BIN)/stopbench scorecard bump --framework-dir $(FRAMEWORK_DIR) -j $(SCORECARD_JOBS) --timeout $(SCORECARD_TIMEOUT)
	$(BIN)/stopbench scorecard build

scorecard-all: $(STAMP)
	for f in $$($(BIN)/stopbench scorecard list); do \
	  $(MAKE) --no-print-directory scorecard FRAMEWORK=$$f || exit 1; done

scorecard-%: $(STAMP)
	$(MAKE) --no-print-directory scorecard FRAMEWORK=$*

## make scorecard-ci: what .ci/run re-runs live: SCORECARD_CI (two frameworks cheap to install and run) on a fixed
## sample each (SAMPLE_<name>: met and broken cells of every wire it speaks) and SCORECARD_ROTATING more of its
## recorded sequences, a slice that turns with each commit (every one re-run in turn), every cell compared whole with the
## committed record (`stopbench scorecard verify`); fails on a cell that moved. `make scorecard-ci-installs` (network
## bound: .ci/run starts it while the tests run) installs them first.
SCORECARD_CI := autogen anthropic_tool_runner
SAMPLE_autogen := chat-tool-rounds chat-length-text-cut chat-dropped-calls-x3 chat-error-500-repeat \
  anthropic-tool-use-rounds anthropic-max-tokens-partial-tool-use
SAMPLE_anthropic_tool_runner := anthropic-tool-use-rounds rec-anthropic-four-parallel-tool-use \
  anthropic-dropped-tool-use anthropic-max-tokens-partial-tool-use anthropic-pause-turn anthropic-refusal
SCORECARD_ROTATING ?= 4
.PHONY: scorecard-ci scorecard-ci-installs
scorecard-ci-installs: $(STAMP)
	for f in $(SCORECARD_CI); do $(BIN)/stopbench scorecard install $$f --framework-dir $(FRAMEWORK_DIR) || exit 1; done

scorecard-ci: scorecard-ci-installs
	status=0; for f in $(SCORECARD_CI); do \
	  $(MAKE) --no-print-directory scorecard-verify-$$f || status=1; done; exit $$status

scorecard-verify-%: $(STAMP)
	$(BIN)/stopbench scorecard verify $* $(SAMPLE_$*:%=-s %) --rotating $(SCORECARD_ROTATING) \
	  --framework-dir $(FRAMEWORK_DIR) -j $(SCORECARD_JOBS) --timeout $(SCORECARD_TIMEOUT)

## make strands-bedrock-ci: strands-agents' default model (BedrockModel: ConverseStream through boto3) against the
## replay server on every Bedrock sequence (tests/wires/test_strands_bedrock.py), with the scorecard's strands venv
## installed first (network bound: .ci/run starts `make strands-install` beside the tests); a missing strands
## fails here instead of skipping.
.PHONY: strands-install strands-bedrock-ci
strands-install: $(STAMP)
	$(BIN)/stopbench scorecard install strands_agents --framework-dir $(FRAMEWORK_DIR)

strands-bedrock-ci: strands-install
	STOPBENCH_REQUIRE_STRANDS=1 FRAMEWORK_DIR=$(FRAMEWORK_DIR) $(BIN)/python -m pytest -q -p no:cacheprovider \
	  tests/wires/test_strands_bedrock.py
