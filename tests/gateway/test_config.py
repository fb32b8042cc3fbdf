"""The gateway config: the shipped example validates, typos and impossible routes do not."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from gateway.config import GatewayConfig, LogprobMode, load_gateway_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", ["plumbline.example.yaml", "deploy/gateway.yaml"])
def test_shipped_configs_validate(path: str) -> None:
    config = load_gateway_config(ROOT / path)
    assert config.models


def test_yaml_off_means_capture_off() -> None:
    config = GatewayConfig.model_validate(
        yaml.safe_load("models: [{name: m, backends: [{url: 'http://x'}], logprobs: {mode: off}}]")
    )
    assert config.models[0].logprobs.mode is LogprobMode.OFF
    assert config.models[0].logprobs.upstream_k is None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("models: [{name: m, backend: [{url: 'http://x'}]}]", "backend"),
        ("models: [{name: m}]", "at least one backend"),
        ("models: [{name: m, provider: litellm}]", "litellm_model"),
        ("models: [{name: m, backends: [{url: x}]}, {name: m, backends: [{url: y}]}]", "unique"),
        ("models: [{name: m, backends: [{url: x}], logprobs: {k: 50}}]", "k"),
    ],
)
def test_bad_configs_name_the_problem(text: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as raised:
        GatewayConfig.model_validate(yaml.safe_load(text))
    assert fragment in str(raised.value)
