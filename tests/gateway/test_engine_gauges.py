"""The vLLM load gauges are read from a real /metrics page, summed over engines."""

from __future__ import annotations

import pytest

from gateway.routing.health import parse_engine_gauges
from tests.support.captures import CAPTURES


def test_gauges_from_the_captured_vllm_page() -> None:
    gauges = parse_engine_gauges((CAPTURES / "metrics_full.txt").read_text())
    assert set(gauges) == {"running", "waiting", "kv_cache_usage"}
    assert all(value >= 0 for value in gauges.values())


def test_values_are_summed_over_engines_and_junk_is_ignored() -> None:
    page = "\n".join(
        [
            "# HELP vllm:num_requests_running Number of requests in model execution batches.",
            'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
            'vllm:num_requests_running{engine="1",model_name="m"} 2.0',
            'vllm:num_requests_waiting{engine="0",model_name="m"} 7',
            "vllm:kv_cache_usage_perc garbage",
            'vllm:num_requests_running_total{engine="0"} 99',
        ]
    )
    assert parse_engine_gauges(page) == pytest.approx({"running": 5.0, "waiting": 7.0})
