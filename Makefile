# Plumbline: the two README commands are `make demo` and `make test`; the rest are their parts.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PLUMBLINE_CACHE ?= $(HOME)/.cache/plumbline
export PLUMBLINE_CACHE

.PHONY: demo test lint format venv services vllm-env vllm-model prometheus-tools chromium nginx-tools \
	litellm-proxy-env phoenix-env bench bench-smoke clean

# setup.py and the C source too: the editable install compiles plumbline/_logprob_scan.c in place.
$(STAMP): pyproject.toml setup.py plumbline/_logprob_scan.c
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,semantic]'
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/plumbline demo

services:
	@scripts/ensure-services

test: $(STAMP) services vllm-env prometheus-tools chromium nginx-tools litellm-proxy-env phoenix-env
	$(PY) -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

# The real vLLM (CPU build) in its own venv under $(PLUMBLINE_CACHE), plus the tiny model; seconds
# once installed.
vllm-env:
	@PYTHON="$(PYTHON)" scripts/vllm-env

# promtool and prometheus (Debian's package, unpacked under $(PLUMBLINE_CACHE)) for tests/dashboards.
prometheus-tools:
	@scripts/prometheus-tools

# The overhead benchmark's other sides (tests/bench smoke-runs every scenario): Debian's nginx,
# unpacked under $(PLUMBLINE_CACHE), and the LiteLLM proxy in its own venv there.
nginx-tools:
	@scripts/nginx-tools

litellm-proxy-env:
	@PYTHON="$(PYTHON)" scripts/litellm-proxy-env

# Arize Phoenix in its own venv under $(PLUMBLINE_CACHE): the real OTLP tracing backend the tracing
# tests export to and read spans back from.
phoenix-env:
	@PYTHON="$(PYTHON)" scripts/phoenix-env

# Every benchmark scenario at full size, each recording its section in docs/benchmarks.md (about
# an hour and three quarters on a 2-core machine); `make bench-smoke` runs them tiny, as `make
# test` does. vllm_serve runs the real vLLM (CPU build), so both need vllm-env.
BENCH_SCENARIOS ?= overhead recording eval_runs queries http_clients routing vllm_serve
bench: $(STAMP) services nginx-tools litellm-proxy-env vllm-env
	@for scenario in $(BENCH_SCENARIOS); do $(PY) -m bench.$$scenario $(BENCH_ARGS) || exit 1; done

bench-smoke: $(STAMP) services nginx-tools litellm-proxy-env vllm-env
	$(PY) -m pytest -n 2 --dist loadgroup tests/bench

# Debian's chromium (apt, as root) for the dashboard page's Playwright tests; instant once there.
chromium:
	@scripts/chromium

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) build *.egg-info plumbline/*.so .pytest_cache .mypy_cache .ruff_cache
