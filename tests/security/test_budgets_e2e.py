"""Spend budgets through two real gateways sharing Redis and Postgres, with the openai SDK."""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
import redis
import yaml
from sqlalchemy import select

from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import ApiKey, Call, Team
from simulator.process import SimulatorProcess
from tests.security.invalidation_world import channel_env, cli, wait_channel_up
from tests.support.databases import postgres_database, sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.otlp_receiver import free_port_url
from tests.support.recorded_calls import recorded_calls
from tests.support.scenarios import INDEMNITY, simulator_config
from tests.support.waiting import wait_for, wait_until
from tests.support.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.xdist_group("security-budgets")
REDIS = "redis://127.0.0.1:6379/0"
MESSAGES = [{"role": "user", "content": "What is the governing law of the agreement?"}]
PRICE_IN, PRICE_OUT = 0.5, 1.5  # per million tokens: micro-units per token


@dataclass
class Replicas:
    """Two gateways on one database and one Redis prefix, a webhook, and an admin key."""

    gateways: list[GatewayProcess]
    database: str
    admin: str
    prefix: str
    hook: WebhookReceiver


def _config(simulator_url: str, on_failure: str = "open") -> dict[str, Any]:
    config = gateway_config(
        simulator_url,
        limits={
            # A loaded test machine must not turn a slow Redis into a local (per-process) budget.
            "rate_limits": {"store": "redis", "redis_timeout_s": 2.0},
            "budgets": {"on_redis_failure": on_failure},
        },
    )
    dead = {**config["models"][0], "name": "dead", "backends": [{"url": free_port_url()}]}
    config["models"].append(dead)
    return config


@pytest.fixture(scope="module")
def replicas() -> Iterator[Replicas]:
    prefix = f"plumbline-test-budget-{uuid.uuid4().hex[:8]}:"
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config(scenarios=[INDEMNITY])))
        url = exits.enter_context(postgres_database("plumbline_budget"))
        hook = exits.enter_context(WebhookReceiver())
        admin = issue_key(url, "platform", admin=True)
        env = {
            "PLUMBLINE_REDIS__URL": REDIS,
            "PLUMBLINE_WORKER__KEY_PREFIX": prefix,
            "PLUMBLINE_WORKER__NOTIFY__CHANNELS": json.dumps(
                {"budgets": {"kind": "webhook", "url": hook.url}}
            ),
            "PLUMBLINE_WORKER__NOTIFY__DEFAULT_CHANNELS": '["budgets"]',
            "PLUMBLINE_KEY_INVALIDATION__CHANNEL": "redis",
        }
        config = _config(simulator.base_url)
        gateways = [exits.enter_context(GatewayProcess(config, url, env=env)) for _ in range(2)]
        for gateway in gateways:
            wait_channel_up(gateway)
        yield Replicas(gateways, url, admin, prefix, hook)
    client = redis.Redis.from_url(REDIS)
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)
    client.close()


