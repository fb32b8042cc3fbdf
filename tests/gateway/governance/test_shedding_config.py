"""The shedding and priority settings: off by default, and bad values name the problem."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gateway.config import GatewayConfig


def _model(**fields: Any) -> dict[str, Any]:
    return {"models": [{"name": "m", "backends": [{"url": "http://x"}], **fields}]}


def test_shedding_is_off_and_priorities_default() -> None:
    model = GatewayConfig.model_validate(_model()).models[0]
    assert model.shedding is None
    assert (model.priorities.product, model.priorities.eval) == (0, 10)
    assert model.priorities.of("live_sample") == 10
    assert model.priorities.of("something-else") == 0


def test_the_brief_form_is_accepted() -> None:
    model = GatewayConfig.model_validate(
        _model(shedding={"queue_depth": 16, "kv_cache_usage": 0.95})
    ).models[0]
    assert model.shedding is not None
    assert (model.shedding.background_at, model.shedding.retry_after_s) == (0.75, 5)


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        (
            {"shedding": {"queue_depth": None, "kv_cache_usage": None}},
            "at least one of queue_depth",
        ),
        ({"shedding": {"queue_depth": 0}}, "queue_depth"),
        ({"shedding": {"kv_cache_usage": 1.5}}, "kv_cache_usage"),
        ({"shedding": {"background_at": 0}}, "background_at"),
        ({"shedding": {"retry_after_s": 0}}, "retry_after_s"),
        ({"shedding": {"team_weights": {"a": 0}}}, "team_weights"),
        ({"shedding": {"team_weights": {"a": 1e9}}}, "team_weights"),
        ({"shedding": {"queue_dept": 3}}, "queue_dept"),
        ({"priorities": {"product": -1}}, "product"),
        ({"priorities": {"eval": 2**40}}, "eval"),
    ],
)
def test_bad_settings_name_the_problem(fields: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValidationError) as raised:
        GatewayConfig.model_validate(_model(**fields))
    assert fragment in str(raised.value)


def test_shedding_needs_vllm_backends() -> None:
    with pytest.raises(ValidationError) as raised:
        GatewayConfig.model_validate(
            {
                "models": [
                    {
                        "name": "m",
                        "provider": "litellm",
                        "litellm_model": "openai/gpt-4o",
                        "shedding": {"queue_depth": 4},
                    }
                ]
            }
        )
    assert "shedding reads vLLM backends' load" in str(raised.value)
