"""The four sides of the overhead benchmark, each started on loopback in front of one simulator."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from bench.proxies.litellm_proxy import LiteLLMProxy
from bench.proxies.nginx_proxy import NginxProxy
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key

SIDES = ("direct", "nginx", "litellm", "plumbline")
LABELS = {
    "direct": "direct to the simulator",
    "nginx": "nginx reverse proxy",
    "litellm": "LiteLLM proxy",
    "plumbline": "Plumbline",
}


@dataclass(frozen=True)
class Side:
    """Where one side takes chat completions, its auth header, and the process it runs as."""

    name: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    # The proxy process whose CPU and memory are measured (the simulator for `direct`).
    pid: int = 0

    @property
    def label(self) -> str:
        """Readable name for reports."""
        return LABELS[self.name]


def _pid(process: Any) -> int:
    assert process.process is not None
    return int(process.process.pid)


def plumbline_config(backend_url: str) -> dict[str, Any]:
    """The gateway as deployed: recording to Postgres, top-5 logprob capture, default batching."""
    return gateway_config(backend_url, health={"interval_s": 5.0, "timeout_s": 2.0}, recording={})


def start_sides(
    exits: ExitStack, simulator: SimulatorProcess, names: tuple[str, ...]
) -> list[Side]:
    """Start each named side (stopped when `exits` closes), in front of `simulator`."""
    sides = []
    path = "/v1/chat/completions"
    for name in names:
        if name == "direct":
            sides.append(Side(name, simulator.base_url + path, pid=simulator.pid))
        elif name == "nginx":
            nginx = NginxProxy(simulator.port)
            exits.enter_context(nginx)
            sides.append(Side(name, nginx.url + path, pid=_pid(nginx)))
        elif name == "litellm":
            litellm = LiteLLMProxy(simulator.base_url, "tiny")
            exits.enter_context(litellm)
            sides.append(Side(name, litellm.url + path, litellm.headers, _pid(litellm)))
        elif name == "plumbline":
            database = exits.enter_context(postgres_database("plumbline_bench"))
            gateway = GatewayProcess(plumbline_config(simulator.base_url), database)
            exits.enter_context(gateway)
            key = issue_key(database, "bench")
            headers = {"Authorization": f"Bearer {key}"}
            sides.append(Side(name, gateway.url + path, headers, _pid(gateway)))
        else:
            raise ValueError(f"unknown side {name!r}; choose from {', '.join(SIDES)}")
    return sides
