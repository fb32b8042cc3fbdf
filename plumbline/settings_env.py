"""Write nested settings as the PLUMBLINE_* environment a child process reads them from."""

from __future__ import annotations

import json
from typing import Any

# Mappings whose keys are names the user chooses (not fields): passed whole, as JSON.
OPAQUE_MAPPINGS = frozenset({"channels"})


def settings_environment(values: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """`{"worker": {"batch_size": 10}}` -> `{"PLUMBLINE_WORKER__BATCH_SIZE": "10"}`."""
    env: dict[str, str] = {}
    for key, value in values.items():
        name = f"{prefix}__{key.upper()}" if prefix else f"PLUMBLINE_{key.upper()}"
        if isinstance(value, dict) and key not in OPAQUE_MAPPINGS:
            env.update(settings_environment(value, name))
        else:
            env[name] = json.dumps(value) if isinstance(value, dict | list) else str(value)
    return env
