"""`python -m bench.http_clients`: aiohttp against httpx on the product's non-hot-path HTTP uses.

Three workloads against the vLLM simulator (a real subprocess, zero model time), each library
in turn, rounds alternating, medians of the rounds; the CPU is this (client) process's own:
- eval calls: many concurrent short JSON chat POSTs on one async client (the eval client);
- health probes: GET /health, /metrics and /v1/models one after another, each body read up to
  a byte cap (the health monitor);
- sync POSTs: one JSON POST at a time from blocking code, body unread (alert deliveries in
  Celery tasks); aiohttp through BlockingHttp, a private event loop in a thread.
Records the section in docs/benchmarks.md; `--smoke` runs it tiny.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import aiohttp
import httpx
import orjson

from bench.harness.header import section_header
from bench.harness.record import DOC, publish
from plumbline.blocking_http import BlockingHttp
from simulator.process import SimulatorProcess

ZERO_TIMING = {"prefill_ms_per_token": 0.0, "decode_ms_per_token": 0.0, "max_num_seqs": 1024}
SHORT = {"match": "^short$", "answers": [{"text": "The cap is 12 months of fees.", "p": 1}]}
CHAT = {"messages": [{"role": "user", "content": "short"}], "temperature": 0}
PROBES = ("/health", "/metrics", "/v1/models")
PROBE_CAP = 1 << 20  # the health monitor's cap on a probe's body
LIBRARIES = ("aiohttp", "httpx")
# One workload run: (calls made, wall seconds, client CPU seconds).
Run = tuple[int, float, float]


def _measured(calls: int, work: Callable[[], None]) -> Run:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return calls, time.perf_counter() - wall, time.process_time() - cpu


async def _aiohttp_posts(url: str, calls: int, concurrency: int) -> None:
    body = orjson.dumps(CHAT)
    headers = {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:

        async def one() -> None:
            async with session.post(url, data=body, headers=headers) as response:
                orjson.loads(await response.read())

        await _in_waves(one, calls, concurrency)


async def _httpx_posts(url: str, calls: int, concurrency: int) -> None:
    body = orjson.dumps(CHAT)
    headers = {"Content-Type": "application/json"}
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(limits=limits, trust_env=False) as client:

        async def one() -> None:
            response = await client.post(url, content=body, headers=headers)
            orjson.loads(response.content)

        await _in_waves(one, calls, concurrency)


async def _in_waves(one: Callable[[], Awaitable[None]], calls: int, concurrency: int) -> None:
    """`calls` calls, `concurrency` at a time (a batch of eval samples)."""
    left = calls
    while left > 0:
        wave = min(concurrency, left)
        await asyncio.gather(*(one() for _ in range(wave)))
        left -= wave


async def _aiohttp_probes(base: str, rounds: int) -> None:
    timeout = aiohttp.ClientTimeout(total=5.0)
    async with aiohttp.ClientSession(trust_env=False) as session:
        for _ in range(rounds):
            for path in PROBES:
                async with session.get(base + path, timeout=timeout) as response:
                    await response.content.read(PROBE_CAP)


async def _httpx_probes(base: str, rounds: int) -> None:
    async with httpx.AsyncClient(trust_env=False, timeout=5.0) as client:
        for _ in range(rounds):
            for path in PROBES:
                async with client.stream("GET", base + path) as response:
                    read = 0
                    async for chunk in response.aiter_raw():
                        read += len(chunk)
                        if read >= PROBE_CAP:
                            break


def _aiohttp_sync_posts(url: str, calls: int) -> None:
    # As alert deliveries make them: the product's blocking wrapper over aiohttp.
    with BlockingHttp() as http:
        for _ in range(calls):
            assert http.request("POST", url, json=CHAT, timeout_s=10.0).status == 200


def _httpx_sync_posts(url: str, calls: int) -> None:
    with httpx.Client(follow_redirects=False, trust_env=False, timeout=10.0) as client:
        for _ in range(calls):
            with client.stream("POST", url, json=CHAT) as response:
                assert response.status_code == 200


def _workloads(base: str, args: argparse.Namespace) -> dict[str, dict[str, Callable[[], Run]]]:
    chat = f"{base}/v1/chat/completions"
    n, c, probes, sync = args.calls, args.concurrency, args.probe_rounds, args.sync_calls
    return {
        f"eval calls ({n} POSTs, {c} concurrent)": {
            "aiohttp": lambda: _measured(n, lambda: asyncio.run(_aiohttp_posts(chat, n, c))),
            "httpx": lambda: _measured(n, lambda: asyncio.run(_httpx_posts(chat, n, c))),
        },
        f"health probes ({probes} rounds of 3 GETs, 1 MiB cap)": {
            "aiohttp": lambda: _measured(
                3 * probes, lambda: asyncio.run(_aiohttp_probes(base, probes))
            ),
            "httpx": lambda: _measured(
                3 * probes, lambda: asyncio.run(_httpx_probes(base, probes))
            ),
        },
        f"sync POSTs ({sync}, one at a time)": {
            "aiohttp": lambda: _measured(sync, lambda: _aiohttp_sync_posts(chat, sync)),
            "httpx": lambda: _measured(sync, lambda: _httpx_sync_posts(chat, sync)),
        },
    }


def measure(args: argparse.Namespace) -> dict[str, dict[str, list[Run]]]:
    """Every workload, each library once per round, the order alternating between rounds."""
    found: dict[str, dict[str, list[Run]]] = {}
    with SimulatorProcess({"timing": ZERO_TIMING, "scenarios": [SHORT]}) as sim:
        workloads = _workloads(sim.base_url, args)
        for name, sides in workloads.items():
            for run in sides.values():
                run()  # warm-up: imports, first connections, the simulator's caches
            found[name] = {library: [] for library in LIBRARIES}
            for index in range(args.rounds):
                order = LIBRARIES if index % 2 == 0 else tuple(reversed(LIBRARIES))
                for library in order:
                    found[name][library].append(sides[library]())
    return found


def report(header: list[str], found: dict[str, dict[str, list[Run]]]) -> str:
    """The section: per workload and library, client CPU per call, calls/s and their ratios."""
    lines = [
        *header,
        "",
        "| workload | library | client CPU ms/call | calls/s | wall ms/call | CPU vs aiohttp |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for name, sides in found.items():
        cpu = {
            lib: statistics.median(r[2] * 1000 / r[0] for r in runs) for lib, runs in sides.items()
        }
        for library, runs in sides.items():
            rate = statistics.median(r[0] / r[1] for r in runs)
            wall = statistics.median(r[1] * 1000 / r[0] for r in runs)
            lines.append(
                f"| {name} | {library} | {cpu[library]:.3f} | {rate:.0f} | {wall:.2f} | "
                f"{cpu[library] / cpu['aiohttp']:.2f}x |"
            )
    return "\n".join(lines) + "\n"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; `--smoke` shrinks everything to seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4000, help="eval POSTs per round")
    parser.add_argument("--concurrency", type=int, default=50, help="eval POSTs in flight")
    parser.add_argument("--probe-rounds", type=int, default=300, help="health rounds per round")
    parser.add_argument("--sync-calls", type=int, default=1000, help="sync POSTs per round")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each library")
    parser.add_argument("--busy", default=None, help="a note on what else ran on the machine")
    parser.add_argument("--doc", default=str(DOC), help="where to record the section")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI")
    args = parser.parse_args(argv)
    if args.smoke:
        args.calls, args.probe_rounds, args.sync_calls, args.rounds = 100, 10, 30, 1
    return args


def main(argv: list[str] | None = None) -> str:
    """Run, print and record; returns the section."""
    args = parse(argv)
    notes = [
        "Client side only: the simulator answers a 9-token scripted chat completion with zero "
        "model time; CPU is the benchmark process's (the client's), medians of the rounds. "
        "aiohttp's sync POSTs go through `plumbline.blocking_http.BlockingHttp` (a private "
        "event loop in a thread, one session kept across calls), as alert deliveries do; "
        "httpx's through one `httpx.Client`.",
    ]
    header = section_header(
        "bench.http_clients", notes, extra=("httpx", "httpcore"), busy=args.busy
    )
    section = report(header, measure(args))
    return publish(
        "HTTP clients: aiohttp and httpx off the hot path", "http-clients", section, args
    )


if __name__ == "__main__":
    main()
