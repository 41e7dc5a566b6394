# The commands of the README: `make up` (serve the local stack), `make test` (every test, as CI runs them) and
# `make lint` (ruff, the layer contract and mypy, also run by CI).
# Both create .venv on first use and reinstall only when pyproject.toml changes.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: up down test test-fast lint infra clean

up: $(INSTALLED)
	$(BIN)/hermes-memory up

down: $(INSTALLED)
	$(BIN)/hermes-memory down

test: $(INSTALLED)
	$(BIN)/pytest $(PYTEST_ARGS)

test-fast: $(INSTALLED)
	$(BIN)/pytest -m "not slow and not stack and not postgres" $(PYTEST_ARGS)

# ruff, the layer contract (pyproject.toml [tool.importlinter]: nothing imports upward), then the type checker
# (pyproject.toml [tool.mypy]: strict on the core, the typed operations and schemas)
lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# Regenerate infra/serve_config.yaml from the app (`serve build`) and embed it in the KubeRay RayService.
infra: $(INSTALLED)
	$(BIN)/python infra/sync_serve_config.py

$(INSTALLED): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
	  echo "could not create $(VENV): Python 3.11+ with venv is needed (Debian: apt-get install python3-venv)"; \
	  rm -rf $(VENV); exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -e '.[test]'
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache
