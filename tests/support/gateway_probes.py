"""What a gateway asks every backend on its own: health, scrape, models and the runner probe."""

from __future__ import annotations

from gateway.routing.runner_probe import RUNNER_ROUTES

PROBE_PATHS = frozenset({"/health", "/metrics", "/v1/models"})
RUNNER_PROBE_PATHS = frozenset(path for _, path in RUNNER_ROUTES)


def is_probe(method: str, path: str) -> bool:
    """Whether a request a backend heard is one of the gateway's own checks, not a call."""
    return path in PROBE_PATHS or (method == "GET" and path in RUNNER_PROBE_PATHS)
