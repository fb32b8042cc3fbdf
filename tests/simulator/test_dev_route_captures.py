"""Replay the real vLLM's answers on its token, batch, render and operator routes here.

The records (tests/fixtures/vllm_routes/dev/) come from `scripts/vllm-server --dev`: operator
routes on, `--enable-scale-out`, and the LoRA adapter `tiny-lora`. A simulator configured alike
must answer each as vLLM did (shapes, statuses, error bodies), in capture order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.route_records import Replayer, differences

DEV = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_routes" / "dev"
RECORDS = sorted(
    (json.loads(path.read_text()) for path in DEV.glob("*.json")), key=lambda r: r["order"]
)
# Rendered by vLLM from protocols the simulator keeps elsewhere (the Messages and Responses
# parsers); the gateway meters them as render rows whatever their body, see docs/routes.md.
NOT_SIMULATED = frozenset({"dev_render_messages", "dev_render_responses"})
LIKE_DEV_VLLM: dict[str, Any] = {
    "max_model_len": 512,
    "enable_request_id_headers": False,
    "dev_mode": True,
    "enable_scale_out": True,
    "lora_adapters": {"tiny-lora": "/models/tiny-lora"},
    "timing": {"prefill_ms_per_token": 0.01, "decode_ms_per_token": 0.5},
}
REPLAYED = [r for r in RECORDS if r["name"] not in NOT_SIMULATED]


@pytest.fixture(scope="module")
def replies() -> dict[str, httpx.Response]:
    with (
        SimulatorProcess(LIKE_DEV_VLLM) as sim,
        httpx.Client(base_url=sim.base_url, timeout=30.0) as http,
    ):
        replayer = Replayer(http)
        return {record["name"]: replayer.replay(record) for record in REPLAYED}


def test_the_records_cover_each_route_family() -> None:
    names = {record["name"] for record in RECORDS}
    assert {"dev_generate_stream", "dev_batch_chat", "dev_render_chat", "dev_models"} <= names
    assert {"dev_load_lora_twice", "dev_sleep", "dev_pause"} <= names


@pytest.mark.parametrize("record", REPLAYED, ids=[r["name"] for r in REPLAYED])
def test_replay_matches_vllm(record: dict[str, Any], replies: dict[str, httpx.Response]) -> None:
    found = differences(record, replies[record["name"]], {})
    assert not found, "simulator vs vLLM:\n" + "\n".join(found[:20])
