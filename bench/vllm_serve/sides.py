"""The four sides vLLM's client is pointed at, all in front of one real vLLM."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from bench.proxies.nginx_proxy import NginxProxy
from bench.proxies.sides import plumbline_config
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key

# What the gateway's default model config asks vLLM for on a chat call (LogprobCapture: top 5).
GATEWAY_LOGPROBS = {"logprobs": True, "top_logprobs": 5}
SIDES = ("direct", "direct_logprobs", "nginx_logprobs", "plumbline")
BASELINE = "nginx_logprobs"
LABELS = {
    "direct": "direct to vLLM",
    "direct_logprobs": "direct, top-5 logprobs",
    "nginx_logprobs": "nginx, top-5 logprobs",
    "plumbline": "Plumbline",
}


@dataclass(frozen=True)
class ServeSide:
    """Where a side takes calls, its key, what the client adds to each body, its process."""

    name: str
    base_url: str
    api_key: str | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    # The gateway's pid (its recorder is its child); 0 for the sides that run none of our code.
    pid: int = 0
    database: str = ""

    @property
    def label(self) -> str:
        """Readable name for reports."""
        return LABELS[self.name]


def start_serve_sides(exits: ExitStack, vllm_url: str, vllm_port: int) -> list[ServeSide]:
    """Start nginx and a recording gateway in front of vLLM (stopped when `exits` closes)."""
    nginx = NginxProxy(vllm_port)
    exits.enter_context(nginx)
    database = exits.enter_context(postgres_database("plumbline_vllm_serve"))
    gateway = GatewayProcess(plumbline_config(vllm_url), database)
    exits.enter_context(gateway)
    assert gateway.process is not None
    return [
        ServeSide("direct", vllm_url),
        ServeSide("direct_logprobs", vllm_url, extra_body=GATEWAY_LOGPROBS),
        ServeSide("nginx_logprobs", nginx.url, extra_body=GATEWAY_LOGPROBS),
        # Sent as a client sends it: the gateway itself asks vLLM for the top-5 logprobs.
        ServeSide(
            "plumbline",
            gateway.url,
            issue_key(database, "bench"),
            pid=gateway.process.pid,
            database=database,
        ),
    ]
