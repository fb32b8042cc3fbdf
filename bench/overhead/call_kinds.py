"""Added latency per call kind: Responses (plain and streamed) and embeddings, against direct.

Two simulators (a generate one for Responses, a `runner: pooling` one for embeddings), nginx in
front of each, and one Plumbline gateway serving both models, recording to Postgres. Each round
runs every case on every side, sides rotated. A case whose route the gateway answers 404 (the
embeddings route before it exists) is skipped with its reason, not failed.
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.harness.load import RESPONSES_TOKENS, Request, open_loop
from bench.harness.summary import summarise
from bench.overhead import workload
from bench.overhead.capacity import rotated
from bench.proxies.nginx_proxy import NginxProxy
from bench.proxies.sides import Side, plumbline_config
from gateway.config import ModelConfig
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key

KIND_SIDES = ("direct", "nginx", "plumbline")
EMBED_MODEL = "tiny-embed"
TEXT = "Summarise the termination clause of the contract."


@dataclass(frozen=True)
class KindCase:
    """One call kind as the scenario sends it."""

    name: str
    path: str
    pooling: bool  # served by the pooling simulator
    body: dict[str, Any]

    @property
    def stream(self) -> bool:
        """Whether the call streams."""
        return bool(self.body.get("stream"))

    def request(self) -> Request:
        """The encoded request."""
        return Request.of(self.body, RESPONSES_TOKENS)


# Every side asks for the top-5 logprobs the gateway would otherwise add, as the chat workload
# does: the backend then does the same work on every side, and only the hop is measured.
RESPONSES_BODY: dict[str, Any] = {
    "model": "tiny",
    "input": TEXT,
    "max_output_tokens": 200,
    "ignore_eos": True,
    "seed": 7,
    "include": ["message.output_text.logprobs"],
    "top_logprobs": 5,
}
CASES = {
    "responses": KindCase("responses", "/v1/responses", False, RESPONSES_BODY),
    "responses-stream": KindCase(
        "responses-stream", "/v1/responses", False, {**RESPONSES_BODY, "stream": True}
    ),
    "embeddings": KindCase(
        "embeddings", "/v1/embeddings", True, {"model": EMBED_MODEL, "input": TEXT}
    ),
}
# Which cases each `--call-kinds` name runs.
KIND_NAMES = {"responses": ("responses", "responses-stream"), "embeddings": ("embeddings",)}


@dataclass
class KindsRun:
    """Per round, per case and side, the summary; the cases skipped and why."""

    cases: list[str]
    sides: list[str]
    rates: dict[str, float]
    rounds: list[dict[str, dict[str, dict[str, float]]]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KindSides:
    """Base URL and headers of every side, for the generate and the pooling backend."""

    simulator: SimulatorProcess  # the generate one, whose timing streams change
    generate: dict[str, Side]
    pooling: dict[str, Side]

    def target(self, case: KindCase, side: str) -> Side:
        """Where a case's calls go on one side."""
        base = (self.pooling if case.pooling else self.generate)[side]
        return Side(side, base.url + case.path, base.headers, base.pid)


def _gateway_config(generate: SimulatorProcess, pooling: SimulatorProcess) -> dict[str, Any]:
    config = plumbline_config(generate.base_url)
    embed = {
        "name": EMBED_MODEL,
        "backends": [{"url": pooling.base_url}],
        "price": {"input_per_million": 0.02, "output_per_million": 0.0},
    }
    if "runner" in ModelConfig.model_fields:  # gateways that check a model's runner
        embed["runner"] = "pooling"
    config["models"] = [*config["models"], embed]
    return config


def start_kind_sides(exits: ExitStack, names: tuple[str, ...]) -> KindSides:
    """Both simulators, and each named side in front of them (stopped when `exits` closes)."""
    generate = exits.enter_context(SimulatorProcess({"timing": workload.ZERO_TIME}))
    pooling = exits.enter_context(
        SimulatorProcess(
            {"timing": workload.ZERO_TIME, "runner": "pooling", "model_name": EMBED_MODEL}
        )
    )
    sides = KindSides(generate, {}, {})
    for name in names:
        if name == "direct":
            sides.generate[name] = Side(name, generate.base_url, pid=generate.pid)
            sides.pooling[name] = Side(name, pooling.base_url, pid=pooling.pid)
        elif name == "nginx":
            for simulator, into in ((generate, sides.generate), (pooling, sides.pooling)):
                nginx = NginxProxy(simulator.port)
                exits.enter_context(nginx)
                into[name] = Side(name, nginx.url)
        elif name == "plumbline":
            database = exits.enter_context(postgres_database("plumbline_bench_kinds"))
            gateway = GatewayProcess(_gateway_config(generate, pooling), database)
            exits.enter_context(gateway)
            headers = {"Authorization": f"Bearer {issue_key(database, 'bench')}"}
            sides.generate[name] = sides.pooling[name] = Side(name, gateway.url, headers)
        else:
            raise ValueError(f"unknown side {name!r}; choose from {', '.join(KIND_SIDES)}")
    return sides


async def _probe(side: Side, request: Request) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(side.url, data=request.payload, headers=side.headers) as response,
    ):
        return response.status, (await response.text())[:200]


def unavailable(sides: KindSides, case: KindCase, names: tuple[str, ...]) -> str | None:
    """Why a case cannot run (a side answers it with an error), or None."""
    for name in names:
        status, text = asyncio.run(_probe(sides.target(case, name), case.request()))
        if status == 404 and name == "plumbline":
            return f"the gateway answers 404 for {case.path} (no such route on this build)"
        if status != 200:
            return f"{name} answers {status} for {case.path}: {text}"
    return None


def measure_kinds(
    cases: list[str], names: tuple[str, ...], rates: dict[str, float], rounds: int, seconds: float
) -> KindsRun:
    """Start the sides, probe each case, then run the rounds."""
    run = KindsRun(cases, list(names), rates)
    with ExitStack() as exits:
        sides = start_kind_sides(exits, names)
        for name in cases:
            reason = unavailable(sides, CASES[name], names)
            if reason:
                print(f"skipping {name}: {reason}", flush=True)
                run.skipped[name] = reason
        for index in range(rounds):
            row: dict[str, dict[str, dict[str, float]]] = {name: {} for name in names}
            for name in (c for c in cases if c not in run.skipped):
                case = CASES[name]
                rate = rates["stream" if case.stream else "plain"]
                # Streams need a decode cadence, as in the chat phases; plain calls none.
                sides.simulator.set_timing(
                    workload.STREAM_TIME if case.stream else workload.ZERO_TIME
                )
                for side in rotated([sides.target(case, n) for n in names], index):
                    samples = asyncio.run(
                        open_loop(side.url, [case.request()], side.headers, rate, seconds)
                    )
                    row[side.name][name] = summarise(samples)
            run.rounds.append(row)
            print(f"call-kind round {index + 1} of {rounds} done", flush=True)
    return run
