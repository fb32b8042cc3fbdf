"""A speech-to-text simulator behind a real gateway, with audio priced per minute."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simulator.process import SimulatorProcess
from tests.support.gateway_process import GatewayProcess, gateway_config
from tests.support.scenarios import simulator_config

AUDIO_PER_MINUTE = 0.006
MAX_BODY = 1 << 20
BODY_TIMEOUT_S = 2.0


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    """A simulator serving a speech-to-text model (vLLM registers /v1/audio/* only then)."""
    with SimulatorProcess(simulator_config(transcription=True)) as sim:
        yield sim


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    """A gateway whose model prices audio, with a small body bound and body deadline."""
    recording = {"flush_interval_ms": 20, "in_process": database.startswith("sqlite")}
    config = gateway_config(
        simulator.base_url,
        recording=recording,
        limits={"max_body_bytes": MAX_BODY, "body_read_timeout_s": BODY_TIMEOUT_S},
    )
    config["models"][0]["price"]["audio_per_minute"] = AUDIO_PER_MINUTE
    hosted = {"name": "hosted", "provider": "litellm", "litellm_model": "openai/tiny"}
    config["models"].append({**hosted, "api_base": f"{simulator.base_url}/v1"})
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    process = GatewayProcess(config, database, env=env)
    with process:
        yield process