def _admin(replicas: Replicas, method: str, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.request(
        method,
        f"{replicas.gateways[0].url}{path}",
        json=body,
        headers={"Authorization": f"Bearer {replicas.admin}"},
        timeout=10,
    )


def _client(gateway: GatewayProcess, key: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=f"{gateway.url}/v1", max_retries=0, timeout=30)


def _chat(client: openai.OpenAI, model: str = "tiny", max_tokens: int = 8) -> int:
    """The status of one chat call (200, or the error's)."""
    try:
        client.chat.completions.create(model=model, messages=MESSAGES, max_tokens=max_tokens)  # type: ignore[arg-type]
    except openai.APIStatusError as error:
        return error.status_code
    return 200


def _micros(call: Call) -> int:
    micros = (call.prompt_tokens or 0) * PRICE_IN + (call.completion_tokens or 0) * PRICE_OUT
    return max(0, math.ceil(micros - 1e-6))


def _spend(replicas: Replicas, key: str) -> tuple[int, int]:
    client = redis.Redis.from_url(REDIS)
    matches = list(client.scan_iter(f"{replicas.prefix}budget:*:{key}"))
    assert len(matches) == 1, matches
    spent, held = client.hmget(matches[0], "spent", "held")
    client.close()
    return int(spent or 0), int(held or 0)


def _settled(replicas: Replicas, key: str) -> int:
    """A budget's spend once no call holds anything on it."""
    wait_until(lambda: _spend(replicas, key)[1] == 0, timeout=10, what=f"{key} settled")
    return _spend(replicas, key)[0]


def _team_calls(replicas: Replicas, team: str, at_least: int) -> list[Call]:
    engine = create_db_engine(replicas.database)
    sessions = make_session_factory(engine)
    with sessions() as session:
        team_id = session.scalar(select(Team.id).where(Team.name == team))
    calls = list(recorded_calls(sessions, Call.team_id == team_id, at_least=at_least))
    engine.dispose()
    return calls


def _metric(gateway: GatewayProcess, line_start: str) -> float:
    page = httpx.get(f"{gateway.url}/metrics", timeout=10).text
    found = re.search(rf"^{re.escape(line_start)} (\S+)$", page, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_two_gateways_spend_a_team_budget_exactly_and_notify_once(replicas: Replicas) -> None:
    key = issue_key(replicas.database, "spenders")
    budget = 0.001  # 1000 micro-units: about fifty calls of this size
    changed = _admin(
        replicas,
        "PATCH",
        "/api/admin/teams/spenders",
        {"budget_day": budget, "budget_soft_fraction": 0.5},
    )
    assert changed.status_code == 200 and changed.json()["budget_day"] == budget
    clients = [_client(g, key) for g in replicas.gateways]
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda i: _chat(clients[i % 2]), range(120)))
    assert 0 < statuses.count(200) < 120 and set(statuses) == {200, 429}
    # The burst's holds may have refused calls that its settled costs leave room for: spend
    # what is left one call at a time, by either gateway, until a call no longer fits.
    caught = None
    for turn in range(30):
        try:
            clients[turn % 2].chat.completions.create(model="tiny", messages=MESSAGES, max_tokens=8)  # type: ignore[arg-type]
        except openai.RateLimitError as refusal:
            caught = refusal
            break
        statuses.append(200)
    assert caught is not None, "30 calls after the burst and the budget still not reached"
    statuses.append(429)
    admitted = statuses.count(200)
    calls = _team_calls(replicas, "spenders", at_least=len(statuses))
    assert len(calls) == len(statuses)
    ok = [c for c in calls if c.status_code == 200]
    refused = [c for c in calls if c.status_code == 429]
    assert len(ok) == admitted
    for gateway in replicas.gateways:
        assert _metric(gateway, 'plumbline_budget_store_failures_total{reason="timeout"}') == 0
        assert _metric(gateway, "plumbline_budget_settlements_lost_total") == 0
    assert {c.error_type for c in refused} == {"budget_exceeded"}
    # What Redis charged is exactly the recorded cost of the admitted calls, within budget.
    recorded = sum(_micros(c) for c in ok)
    team_id = ok[0].team_id
    spent = _settled(replicas, f"team:{team_id}:day:{ok[0].created_at:%Y-%m-%d}")
    assert spent == recorded <= budget * 1e6
    assert sum((c.input_cost or 0) + (c.output_cost or 0) for c in ok) <= budget + 1e-12
    # The refusal names the budget and its reset.
    error = caught.body
    assert isinstance(error, dict) and error["type"] == "budget_exceeded"
    assert "daily budget of team `spenders`" in error["message"]
    assert "of 0.001000 spent" in error["message"] and "the reset at" in error["message"]
    assert "lower max_tokens" in error["message"] or "nothing is left" in error["message"]
    assert int(caught.response.headers["retry-after"]) >= 1
    # One soft notice in all, though both gateways spent past the level.
    notices = wait_for(replicas.hook.received, timeout=15, what="the soft notice")
    sent = sum(
        _metric(g, 'plumbline_budget_notices_total{outcome="delivered"}') for g in replicas.gateways
    )
    assert sent == 1 and len(replicas.hook.received()) == 1
    notice = notices[0]
    assert notice["event"] == "budget_soft_level" and notice["name"] == "spenders"
    assert notice["period"] == "day" and notice["spent"] >= notice["soft_level"] == 0.0005
    refusals = sum(
        _metric(g, 'plumbline_budget_refusals_total{period="day",scope="team"}')
        for g in replicas.gateways
    )
    assert refusals == len(refused)
    report = httpx.get(
        f"{replicas.gateways[1].url}/api/usage/budgets",
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert report.status_code == 200
    (day,) = report.json()["budgets"]
    assert (day["scope"], day["name"], day["period"]) == ("team", "spenders", "day")
    assert day["limit"] == budget and day["soft_level"] == 0.0005
    assert day["spent"] == recorded / 1e6 and day["held"] == 0
    page = httpx.get(
        f"{replicas.gateways[0].url}/api/dashboard/budgets",
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert page.status_code == 200 and page.json() == report.json()
    spend_line = 'plumbline_budget_spend{key="",period="day",scope="team",team="spenders"}'
    assert max(_metric(g, spend_line) for g in replicas.gateways) > 0


def test_with_rate_limits_too_two_gateways_admit_in_one_script_and_spend_exactly(
    replicas: Replicas,
) -> None:
    # A team with rate limits and a budget: each call is admitted by one script for both.
    key = issue_key(replicas.database, "metered")
    policy = {"budget_day": 0.0005, "requests_per_minute": 100_000, "tokens_per_minute": 10**7}
    assert _admin(replicas, "PATCH", "/api/admin/teams/metered", policy).status_code == 200
    clients = [_client(g, key) for g in replicas.gateways]
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda i: _chat(clients[i % 2]), range(60)))
    assert 0 < statuses.count(200) < 60 and set(statuses) == {200, 429}
    calls = _team_calls(replicas, "metered", at_least=60)
    ok = [c for c in calls if c.status_code == 200]
    refused = [c for c in calls if c.status_code == 429]
    assert {c.error_type for c in refused} == {"budget_exceeded"}  # never the rate limits
    spent = _settled(replicas, f"team:{ok[0].team_id}:day:{ok[0].created_at:%Y-%m-%d}")
    assert spent == sum(_micros(c) for c in ok) <= 500


