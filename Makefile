# Plumbline: the two README commands are `make demo` and `make test`; the rest are their parts.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PLUMBLINE_CACHE ?= $(HOME)/.cache/plumbline
export PLUMBLINE_CACHE

.PHONY: demo test lint format venv services vllm-env vllm-model prometheus-tools chromium bench-smoke clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,semantic]'
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/plumbline demo

services:
	@scripts/ensure-services

test: $(STAMP) services vllm-env prometheus-tools chromium
	$(PY) -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

# The real vLLM (CPU build) in its own venv under $(PLUMBLINE_CACHE), plus the tiny model; seconds
# once installed.
vllm-env:
	@PYTHON="$(PYTHON)" scripts/vllm-env

# promtool and prometheus (Debian's package, unpacked under $(PLUMBLINE_CACHE)) for tests/dashboards.
prometheus-tools:
	@scripts/prometheus-tools

# Debian's chromium (apt, as root) for the dashboard page's Playwright tests; instant once there.
chromium:
	@scripts/chromium

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
