"""Scripted answer distributions shared by tests: the indemnity-cap near tie and a stable fact."""

from __future__ import annotations

from typing import Any

INDEMNITY = {
    "name": "indemnity-cap",
    "match": "(?i)indemnity cap",
    "answers": [
        {"text": "The indemnity cap is 12 months of fees.", "p": 0.46},
        {"text": "The indemnity cap is 24 months of fees.", "p": 0.41},
        {"text": "There is no cap.", "p": 0.13},
    ],
}
STABLE = {
    "name": "governing-law",
    "match": "(?i)governing law",
    "answers": [
        {"text": "The governing law is the law of England.", "p": 0.99},
        {"text": "The governing law is the law of France.", "p": 0.01},
    ],
}


def simulator_config(**overrides: Any) -> dict[str, Any]:
    """A simulator config with the shared scenarios and a fast, measurable timing model."""
    config: dict[str, Any] = {
        "timing": {"prefill_ms_per_token": 0.05, "decode_ms_per_token": 4.0},
        "scenarios": [INDEMNITY, STABLE],
    }
    config.update(overrides)
    return config