def _key_with_budget(replicas: Replicas, team: str, month: float) -> tuple[str, str]:
    created = _admin(replicas, "POST", "/api/admin/keys", {"team": team, "budget_month": month})
    assert created.status_code == 201, created.text
    body = created.json()
    return body["key"], body["prefix"]


def _key_id(replicas: Replicas, prefix: str) -> int:
    engine = create_db_engine(replicas.database)
    with make_session_factory(engine)() as session:
        key_id = session.scalar(select(ApiKey.id).where(ApiKey.prefix == prefix))
    engine.dispose()
    assert key_id is not None
    return key_id


def test_a_failed_call_releases_its_hold_and_a_cut_one_pays_what_it_used(
    replicas: Replicas,
) -> None:
    key, prefix = _key_with_budget(replicas, "cutters", 1.0)
    key_id = _key_id(replicas, prefix)
    # No backend of `dead` answers: the call fails after its hold was taken (503).
    assert _chat(_client(replicas.gateways[0], key), model="dead") == 503
    client = redis.Redis.from_url(REDIS)
    found = list(client.scan_iter(f"{replicas.prefix}budget:*:key:{key_id}:month:*"))
    client.close()
    assert len(found) == 1, found
    name = found[0].decode().rsplit(":", 1)[-1]
    assert _spend(replicas, f"key:{key_id}:month:{name}") == (0, 0)
    # A stream the client drops after its first chunk: charged for the tokens it got.
    with httpx.stream(
        "POST",
        f"{replicas.gateways[1].url}/v1/chat/completions",
        json={"model": "tiny", "messages": MESSAGES, "max_tokens": 400, "stream": True},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    ) as streamed:
        assert streamed.status_code == 200
        next(streamed.iter_lines())
    calls = _team_calls(replicas, "cutters", at_least=2)
    cut = next(c for c in calls if c.stream)
    assert cut.cancelled and (cut.completion_tokens or 0) < 400
    assert _settled(replicas, f"key:{key_id}:month:{name}") == _micros(cut)


