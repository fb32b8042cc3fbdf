"""Two real gateways sharing Redis: one limit for both, token debt seen by both, Redis down."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis
import yaml

from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.otlp_receiver import free_port_url
from tests.support.scenarios import INDEMNITY, simulator_config

pytestmark = pytest.mark.xdist_group("security-shared-rate-limits")
REDIS = "redis://127.0.0.1:6379/0"
MESSAGES = [{"role": "user", "content": "What is the governing law of the agreement?"}]
LIMIT = 10


@dataclass
class Replicas:
    """Two gateways on one database and one Redis prefix, and the keys they accept."""

    gateways: list[GatewayProcess]
    keys: dict[str, str]
    prefix: str


def _shared(on_failure: str = "open") -> dict[str, Any]:
    return {"limits": {"rate_limits": {"store": "redis", "on_redis_failure": on_failure}}}


@pytest.fixture(scope="module")
def replicas() -> Iterator[Replicas]:
    prefix = f"plumbline-test-rl-e2e-{uuid.uuid4().hex[:8]}:"
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config(scenarios=[INDEMNITY])))
        url = exits.enter_context(postgres_database("plumbline_rl"))
        keys = {team: issue_key(url, team) for team in ("alpha", "beta")}
        keys["admin"] = issue_key(url, "platform", admin=True)
        env = {"PLUMBLINE_REDIS__URL": REDIS, "PLUMBLINE_WORKER__KEY_PREFIX": prefix}
        config = gateway_config(simulator.base_url, **_shared())
        gateways = [exits.enter_context(GatewayProcess(config, url, env=env)) for _ in range(2)]
        yield Replicas(gateways, keys, prefix)
    client = redis.Redis.from_url(REDIS)
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)
    client.close()


def _chat(gateway: GatewayProcess, key: str, max_tokens: int = 8) -> httpx.Response:
    return httpx.post(
        f"{gateway.url}/v1/chat/completions",
        json={"model": "tiny", "messages": MESSAGES, "max_tokens": max_tokens},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )


def _redis_seconds() -> float:
    client = redis.Redis.from_url(REDIS)
    seconds, micros = client.time()
    client.close()
    return float(seconds) + micros / 1e6


def _metric(gateway: GatewayProcess, line_start: str) -> float:
    page = httpx.get(f"{gateway.url}/metrics", timeout=10).text
    found = re.search(rf"^{re.escape(line_start)} (\S+)$", page, re.MULTILINE)
    assert found is not None, line_start
    return float(found.group(1))


def test_one_team_limit_holds_across_two_gateways(replicas: Replicas) -> None:
    first = replicas.gateways[0]
    admin = {"Authorization": f"Bearer {replicas.keys['admin']}"}
    changed = httpx.patch(
        f"{first.url}/api/admin/teams/beta", json={"requests_per_minute": LIMIT}, headers=admin
    )
    assert changed.status_code == 200
    began = _redis_seconds()
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda i: _chat(replicas.gateways[i % 2], replicas.keys["beta"]), range(4 * LIMIT)
            )
        )
    elapsed = _redis_seconds() - began
    admitted = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code != 200]
    # Each gateway alone would have admitted the whole limit: together they admit it once.
    assert LIMIT <= len(admitted) <= LIMIT + int(elapsed * LIMIT / 60)
    assert {a.status_code for a in refused} == {429}
    error = refused[0].json()["error"]
    assert error["type"] == "RateLimitError" and "(limit 10)" in error["message"]
    assert refused[0].headers["x-ratelimit-limit-requests"] == str(LIMIT)
    assert int(refused[0].headers["retry-after-ms"]) >= 1
    for gateway in replicas.gateways:
        assert _metric(gateway, "plumbline_rate_limit_redis_up") == 1


def test_token_debt_made_on_one_gateway_is_waited_out_on_the_other(replicas: Replicas) -> None:
    first, second = replicas.gateways
    admin = {"Authorization": f"Bearer {replicas.keys['admin']}"}
    created = httpx.post(
        f"{first.url}/api/admin/keys",
        json={"team": "alpha", "name": "batch", "tokens_per_minute": 20},
        headers=admin,
    )
    key = created.json()["key"]
    used = _chat(first, key, max_tokens=32)
    assert used.status_code == 200 and used.json()["usage"]["total_tokens"] > 20
    refused = _chat(second, key)
    assert refused.status_code == 429
    assert "tokens per minute on this key (limit 20)" in refused.json()["error"]["message"]


def test_redis_down_fails_closed_with_a_503_and_counts_it(replicas: Replicas) -> None:
    source = replicas.gateways[0]
    config = {**yaml.safe_load(source.config_path.read_text()), **_shared("closed")}
    env = {"PLUMBLINE_REDIS__URL": free_port_url().replace("http", "redis")}
    database = source.env["PLUMBLINE_DATABASE__URL"]
    admin = {"Authorization": f"Bearer {replicas.keys['admin']}"}
    # Set here too: the test must not depend on another having run first.
    changed = httpx.patch(
        f"{source.url}/api/admin/teams/beta", json={"requests_per_minute": LIMIT}, headers=admin
    )
    assert changed.status_code == 200
    with GatewayProcess(config, database, env=env) as closed:
        limited = _chat(closed, replicas.keys["beta"])
        assert limited.status_code == 503
        error = limited.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "ServiceUnavailableError"
        assert int(limited.headers["retry-after"]) >= 1
        # A key with no limits needs no Redis.
        assert _chat(closed, replicas.keys["admin"]).status_code == 200
        closed_count = 'plumbline_rate_limit_unshared_admissions_total{mode="closed"}'
        assert _metric(closed, closed_count) == 1
        assert _metric(closed, 'plumbline_rate_limit_redis_failures_total{reason="error"}') >= 1
