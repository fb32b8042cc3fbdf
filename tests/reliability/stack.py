"""Processes the reliability tests start: a simulator with no model time, a gateway in front."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from tests.support.gateway_process import GatewayProcess, gateway_config

# An engine that takes no time: what is measured is the gateway and its recording path.
ZERO_TIME = {"prefill_ms_per_token": 0.0, "decode_ms_per_token": 0.0, "max_num_seqs": 4096}
QUESTION = [{"role": "user", "content": "Is the contract signed?"}]
# A four-token answer: light enough for a 2-CPU machine to keep up hundreds of calls a second.
LIGHT = {"model": "tiny", "messages": QUESTION, "max_tokens": 4}


def reliability_config(backend_url: str, **overrides: Any) -> dict[str, Any]:
    """The test gateway config with patient health checks.

    These tests load a shared 2-CPU machine to its limit: a 1 s health-check timeout then takes
    a working backend out of rotation, which is not the fault under test.
    """
    overrides.setdefault("health", {"interval_s": 0.5, "timeout_s": 5.0})
    return gateway_config(backend_url, **overrides)


@contextmanager
def running_gateway(
    config: dict[str, Any], database_url: str, spool_dir: Path | None = None
) -> Iterator[GatewayProcess]:
    """A started `plumbline gateway`, stopped (SIGTERM) on exit unless already gone.

    `spool_dir`: the spool of an earlier gateway, as a restarted process finds it.
    """
    gateway = GatewayProcess(config, database_url)
    if spool_dir is not None:
        written = yaml.safe_load(gateway.config_path.read_text())
        written["recording"]["spool_dir"] = str(spool_dir)
        gateway.config_path.write_text(yaml.safe_dump(written))
        gateway.spool_dir = spool_dir
    gateway.start()
    try:
        yield gateway
    finally:
        gateway.stop()
