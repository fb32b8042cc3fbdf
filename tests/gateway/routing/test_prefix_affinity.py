"""Prefix affinity on its own: same prefix same backend, load and KV fallback, bounded work."""

from __future__ import annotations

from typing import Any

from gateway.config import GatewayConfig
from gateway.proxy.prompt_prefix import MAX_NODES, leading_text
from gateway.routing.model_backends import Backend, ModelBackends
from gateway.routing.prefix_blocks import prefix_blocks

URLS = [f"http://10.0.0.{i}:8000" for i in range(1, 4)]
BLOCK = 64


def _fleet(**affinity: Any) -> ModelBackends:
    model = {
        "name": "m",
        "backends": [{"url": url} for url in URLS],
        "routing": "prefix_affinity",
        "prefix_affinity": {"block_chars": BLOCK, "prefix_chars": 1024, **affinity},
    }
    return ModelBackends(GatewayConfig.model_validate({"models": [model]}))


def _blocks(document: int, question: str = "", team: str = "1") -> tuple[bytes, ...]:
    text = leading_text(
        [[{"role": "system", "content": f"document {document} " + "x" * 300}, question]], 1024
    )
    return prefix_blocks(text, team, BLOCK)


def _route(fleet: ModelBackends, blocks: tuple[bytes, ...]) -> Backend:
    chosen = fleet.route("m", blocks)
    assert chosen is not None
    return chosen


def test_same_prefix_goes_to_one_backend_and_prefixes_spread() -> None:
    fleet = _fleet()
    homes = {}
    for document in range(30):
        first = _route(fleet, _blocks(document, "q0"))
        for question in range(1, 4):
            assert _route(fleet, _blocks(document, f"q{question}")) is first
        homes[document] = first.url
    assert set(homes.values()) == set(URLS)
    assert fleet.decisions[("m", "affinity")] == 120


def test_a_backend_busier_than_the_margin_loses_the_call_to_the_least_loaded() -> None:
    fleet = _fleet(load_margin=2)
    home = _route(fleet, _blocks(1))
    home.in_flight = 2
    assert _route(fleet, _blocks(1, "more")) is home
    home.in_flight = 3
    fallback = _route(fleet, _blocks(1, "more"))
    assert fallback is not home
    assert fleet.decisions[("m", "load_fallback")] == 1
    # The table still names the home for what it held: back once it is not busy.
    home.in_flight = 0
    assert _route(fleet, _blocks(1, "again")) is home


def test_scraped_queue_and_kv_cache_use_count_as_load() -> None:
    fleet = _fleet(load_margin=4, max_kv_cache_usage=0.9)
    home = _route(fleet, _blocks(2))
    home.engine_gauges = {"running": 3.0, "waiting": 2.0}
    assert _route(fleet, _blocks(2)) is not home
    home.engine_gauges = {"running": 1.0, "kv_cache_usage": 0.95}
    assert _route(fleet, _blocks(2)) is not home
    home.engine_gauges = {"running": 1.0, "kv_cache_usage": 0.5}
    assert _route(fleet, _blocks(2)) is home


def test_a_backend_leaving_moves_only_its_prefixes_and_never_gets_a_call() -> None:
    fleet = _fleet()
    before = {document: _route(fleet, _blocks(document)) for document in range(60)}
    gone = fleet.serving("m")[2]
    fleet.mark_failed(gone, "test")
    after = {document: _route(fleet, _blocks(document)) for document in range(60)}
    assert gone not in after.values()
    moved = {d for d in before if after[d] is not before[d]}
    assert moved == {d for d in before if before[d] is gone}
    assert moved


def test_teams_are_kept_apart_like_vllm_cache_salt() -> None:
    assert _blocks(3, team="1")[0] != _blocks(3, team="2")[0]


def test_no_prefix_or_least_in_flight_policy_routes_by_load() -> None:
    fleet = _fleet()
    assert fleet.route("m", ()) is not None
    assert fleet.decisions[("m", "least_in_flight")] == 1
    plain = ModelBackends(
        GatewayConfig.model_validate({"models": [{"name": "p", "backends": [{"url": URLS[0]}]}]})
    )
    assert not plain.uses_prefix("p")


def test_the_table_of_blocks_is_bounded() -> None:
    fleet = _fleet(table_entries=50)
    for document in range(200):
        _route(fleet, _blocks(document))
    assert len(fleet._affinity["m"]) == 50


def test_a_huge_prompt_costs_no_more_than_the_bound() -> None:
    huge = [{"role": "user", "content": "y" * 8_000_000}]
    text = leading_text([huge], 1024)
    assert len(text) == 1024
    assert len(prefix_blocks(text, "1", BLOCK)) == 1024 // BLOCK
    # A million tiny parts: the walk stops after MAX_NODES values, not a million.
    parts = [{"type": "text", "text": "z"}] * 1_000_000
    walked = leading_text([[{"role": "user", "content": parts}]], 262_144)
    assert 0 < len(walked) < MAX_NODES * 5
    nested: list[Any] = []
    for _ in range(10_000):
        nested = [nested, "w"]
    assert len(leading_text([nested], 262_144)) <= MAX_NODES
