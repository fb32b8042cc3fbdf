"""The demo's scripted answers: a near tie on the indemnity cap, and facts that hold still."""

from __future__ import annotations

from typing import Any

DEMO_SCENARIOS: list[dict[str, Any]] = [
    {
        "name": "indemnity-cap",
        "match": "(?i)indemnity",
        "answers": [
            {"text": "The indemnity cap is 12 months of fees.", "p": 0.46},
            {"text": "The indemnity cap is 24 months of fees.", "p": 0.41},
            {"text": "There is no cap.", "p": 0.13},
        ],
    },
    {
        "name": "governing-law",
        "match": "(?i)govern",
        "answers": [
            {"text": "The governing law is the law of England.", "p": 0.99},
            {"text": "The governing law is the law of France.", "p": 0.01},
        ],
    },
    {
        "name": "notice-period",
        "match": "(?i)notice",
        "answers": [
            {"text": "The notice period is 30 days.", "p": 0.97},
            {"text": "The notice period is 60 days.", "p": 0.03},
        ],
    },
]

DEMO_SIMULATOR: dict[str, Any] = {
    "model_name": "contracts-llm",
    "timing": {"max_num_seqs": 64, "prefill_ms_per_token": 0.05, "decode_ms_per_token": 3.0},
    "scenarios": DEMO_SCENARIOS,
}
