"""Measure the vLLM simulator: requests/s (non-streaming, streaming) and concurrent streams.

One command: `.venv/bin/python bench/simulator_throughput.py` prints the figures and records
them, dated, with the machine and versions, in docs/benchmarks.md (Simulator section).
The simulator runs as a real subprocess; load comes from separate client processes (aiohttp).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import multiprocessing as mp
import os
import platform
import statistics
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from simulator.process import SimulatorProcess

ROOT = Path(__file__).resolve().parents[1]

DOC = ROOT / "docs" / "benchmarks.md"
MARKER = "<!-- simulator-results: newest first, appended by bench/simulator_throughput.py -->"
ZERO_TIMING = {"prefill_ms_per_token": 0.0, "decode_ms_per_token": 0.0, "max_num_seqs": 1024}
SHORT = {"match": "^short$", "answers": [{"text": "The cap is 12 months of fees.", "p": 1}]}
SHORT_TOKENS = 9  # eight tokens of text, then EOS
ASK = [{"role": "user", "content": "Write a long answer about contract law."}]


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far; NaN where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def _completion_tokens(payload: bytes) -> int:
    """Usage of a JSON body, or of the final usage chunk of an SSE body."""
    if payload.startswith(b"data: "):
        start = payload.rfind(b"data: {") + len(b"data: ")
        payload = payload[start : payload.index(b"\n", start)]
    tokens: int = orjson.loads(payload)["usage"]["completion_tokens"]
    return tokens


async def _closed_loop(
    url: str, body: dict[str, Any], workers: int, seconds: float
) -> dict[str, Any]:
    """`workers` clients send back to back for `seconds`; counts requests, events, latencies."""
    latencies: list[float] = []
    tokens = 0
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=workers)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal tokens
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                async with session.post(url, json=body) as response:
                    payload = await response.read()
                    if response.status != 200:
                        raise RuntimeError(payload[:200])
                tokens += _completion_tokens(payload)
                latencies.append(time.perf_counter() - started)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(workers)))
        elapsed = time.perf_counter() - began
    return {"requests": len(latencies), "tokens": tokens, "elapsed": elapsed, "lat": latencies}


async def _streams(url: str, body: dict[str, Any], count: int) -> dict[str, Any]:
    """`count` simultaneous streams; client-side gaps between content events, engine ITL."""
    gaps: list[float] = []
    engine_itl: list[float] = []
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one() -> None:
            async with session.post(url, json=body) as response:
                last = None
                async for line in response.content:
                    if not line.startswith(b"data: {"):
                        continue
                    now = time.perf_counter()
                    if b'"choices":[]' in line:
                        engine_itl.append(orjson.loads(line[6:])["metrics"]["mean_itl_ms"])
                        continue
                    if last is not None:
                        gaps.append(now - last)
                    last = now

        began = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(count)))
        elapsed = time.perf_counter() - began
    return {"gaps": gaps, "engine_itl": engine_itl, "elapsed": elapsed}


def _client(job: tuple[str, str, dict[str, Any], int, float]) -> dict[str, Any]:
    kind, url, body, size, seconds = job
    if kind == "loop":
        return asyncio.run(_closed_loop(url, body, size, seconds))
    return asyncio.run(_streams(url, body, size))


def _fan_out(pool: Any, jobs: list[tuple[str, str, dict[str, Any], int, float]]) -> list[Any]:
    return list(pool.map(_client, jobs))


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def bench_requests(pool: Any, clients: int, concurrency: int, seconds: float) -> dict[str, Any]:
    """Non-streaming and streaming closed-loop throughput with zero model time."""
    results: dict[str, Any] = {}
    with SimulatorProcess({"timing": ZERO_TIMING, "scenarios": [SHORT]}) as sim:
        url = f"{sim.base_url}/v1/chat/completions"
        plain = {"messages": [{"role": "user", "content": "short"}], "temperature": 0}
        stream = {
            "messages": ASK,
            "max_tokens": 200,
            "ignore_eos": True,
            "logprobs": True,
            "top_logprobs": 5,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        for name, body in (("non-streaming", plain), ("streaming", stream)):
            jobs = [("loop", url, body, n, seconds) for n in _split(concurrency, clients)]
            cpu_before = _cpu_seconds(sim.pid)
            parts = _fan_out(pool, jobs)
            cpu = _cpu_seconds(sim.pid) - cpu_before
            requests = sum(p["requests"] for p in parts)
            elapsed = max(p["elapsed"] for p in parts)
            latencies = [x for p in parts for x in p["lat"]]
            results[name] = {
                "req_s": requests / elapsed,
                "tokens_s": sum(p["tokens"] for p in parts) / elapsed,
                "p50_ms": _percentile(latencies, 0.5) * 1000,
                "p99_ms": _percentile(latencies, 0.99) * 1000,
                "cpu_ms_per_req": cpu * 1000 / requests,
                "server_cpu": cpu / elapsed,
            }
    results[f"non-streaming ({SHORT_TOKENS}-token scripted answer)"] = results.pop("non-streaming")
    results["streaming (200 tokens, top-5 logprobs)"] = results.pop("streaming")
    return results


def bench_streams(
    pool: Any, clients: int, counts: list[int], itl_ms: float
) -> list[dict[str, Any]]:
    """Many simultaneous 200-token streams at a fixed model ITL: does the server keep up?"""
    rows = []
    timing = {"decode_ms_per_token": itl_ms, "decode_ms_per_extra_seq": 0.0, "max_num_seqs": 4096}
    body = {
        "messages": ASK,
        "max_tokens": 200,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with SimulatorProcess({"timing": timing}) as sim:
        url = f"{sim.base_url}/v1/chat/completions"
        for count in counts:
            jobs = [("streams", url, body, n, 0.0) for n in _split(count, clients)]
            cpu_before = _cpu_seconds(sim.pid)
            parts = _fan_out(pool, jobs)
            cpu = _cpu_seconds(sim.pid) - cpu_before
            gaps = [g for p in parts for g in p["gaps"]]
            engine = [x for p in parts for x in p["engine_itl"]]
            rows.append(
                {
                    "streams": count,
                    "completed": len(engine),
                    "wall_s": max(p["elapsed"] for p in parts),
                    "engine_itl_ms": statistics.fmean(engine) if engine else float("nan"),
                    "client_gap_p50_ms": _percentile(gaps, 0.5) * 1000,
                    "client_gap_p99_ms": _percentile(gaps, 0.99) * 1000,
                    "server_cpu": cpu / max(p["elapsed"] for p in parts),
                }
            )
    return rows


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    packages = ", ".join(
        f"{name} {version(name)}"
        for name in ("uvicorn", "uvloop", "httptools", "fastapi", "orjson", "aiohttp")
    )
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; {packages}"
    )


def _report(args: argparse.Namespace, requests: dict[str, Any], streams: list[Any]) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"### {stamp}",
        "",
        f"Machine: {_machine()}",
        "",
        f"Command: `python bench/simulator_throughput.py --seconds {args.seconds} "
        f"--concurrency {args.concurrency} --clients {args.clients} "
        f"--streams {','.join(map(str, args.streams))} --itl-ms {args.itl_ms}`",
        "",
        "Closed loop, zero model time (server overhead only):",
        "",
        "| workload | requests/s | tokens/s | p50 ms | p99 ms | server CPU ms/request | "
        "server cores busy |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in requests.items():
        lines.append(
            f"| {name} | {row['req_s']:.0f} | {row['tokens_s']:.0f} | "
            f"{row['p50_ms']:.1f} | {row['p99_ms']:.1f} | {row['cpu_ms_per_req']:.2f} | "
            f"{row['server_cpu']:.2f} |"
        )
    lines += [
        "",
        f"Simultaneous 200-token streams, model ITL {args.itl_ms:g} ms (no batch slowdown):",
        "",
        "| streams | completed | wall s | engine mean ITL ms | client gap p50 ms | p99 ms | "
        "server cores busy |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in streams:
        lines.append(
            f"| {row['streams']} | {row['completed']} | {row['wall_s']:.1f} | "
            f"{row['engine_itl_ms']:.1f} | {row['client_gap_p50_ms']:.1f} | "
            f"{row['client_gap_p99_ms']:.1f} | {row['server_cpu']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def _record(section: str) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    if MARKER not in text:
        text = text.rstrip("\n") + "\n\n## Simulator\n\n" + MARKER + "\n"
    head, _, tail = text.partition(MARKER)
    older = tail.strip("\n")
    DOC.write_text(f"{head}{MARKER}\n\n{section}" + (f"\n{older}\n" if older else ""))


def main() -> None:
    """Run both benchmarks, print them, record them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="per closed-loop workload")
    parser.add_argument("--concurrency", type=int, default=64, help="closed-loop clients")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument(
        "--streams", type=lambda s: [int(x) for x in s.split(",")], default=[100, 250, 500, 1000]
    )
    parser.add_argument("--itl-ms", type=float, default=20.0)
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    with mp.get_context("spawn").Pool(args.clients) as pool:
        requests = bench_requests(pool, args.clients, args.concurrency, args.seconds)
        streams = bench_streams(pool, args.clients, args.streams, args.itl_ms)
    section = _report(args, requests, streams)
    print(section)
    if not args.no_record:
        _record(section)
        print(f"recorded in {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
