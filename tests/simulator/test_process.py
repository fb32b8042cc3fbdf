"""SimulatorProcess starts real servers (module or CLI) and always stops them."""

from __future__ import annotations

import socket

import httpx

from simulator.config import SimulatorConfig
from simulator.process import SimulatorProcess


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_cli_entry_point_serves_and_stops() -> None:
    config = SimulatorConfig(model_name="cli-model", max_model_len=1024)
    with SimulatorProcess(config, use_cli=True) as sim:
        port = sim.port
        models = httpx.get(f"{sim.base_url}/v1/models").json()
        assert models["data"][0]["id"] == "cli-model"
        assert models["data"][0]["max_model_len"] == 1024
    assert not _listening(port)


def test_admin_helpers_round_trip() -> None:
    with SimulatorProcess({"timing": {"decode_ms_per_token": 0.0}}) as sim:
        scenario = {"match": "ping", "answers": [{"text": "pong", "p": 1}]}
        assert sim.set_scenarios([scenario])["scenarios"][0]["match"] == "ping"
        assert sim.set_faults({"error": {"rate": 0.25}})["error"]["rate"] == 0.25
        assert sim.set_timing({"max_num_seqs": 3})["max_num_seqs"] == 3
        sim.set_faults({})
        answer = sim.client.post("/v1/completions", json={"prompt": "ping?"}).json()
        assert answer["choices"][0]["text"] == "pong"
        stats = sim.stats()
        assert stats["requests_received"] == 1
        assert stats["completed"] == 1
        sim.reset()
        assert sim.stats()["requests_received"] == 0
        assert sim.log_path.exists()
