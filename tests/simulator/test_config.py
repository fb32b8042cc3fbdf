"""Config loading: the example YAML, dotted overrides, flags of `python -m simulator`."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

import simulator
from simulator.config import SimulatorConfig
from simulator.process import SimulatorProcess

EXAMPLE = Path(simulator.__file__).with_name("example_config.yaml")


def test_example_config_is_valid_and_documents_the_defaults() -> None:
    example = SimulatorConfig.from_yaml(EXAMPLE)
    defaults = SimulatorConfig()
    assert example.model_copy(update={"scenarios": []}) == defaults
    assert [a.p for a in example.scenarios[0].answers] == [0.46, 0.41, 0.13]


def test_overrides_win_over_the_file() -> None:
    config = SimulatorConfig.load(
        EXAMPLE, {"timing.decode_ms_per_token": 9.5, "max_model_len": 1000}
    )
    assert config.timing.decode_ms_per_token == 9.5
    assert config.timing.max_num_seqs == 256
    assert config.max_model_len == 1000


def test_unknown_keys_are_rejected() -> None:
    with pytest.raises(ValidationError):
        SimulatorConfig.load(None, {"timing.decode_ms": 1})


def test_command_line_flags_reach_the_server() -> None:
    flags = ["--decode-ms-per-token", "7.5", "--max-num-seqs", "3", "--model-name", "flagged"]
    with SimulatorProcess(extra_args=flags) as sim:
        timing = sim.client.get("/_sim/timing").json()
        assert (timing["decode_ms_per_token"], timing["max_num_seqs"]) == (7.5, 3)
        assert sim.client.get("/v1/models").json()["data"][0]["id"] == "flagged"
