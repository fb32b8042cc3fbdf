"""Replay the route records against a real vLLM and a simulator of the same kind, and compare.

The record must still describe the real server (ids and text aside), and the simulator must
answer the live request as the real server just did: same status, headers, shape and events,
the same error bodies.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from simulator.process import SimulatorProcess
from tests.simulator.route_records import (
    KIND_CONFIG,
    Replayer,
    as_record,
    differences,
    kind_of,
    load_records,
)

LIKE_VLLM: dict[str, Any] = {
    "model_name": "tiny",
    "max_model_len": 512,
    "enable_request_id_headers": False,
    "prefix_cache": {"block_size": 128},
    "timing": {"prefill_ms_per_token": 0.01, "decode_ms_per_token": 0.5},
}


# A background response cancelled at once: the real engine may finish its 400 tokens first, and
# then the cancel is a 400 and the response complete. Such a run says nothing about either side.
CANCEL_RACE = ("resp_cancel_background", "resp_get_background")


def records_of(kind: str) -> list[dict[str, Any]]:
    """The records a server of this kind answers, in capture order."""
    return [record for record in load_records() if kind_of(record) == kind]


@contextmanager
def simulator_like(kind: str) -> Iterator[httpx.Client]:
    """A simulator configured like the real server of this kind."""
    with (
        SimulatorProcess({**LIKE_VLLM, **KIND_CONFIG[kind]}) as sim,
        httpx.Client(base_url=sim.base_url, timeout=60) as client,
    ):
        yield client


def compare_all(kind: str, real: httpx.Client, simulated: httpx.Client) -> list[str]:
    """Every difference found replaying this kind's records on both servers, by record name."""
    real_side, sim_side = Replayer(real), Replayer(simulated)
    found = []
    race_lost = False
    for record in records_of(kind):
        live = real_side.replay(record)
        if record["name"] == CANCEL_RACE[0]:
            race_lost = live.status_code == 400
        if race_lost and record["name"] in CANCEL_RACE:
            sim_side.replay(record)
            continue
        stale = differences(record, live, real_side.real_ids)
        found += [f"{record['name']} (capture is stale): {d}" for d in stale]
        ours = sim_side.replay(record)
        sim_ids = {real_side.ids[k]: v for k, v in sim_side.ids.items() if k in real_side.ids}
        found += [
            f"{record['name']} (simulator): {d}"
            for d in differences(as_record(record["name"], live), ours, sim_ids)
        ]
    return found
