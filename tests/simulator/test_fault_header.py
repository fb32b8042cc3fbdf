"""The X-Sim-Fault header grammar and the rate-based fault draw."""

from __future__ import annotations

import random

import pytest

from simulator.config import FaultConfig
from simulator.errors import ApiError
from simulator.faults import FaultPlan, draw_faults, parse_fault_header


def test_header_forces_each_kind() -> None:
    plan = parse_fault_header(
        "error; status=429; after_tokens=2, stall_first_byte; seconds=0.5,"
        "stall_mid_stream; after_tokens=3; seconds=1, close_mid_stream; after_tokens=4,"
        "garbage, engine_dead"
    )
    assert (plan.error_status, plan.error_after_tokens) == (429, 2)
    assert plan.stall_first_byte_s == 0.5
    assert (plan.stall_after_tokens, plan.stall_seconds) == (3, 1.0)
    assert plan.close_after_tokens == 4
    assert plan.garbage_body
    assert plan.garbage_after_tokens is None
    assert plan.engine_dead


def test_garbage_after_tokens_is_mid_stream() -> None:
    plan = parse_fault_header("garbage; after_tokens=5")
    assert not plan.garbage_body
    assert plan.garbage_after_tokens == 5


@pytest.mark.parametrize("header", ["melt", "error; status", "error; status=99", "stall; x=1"])
def test_malformed_header_is_a_400(header: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_fault_header(header)
    assert caught.value.status == 400


def test_rates_draw_independently() -> None:
    never = draw_faults(FaultConfig(), random.Random(0))
    assert never == FaultPlan()
    always = FaultConfig.model_validate({"error": {"rate": 1.0, "status": 500}})
    assert draw_faults(always, random.Random(0)).error_status == 500
    half = FaultConfig.model_validate({"error": {"rate": 0.5}})
    rng = random.Random(7)
    hits = sum(draw_faults(half, rng).error_status is not None for _ in range(2000))
    assert 850 < hits < 1150
