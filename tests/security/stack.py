"""A gateway on a simulator and a fresh database, with an admin key and two teams' keys."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai

from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database, sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import INDEMNITY, STABLE, simulator_config

# The model answers with secrets, so stored bodies and logprobs have something to redact.
LEAKY = {
    "name": "leaky",
    "match": "(?i)contact details",
    "answers": [
        {"text": "Write to jane.roe@example.com or pay with card 4111 1111 1111 1111.", "p": 1.0}
    ],
}
SECRET_TEXTS = ("jane.roe@example.com", "4111 1111 1111 1111")


@dataclass
class SecurityStack:
    """The running gateway, its database and keys by role (admin, alpha, beta)."""

    gateway: GatewayProcess
    database_url: str
    keys: dict[str, str]
    backend_url: str = ""

    @property
    def url(self) -> str:
        """The gateway's base URL."""
        return self.gateway.url

    def api(self, who: str | None) -> httpx.Client:
        """An HTTP client with a role's key (None: no key)."""
        headers = {"Authorization": f"Bearer {self.keys[who]}"} if who else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def openai(self, who: str, **options: Any) -> openai.OpenAI:
        """The official SDK with a role's key."""
        return openai.OpenAI(
            base_url=f"{self.url}/v1", api_key=self.keys[who], max_retries=0, **options
        )


@contextmanager
def security_stack(
    kind: str,
    workdir: Path,
    *,
    config: dict[str, Any] | None = None,
    alpha_bodies: bool = True,
    simulator_options: dict[str, Any] | None = None,
    model_options: dict[str, Any] | None = None,
) -> Iterator[SecurityStack]:
    """Simulator, database (`postgres` or `sqlite`), gateway; stopped and dropped after."""
    with ExitStack() as exits:
        options = {"scenarios": [INDEMNITY, STABLE, LEAKY], **(simulator_options or {})}
        simulator = exits.enter_context(SimulatorProcess(simulator_config(**options)))
        if kind == "postgres":
            url = exits.enter_context(postgres_database("plumbline_sec"))
        else:
            url = exits.enter_context(sqlite_database(workdir))
        keys = {
            "admin": issue_key(url, "platform", admin=True),
            "alpha": issue_key(url, "alpha", store_bodies=alpha_bodies),
            "beta": issue_key(url, "beta"),
        }
        settings = gateway_config(simulator.base_url, **(config or {}))
        if model_options:
            settings["models"] = [{**settings["models"][0], **model_options}]
        evals = {"PLUMBLINE_EVAL__API_KEY": keys["admin"]}
        gateway = exits.enter_context(GatewayProcess(settings, url, env=evals))
        yield SecurityStack(gateway, url, keys, simulator.base_url)
