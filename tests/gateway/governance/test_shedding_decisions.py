"""The shedding order, pressure from the scraped gauges and in-flight counts, and priorities."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.config import GatewayConfig
from gateway.governance.shedding import (
    EVAL,
    LIVE_SAMPLE,
    OVER_FAIR_SHARE,
    CallShed,
    LoadShedder,
)
from gateway.routing.model_backends import ModelBackends


def _config(**model: Any) -> GatewayConfig:
    base: dict[str, Any] = {
        "name": "m",
        "backends": [{"url": "http://a"}, {"url": "http://b"}],
        "shedding": {"queue_depth": 10, "kv_cache_usage": 0.9, "background_at": 0.5},
    }
    return GatewayConfig.model_validate({"models": [{**base, **model}]})


def _world(**model: Any) -> tuple[GatewayConfig, ModelBackends, LoadShedder]:
    config = _config(**model)
    backends = ModelBackends(config)
    return config, backends, LoadShedder(backends)


def _queue(backends: ModelBackends, waiting: float, running: float = 1.0) -> None:
    for backend in backends.serving("m"):
        backend.engine_gauges = {"running": running, "waiting": waiting}


def test_pressure_is_the_least_loaded_healthy_backend() -> None:
    config, backends, shedder = _world()
    model = config.models[0]
    first, second = backends.serving("m")
    first.engine_gauges = {"waiting": 20.0}
    second.engine_gauges = {"waiting": 5.0}
    assert shedder.pressure(model) == 0.5
    second.healthy = False
    assert shedder.pressure(model) == 2.0
    first.engine_gauges = {"waiting": 0.0, "kv_cache_usage": 0.9}
    assert shedder.pressure(model) == pytest.approx(1.0)
    first.healthy = False
    assert shedder.pressure(model) == 0.0  # none healthy: the forwarder answers that


def test_calls_sent_since_the_scrape_count_at_once() -> None:
    config, backends, shedder = _world()
    for backend in backends.serving("m"):
        backend.engine_gauges = {"running": 2.0, "waiting": 0.0}
        backend.in_flight = 12  # 2 running as last scraped: 10 are queued by now
    assert shedder.pressure(config.models[0]) == 1.0


def test_in_flight_threshold_alone() -> None:
    config, backends, shedder = _world(
        shedding={"queue_depth": None, "kv_cache_usage": None, "in_flight": 4}
    )
    for backend in backends.serving("m"):
        backend.in_flight = 2
    assert shedder.pressure(config.models[0]) == 0.5


def test_background_is_shed_first_then_the_team_over_its_share() -> None:
    config, backends, shedder = _world()
    model = config.models[0]
    hog = [shedder.admit(model, "product", 1, "a") for _ in range(5)]
    for admission in hog:
        admission.enter()
    shedder.admit(model, "product", 2, "b").enter()
    _queue(backends, waiting=5)  # half the threshold
    for source, reason in (("eval", EVAL), ("live_sample", LIVE_SAMPLE)):
        admission = shedder.admit(model, source, 2, "b")
        assert admission.shed == reason
        with pytest.raises(CallShed) as raised:
            admission.enter()
        assert raised.value.status == 503
        assert (b"retry-after", b"5") in raised.value.headers
    over = shedder.admit(model, "product", 1, "a")
    assert over.shed is None and over.over_share
    _queue(backends, waiting=10)
    assert shedder.admit(model, "product", 1, "a").shed == OVER_FAIR_SHARE
    within = shedder.admit(model, "product", 2, "b")
    assert within.shed is None and not within.over_share
    assert shedder.shed_counts == {("m", EVAL): 1, ("m", LIVE_SAMPLE): 1, ("m", OVER_FAIR_SHARE): 1}
    # Once the hog's calls end it is within its share again, whatever the load.
    for admission in hog:
        admission.leave()
        admission.leave()
    assert shedder.admit(model, "product", 1, "a").shed is None


def test_product_within_its_share_is_never_shed_however_saturated() -> None:
    config, backends, shedder = _world()
    _queue(backends, waiting=1_000_000)
    model = config.models[0]
    for team in range(1, 6):
        shedder.admit(model, "product", team, str(team)).enter()
    # A sixth team's first call is 1 of 6, its share 1: admitted.
    shedder.admit(model, "product", 6, "6").enter()
    assert shedder.team_calls("m") == 6
    # A second call of one is more than its share of an equal split: shed.
    assert shedder.admit(model, "product", 3, "3").shed == OVER_FAIR_SHARE


def test_a_weighted_team_gets_more_before_it_is_shed() -> None:
    config, backends, shedder = _world(shedding={"queue_depth": 1, "team_weights": {"big": 3.0}})
    model = config.models[0]
    for _ in range(4):
        shedder.admit(model, "product", 1, "big").enter()
    shedder.admit(model, "product", 2, "small").enter()
    _queue(backends, waiting=50)
    # big: 5 of 6, share 6 * 3/4 = 4.5 -> shed; with weight 1 it would be 3.
    assert shedder.admit(model, "product", 1, "big").shed == OVER_FAIR_SHARE
    config, backends, shedder = _world(shedding={"queue_depth": 1, "team_weights": {"big": 9.0}})
    model = config.models[0]
    for _ in range(4):
        shedder.admit(model, "product", 1, "big").enter()
    shedder.admit(model, "product", 2, "small").enter()
    _queue(backends, waiting=50)
    assert shedder.admit(model, "product", 1, "big").shed is None  # share 5.4


def test_without_shedding_nothing_is_counted_or_shed() -> None:
    config = GatewayConfig.model_validate({"models": [{"name": "m", "backends": [{"url": "x"}]}]})
    backends = ModelBackends(config)
    shedder = LoadShedder(backends)
    _queue(backends, waiting=1e9)
    admission = shedder.admit(config.models[0], "eval", 1, "a")
    admission.enter()
    assert admission.shed is None
    assert shedder.team_calls("m") == 0


@pytest.mark.parametrize(
    ("source", "over", "expected"),
    [("product", False, 0), ("product", True, 3), ("eval", False, 7), ("live_sample", False, 9)],
)
def test_priority_by_source_and_share_replaces_the_clients(
    source: str, over: bool, expected: int
) -> None:
    config, _, shedder = _world(
        priority_scheduling=True,
        priorities={"product": 0, "eval": 7, "live_sample": 9, "over_share": 3},
    )
    model = config.models[0]
    if over:
        for _ in range(3):
            shedder.admit(model, "product", 1, "a").enter()
        shedder.admit(model, "product", 2, "b").enter()
    payload: dict[str, Any] = {"priority": -1000}
    assert shedder.admit(model, source, 1, "a").prioritise(payload)
    assert payload == {"priority": expected}


def test_priority_is_left_to_the_client_without_priority_scheduling() -> None:
    config, _, shedder = _world()
    payload: dict[str, Any] = {"priority": 4}
    assert not shedder.admit(config.models[0], "eval", 1, "a").prioritise(payload)
    assert payload == {"priority": 4}
