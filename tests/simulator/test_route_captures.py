"""Replay the real vLLM's answers on the routes beyond chat (tests/fixtures/vllm_routes) here.

Each kind of server the records came from (Responses store on, the default generate server, the
pooling runner) gets a simulator configured alike; its records are replayed in capture order.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.route_records import KIND_CONFIG, Replayer, differences, kind_of, load_records

RECORDS = load_records()
LIKE_VLLM: dict[str, Any] = {
    "max_model_len": 512,
    "enable_request_id_headers": False,
    "timing": {"prefill_ms_per_token": 0.01, "decode_ms_per_token": 0.5},
}
Replies = dict[str, tuple[httpx.Response, dict[str, str]]]


@pytest.fixture(scope="module")
def replies() -> Replies:
    """Every record's reply from a simulator of its kind, with the real-to-simulated id map."""
    out: Replies = {}
    for kind, overrides in KIND_CONFIG.items():
        mine = [record for record in RECORDS if kind_of(record) == kind]
        with (
            SimulatorProcess({**LIKE_VLLM, **overrides}) as sim,
            httpx.Client(base_url=sim.base_url, timeout=30.0) as http,
        ):
            replayer = Replayer(http)
            for record in mine:
                out[record["name"]] = (replayer.replay(record), replayer.real_ids)
    return out


def test_every_route_family_is_recorded() -> None:
    names = {record["name"] for record in RECORDS}
    assert {"resp_stream", "resp_get_background", "msg_stream", "gen_embeddings"} <= names


@pytest.mark.parametrize("record", RECORDS, ids=[r["name"] for r in RECORDS])
def test_replay_matches_vllm(record: dict[str, Any], replies: Replies) -> None:
    resp, ids = replies[record["name"]]
    found = differences(record, resp, ids)
    assert not found, "simulator vs vLLM:\n" + "\n".join(found[:20])
