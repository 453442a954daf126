# Quickstart targets: `make demo` and `make test` each do all set-up themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export MLFLOW_DISABLE_TELEMETRY ?= true

.PHONY: setup demo test lint ui clean

setup: $(STAMP)

# torch is pinned and installed first: a loose torch requirement would pull a multi-GB CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev,demo]"
	touch $(STAMP)

demo: setup
	$(BIN)/harness run-study lambda_tau_sweep --profile smoke
	$(BIN)/harness report lambda_tau_sweep

test: setup
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

ui: setup
	$(BIN)/harness ui

clean:
	rm -rf .harness reports/build
