"""A gateway serving five models to three teams whose keys may call different ones.

Teams and keys are set up through the admin API; the gateway trusts a cached key for 600 s and
listens on an invalidation channel, so a policy change it applies came from that channel.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import openai

from simulator.process import SimulatorProcess
from tests.security.invalidation_world import channel_env, wait_channel_up
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import INDEMNITY, simulator_config

REDIS = "redis://127.0.0.1:6379/0"
MODELS = ("llama-8b", "llama-8b-instruct", "qwen-7b", "beta-private-70b", "gamma-secret-1")
TEAM_LISTS: dict[str, list[str] | None] = {
    "alpha": ["llama-8b*", "qwen-7b"],
    "beta": ["beta-private-*", "llama-8b"],
    "gamma": None,
}
# key role -> (team, the key's own list)
KEY_LISTS: dict[str, tuple[str, list[str] | None]] = {
    "alpha": ("alpha", None),
    "alpha_qwen": ("alpha", ["qwen-*"]),
    "alpha_exact": ("alpha", ["llama-8b"]),
    "alpha_disjoint": ("alpha", ["beta-private-70b"]),
    "beta": ("beta", None),
    "gamma": ("gamma", None),
}
# What each key may call: the team's list and the key's, intersected.
CALLABLE: dict[str, list[str]] = {
    "alpha": ["llama-8b", "llama-8b-instruct", "qwen-7b"],
    "alpha_qwen": ["qwen-7b"],
    "alpha_exact": ["llama-8b"],
    "alpha_disjoint": [],
    "beta": ["llama-8b", "beta-private-70b"],
    "gamma": list(MODELS),
    "admin": list(MODELS),
}
MESSAGES = [{"role": "user", "content": "What is the governing law?"}]


@dataclass
class ModelWorld:
    """The gateway, its database, its channel's environment and the keys by role."""

    gateway: GatewayProcess
    database_url: str
    env: dict[str, str]
    keys: dict[str, str]

    def api(self, who: str | None = "admin") -> httpx.Client:
        """An HTTP client with a role's key (None: no key)."""
        headers = {"Authorization": f"Bearer {self.keys[who]}"} if who else {}
        return httpx.Client(base_url=self.gateway.url, headers=headers, timeout=30)

    def openai(self, who: str) -> openai.OpenAI:
        """The official SDK with a role's key."""
        return openai.OpenAI(
            base_url=f"{self.gateway.url}/v1", api_key=self.keys[who], max_retries=0
        )

    def chat(self, who: str, model: str, **headers: str) -> httpx.Response:
        """One small chat call as `who`."""
        with self.api(who) as client:
            body = {"model": model, "messages": MESSAGES, "max_tokens": 2}
            return client.post("/v1/chat/completions", json=body, headers=headers)


def _models(base: dict[str, Any]) -> list[dict[str, Any]]:
    # Backends keep responses, so a stored response's model is checked when it is read back.
    return [
        {**base, "name": name, "upstream_model": "tiny", "responses_store": True} for name in MODELS
    ]


def _set_up(admin: httpx.Client) -> dict[str, str]:
    keys: dict[str, str] = {}
    for role, (team, models) in KEY_LISTS.items():
        body: dict[str, Any] = {"team": team, "name": role}
        if models is not None:
            body["allowed_models"] = models
        created = admin.post("/api/admin/keys", json=body)
        assert created.status_code == 201, created.text
        keys[role] = created.json()["key"]
        if role == team:  # the team now exists: give it its list
            policy = {"allowed_models": TEAM_LISTS[team]}
            changed = admin.patch(f"/api/admin/teams/{team}", json=policy)
            assert changed.status_code == 200, changed.text
    return keys


@contextmanager
def model_world() -> Iterator[ModelWorld]:
    """Simulator, Postgres, a gateway on a Redis channel; the teams and keys above."""
    env = channel_env(REDIS, f"plumbline-test-models-{uuid.uuid4().hex[:8]}:")
    with ExitStack() as exits:
        simulator = exits.enter_context(
            SimulatorProcess(simulator_config(scenarios=[INDEMNITY], enable_responses_store=True))
        )
        url = exits.enter_context(postgres_database("plumbline_models"))
        admin = issue_key(url, "platform", admin=True)
        config = gateway_config(simulator.base_url, limits={"key_cache_ttl_s": 600})
        config["models"] = _models(config["models"][0])
        gateway = exits.enter_context(GatewayProcess(config, url, env=env))
        wait_channel_up(gateway)
        world = ModelWorld(gateway, url, env, {"admin": admin})
        with world.api() as client:
            world.keys.update(_set_up(client))
        yield world
