"""Report a reliability test's measured figures (shown by `pytest -rP`, quoted in the docs)."""

from __future__ import annotations

import json
from typing import Any


def report(test: str, **figures: Any) -> None:
    """Print the figures as one JSON line tagged with the test's name."""
    rounded = {k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()}
    print(f"reliability figures {test}: {json.dumps(rounded, sort_keys=True)}")