def test_redis_down_fails_closed_with_a_503_or_open_by_local_spend(replicas: Replicas) -> None:
    key, _ = _key_with_budget(replicas, "outage", 1.0)
    source = replicas.gateways[0]
    database = source.env["PLUMBLINE_DATABASE__URL"]
    backend = yaml.safe_load(source.config_path.read_text())["models"][0]["backends"][0]["url"]
    env = {"PLUMBLINE_REDIS__URL": free_port_url().replace("http", "redis")}
    with GatewayProcess(_config(backend, "closed"), database, env=env) as closed:
        answer = httpx.post(
            f"{closed.url}/v1/chat/completions",
            json={"model": "tiny", "messages": MESSAGES, "max_tokens": 8},
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        )
        assert answer.status_code == 503 and int(answer.headers["retry-after"]) >= 1
        error = answer.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert "budgets cannot be checked" in error["message"]
        # A key without budgets needs no budget store.
        assert _chat(_client(closed, replicas.admin)) == 200
        closed_line = 'plumbline_budget_store_failures_total{reason="failed_closed"}'
        assert _metric(closed, closed_line) == 1
    with GatewayProcess(_config(backend, "open"), database, env=env) as opened:
        assert _chat(_client(opened, key)) == 200
        open_line = 'plumbline_budget_store_failures_total{reason="failed_open"}'
        assert _metric(opened, open_line) == 1


@pytest.mark.parametrize(
    "body",
    [
        {"budget_day": -1},
        {"budget_day": "ten"},
        {"budget_month": 1e13},
        {"budget_day": True},
        {"budget_soft_fraction": 0},
        {"budget_soft_fraction": 1.5},
        {"budget_week": 3},
    ],
)
def test_bad_budget_values_are_refused_in_openai_shape(
    replicas: Replicas, body: dict[str, Any]
) -> None:
    _, prefix = _key_with_budget(replicas, "checked", 1.0)
    for path in ("/api/admin/teams/checked", f"/api/admin/keys/{prefix}"):
        answer = _admin(replicas, "PATCH", path, body)
        assert answer.status_code in (400, 422), (path, body, answer.text)
        assert set(answer.json()["error"]) == {"message", "type", "param", "code"}


