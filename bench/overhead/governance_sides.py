"""The governance scenario's sides: two gateways that differ only in the checks a call passes.

Both record to Postgres and count rate limits in Redis (a team limit set far above the load).
"off": a legacy key of a team with no budgets and no model lists, on a model without
shedding. "on": a key scoped to `inference` with an expiry, day and month budgets and a model
list on both the key and its team, on a model whose shedding thresholds the load never reaches.
"""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import httpx

from bench.proxies.sides import Side, plumbline_config
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key

GOVERNANCE_SIDES = ("off", "on")
GOVERNANCE_LABELS = {"off": "governance off", "on": "governance on"}
REDIS = "redis://127.0.0.1:6379/0"
# Far above anything the bench spends or sends, so no check ever refuses a call.
HIGH_RATE = 1_000_000_000
HIGH_BUDGET = 1e9
TEAM_MODELS = ["tiny", "tiny-*", "bench-*", "llama-*"]
KEY_MODELS = ["ti*", "bench-eval", "qwen-*"]
UNLISTED = "unlisted-70b"
SHEDDING = {"queue_depth": 1_000_000, "kv_cache_usage": 1.0, "in_flight": 1_000_000}


def side_config(backend_url: str, name: str) -> dict[str, Any]:
    """The deployed gateway config, rate limits in Redis; shedding on the "on" side's model."""
    config = plumbline_config(backend_url)
    config["limits"] = {"rate_limits": {"store": "redis", "redis_timeout_s": 1.0}}
    # Outside both model lists: hidden from the "on" key, served to "off" (`confirm_governed`).
    config["models"].append({**config["models"][0], "name": UNLISTED, "upstream_model": "tiny"})
    if name == "on":
        config["models"][0]["shedding"] = dict(SHEDDING)
    return config


def _admin(client: httpx.Client, method: str, path: str, body: dict[str, Any]) -> Any:
    answer = client.request(method, path, json=body or None)
    if answer.status_code not in (200, 201):
        raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text}")
    return answer.json()


def governed_key(client: httpx.Client, team: str) -> str:
    """A scoped, expiring key with budgets and a model list, of a team with the same."""
    limits = {"requests_per_minute": HIGH_RATE, "tokens_per_minute": HIGH_RATE}
    budgets = {"budget_day": HIGH_BUDGET, "budget_month": HIGH_BUDGET}
    body = {"team": team, "scopes": ["inference"], "expires": "30d", "allowed_models": KEY_MODELS}
    issued = _admin(client, "POST", "/api/admin/keys", {**body, **budgets})
    _admin(client, "PATCH", f"/api/admin/teams/{team}", {**limits, **budgets})
    _admin(client, "PATCH", f"/api/admin/teams/{team}", {"allowed_models": TEAM_MODELS})
    return str(issued["key"])


def legacy_key(client: httpx.Client, database: str, team: str) -> str:
    """A key as `plumbline keys create` makes it, of a team with only the high rate limits."""
    key = issue_key(database, team)
    limits = {"requests_per_minute": HIGH_RATE, "tokens_per_minute": HIGH_RATE}
    _admin(client, "PATCH", f"/api/admin/teams/{team}", limits)
    return key


def confirm_governed(side: Side) -> None:
    """Off serves the unlisted model; on hides it (404, as unknown) and refuses `/api/calls`."""
    with httpx.Client(headers=side.headers, timeout=30) as client:
        body = {"model": UNLISTED, "messages": [{"role": "user", "content": "hi"}]}
        model = client.post(side.url, json={**body, "max_tokens": 4}).status_code
        scope = client.get(side.url.replace("/v1/chat/completions", "/api/calls")).status_code
    expected = (404, 403) if side.name == "on" else (200, 200)
    if (model, scope) != expected:
        raise RuntimeError(
            f"side {side.name}: unlisted model {model}, /api/calls {scope}, expected {expected}"
        )


@dataclass(frozen=True)
class GovernanceSides:
    """The started sides, and where and as whom the "on" side's budgets are read."""

    sides: list[Side]
    on_url: str
    admin_headers: dict[str, str]


def spent(sides: GovernanceSides) -> list[tuple[str, str, float]]:
    """(scope, period, spent) of each budget of the "on" team and its key, from the admin API."""
    url = f"{sides.on_url}/api/usage/budgets"
    with httpx.Client(headers=sides.admin_headers, timeout=30) as client:
        report = _admin(client, "GET", url + "?team=bench-on", {})
    return [(b["scope"], b["period"], float(b["spent"] or 0)) for b in report["budgets"]]


def start_governance_sides(
    exits: ExitStack, simulator: SimulatorProcess, names: tuple[str, ...] = GOVERNANCE_SIDES
) -> GovernanceSides:
    """A gateway per side on one database and one Redis prefix (stopped when `exits` closes)."""
    unknown = set(names) - set(GOVERNANCE_SIDES)
    if unknown:
        raise ValueError(f"unknown sides {sorted(unknown)}; choose from {GOVERNANCE_SIDES}")
    database = exits.enter_context(postgres_database("plumbline_bench_governance"))
    admin = issue_key(database, "platform", admin=True)
    prefix = f"plumbline-bench-governance-{uuid.uuid4().hex[:8]}:"
    env = {"PLUMBLINE_REDIS__URL": REDIS, "PLUMBLINE_WORKER__KEY_PREFIX": prefix}
    sides, on_url = [], ""
    auth = {"Authorization": f"Bearer {admin}"}
    for name in names:
        gateway = GatewayProcess(side_config(simulator.base_url, name), database, env=env)
        exits.enter_context(gateway)
        assert gateway.process is not None
        with httpx.Client(base_url=gateway.url, headers=auth, timeout=30) as client:
            team = f"bench-{name}"
            key = governed_key(client, team) if name == "on" else legacy_key(client, database, team)
        headers = {"Authorization": f"Bearer {key}"}
        sides.append(Side(name, gateway.url + "/v1/chat/completions", headers, gateway.process.pid))
        confirm_governed(sides[-1])
        if name == "on":
            on_url = gateway.url
    return GovernanceSides(sides, on_url, auth)