def test_a_team_key_cannot_raise_its_own_budget(replicas: Replicas) -> None:
    key = issue_key(replicas.database, "climbers")
    answer = httpx.patch(
        f"{replicas.gateways[0].url}/api/admin/teams/climbers",
        json={"budget_day": 1000},
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert answer.status_code == 403
    assert answer.json()["error"]["type"] == "PermissionDeniedError"
    url = f"{replicas.gateways[0].url}/api/usage/budgets"
    for team, status in (("spenders", 403), ("x" * 129, 400), ("climbers", 200)):
        read = httpx.get(
            url, params={"team": team}, headers={"Authorization": f"Bearer {key}"}, timeout=10
        )
        assert read.status_code == status, read.text
        assert status == 200 or set(read.json()["error"]) == {"message", "type", "param", "code"}
    assert read.json() == {"team": "climbers", "budgets": []}
    missing = httpx.get(
        url,
        params={"team": "nobody-here"},
        headers={"Authorization": f"Bearer {replicas.admin}"},
        timeout=10,
    )
    assert missing.status_code == 404


def test_one_gateway_on_sqlite_keeps_budgets_in_memory(
    replicas: Replicas, tmp_path_factory: pytest.TempPathFactory
) -> None:
    backend = yaml.safe_load(replicas.gateways[0].config_path.read_text())["models"][0]
    config = gateway_config(backend["backends"][0]["url"], recording={"in_process": True})
    with sqlite_database(tmp_path_factory.mktemp("budgets")) as url:
        key = issue_key(url, "solo")
        admin = issue_key(url, "root", admin=True)
        with GatewayProcess(config, url) as gateway:
            changed = httpx.patch(
                f"{gateway.url}/api/admin/teams/solo",
                json={"budget_month": 0.0001},  # 100 micro-units: a few calls (each holds ~58)
                headers={"Authorization": f"Bearer {admin}"},
                timeout=10,
            )
            assert changed.status_code == 200 and changed.json()["budget_month"] == 0.0001
            client = _client(gateway, key)
            statuses = [_chat(client, max_tokens=4) for _ in range(10)]
            assert statuses[0] == 200 and statuses[-1] == 429, statuses
            assert statuses == sorted(statuses)  # once refused, refused for the month


def test_budgets_set_with_the_cli_apply_on_running_gateways(replicas: Replicas) -> None:
    key = issue_key(replicas.database, "operated")
    clients = [_client(g, key) for g in replicas.gateways]
    assert [_chat(c) for c in clients] == [200, 200]  # both gateways hold the key, no budget
    env = channel_env(REDIS, replicas.prefix)
    done = cli(
        replicas.database,
        env,
        *("teams", "set", "operated", "--budget-day", "0.000001", "--budget-month", "300"),
        "--budget-soft",
        "0.8",
    )
    assert done.returncode == 0, done.stderr
    assert "budget_day=0.000001" in done.stdout and "budget_soft_fraction=0.8" in done.stdout
    for client in clients:
        wait_until(lambda c=client: _chat(c) == 429, timeout=15, what="the budget applied")
    listed = cli(replicas.database, env, "teams", "list")
    assert "operated" in listed.stdout and "month=300.000000" in listed.stdout
    cleared = cli(replicas.database, env, "teams", "set", "operated", "--no-budgets")
    assert cleared.returncode == 0, cleared.stderr
    for client in clients:
        wait_until(lambda c=client: _chat(c) == 200, timeout=15, what="the budget removed")
    created = cli(
        replicas.database, env, "keys", "create", "--team", "operated", "--budget-month", "2"
    )
    assert created.returncode == 0, created.stderr
    prefix = created.stderr.split("prefix=")[1].split()[0]
    changed = cli(replicas.database, env, "keys", "limits", prefix, "--budget-day", "0.5")
    assert changed.returncode == 0, changed.stderr
    assert "budget day=0.500000 month=2.000000" in changed.stdout


def test_a_call_refused_by_its_rate_limit_leaves_nothing_on_its_budget(
    replicas: Replicas,
) -> None:
    # The rate limits and the budgets are asked at once; a 429 from either settles the other.
    created = _admin(
        replicas,
        "POST",
        "/api/admin/keys",
        {"team": "limited", "budget_month": 1.0, "requests_per_minute": 1},
    )
    assert created.status_code == 201, created.text
    key, prefix = created.json()["key"], created.json()["prefix"]
    key_id = _key_id(replicas, prefix)
    client = _client(replicas.gateways[0], key)
    assert [_chat(client), _chat(client)] == [200, 429]
    calls = _team_calls(replicas, "limited", at_least=2)
    served = [c for c in calls if c.status_code == 200]
    assert len(served) == 1 and {c.status_code for c in calls} == {200, 429}
    redis_client = redis.Redis.from_url(REDIS)
    [found] = list(redis_client.scan_iter(f"{replicas.prefix}budget:*:key:{key_id}:month:*"))
    redis_client.close()
    name = found.decode().rsplit(":", 1)[-1]
    assert _settled(replicas, f"key:{key_id}:month:{name}") == _micros(served[0])
