"""What the gateway adds: latency, stream TTFT/ITL, CPU per call and memory over many calls.

One command: `.venv/bin/python -m bench.gateway_overhead` starts a simulator (200-token answers
with top-5 logprobs; zero model time for non-streaming calls, 5 ms per token for streams), a
Postgres database and a gateway recording every call,
then alternates direct and gateway phases of an open-loop load and records the figures in
docs/benchmarks.md. `--smoke` runs a few seconds only (CI keeps the script from rotting).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
from typing import Any

from bench.harness.load import Sample, closed_loop, open_loop
from bench.harness.machine import describe
from bench.harness.procstat import cpu_seconds, rss_mib
from bench.harness.record import record_section
from bench.harness.stats import median, percentile
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key

ZERO_TIME = {"prefill_ms_per_token": 0.0, "decode_ms_per_token": 0.0, "max_num_seqs": 4096}
# Streams need a real decode cadence, or every token arrives at once and ITL means nothing.
STREAM_TIME = {**ZERO_TIME, "decode_ms_per_token": 5.0, "decode_ms_per_extra_seq": 0.0}
QUESTION = [{"role": "user", "content": "Summarise the termination clause of the contract."}]
PLAIN = {
    "model": "tiny",
    "messages": QUESTION,
    "max_tokens": 200,
    "ignore_eos": True,
    "logprobs": True,
    "top_logprobs": 5,
    # Seeded, so the simulator can reuse the generated answer and stay out of the way.
    "seed": 7,
}
STREAM = {**PLAIN, "stream": True}


def _summary(samples: list[Sample]) -> dict[str, float]:
    ok = [s for s in samples if s.status == 200]
    gaps = [g for s in ok for g in s.gaps]
    ttfts = [s.ttft for s in ok if s.ttft is not None]
    return {
        "n": len(samples),
        "errors": len(samples) - len(ok),
        "p50": percentile([s.latency for s in ok], 0.5) * 1000,
        "p99": percentile([s.latency for s in ok], 0.99) * 1000,
        "ttft_p50": percentile(ttfts, 0.5) * 1000,
        "ttft_p99": percentile(ttfts, 0.99) * 1000,
        "itl_p50": percentile(gaps, 0.5) * 1000,
        "itl_p99": percentile(gaps, 0.99) * 1000,
    }


def _phase(url: str, body: dict[str, Any], key: str | None, rate: float, seconds: float) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return _summary(asyncio.run(open_loop(url, body, headers, rate, seconds)))


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Alternate direct and gateway phases; collect per-round differences and process costs."""
    rounds: list[dict[str, Any]] = []
    with (
        SimulatorProcess({"timing": ZERO_TIME}) as sim,
        postgres_database("plumbline_bench") as database,
        GatewayProcess(gateway_config(sim.base_url), database) as gateway,
    ):
        key = issue_key(database, "bench")
        assert gateway.process is not None
        pid = gateway.process.pid
        direct = f"{sim.base_url}/v1/chat/completions"
        via = f"{gateway.url}/v1/chat/completions"
        # Warm both paths (connections, key cache) before measuring.
        _phase(direct, PLAIN, None, 20, 1)
        _phase(via, PLAIN, key, 20, 1)
        gateway_cpu = gateway_calls = 0.0
        for index in range(args.rounds):
            row: dict[str, Any] = {}
            order = ("direct", "via") if index % 2 == 0 else ("via", "direct")
            for side in order:
                url, side_key = (direct, None) if side == "direct" else (via, key)
                before = cpu_seconds(pid)
                sim.set_timing(ZERO_TIME)
                row[f"{side}_plain"] = _phase(url, PLAIN, side_key, args.rate, args.seconds)
                sim.set_timing(STREAM_TIME)
                row[f"{side}_stream"] = _phase(
                    url, STREAM, side_key, args.stream_rate, args.seconds
                )
                if side == "via":
                    gateway_cpu += cpu_seconds(pid) - before
                    gateway_calls += row["via_plain"]["n"] + row["via_stream"]["n"]
            rounds.append(row)
        memory = _memory_curve(via, key, pid, args.memory_calls)
    return {"rounds": rounds, "cpu_per_1000": gateway_cpu / gateway_calls * 1000, "memory": memory}


def _memory_curve(url: str, key: str, pid: int, calls: int) -> list[tuple[int, float]]:
    """Resident memory of the gateway after each tenth of `calls` short calls."""
    body = {"model": "tiny", "messages": QUESTION, "max_tokens": 16}
    headers = {"Authorization": f"Bearer {key}"}
    points = [(0, rss_mib(pid))]
    step = max(1, calls // 10)
    for done in range(step, calls + 1, step):
        asyncio.run(closed_loop(url, body, headers, 32, step))
        points.append((done, rss_mib(pid)))
    return points


def _added(rounds: list[dict[str, Any]], kind: str, metric: str) -> float:
    return median([r[f"via_{kind}"][metric] - r[f"direct_{kind}"][metric] for r in rounds])


def _side(rounds: list[dict[str, Any]], side: str, kind: str, metric: str) -> float:
    return median([r[f"{side}_{kind}"][metric] for r in rounds])


def report(args: argparse.Namespace, result: dict[str, Any]) -> str:
    """The markdown section for docs/benchmarks.md."""
    rounds = result["rounds"]
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    errors = sum(r[k]["errors"] for r in rounds for k in r)
    lines = [
        f"### {stamp}",
        "",
        f"Machine: {describe()}",
        "",
        f"Command: `python -m bench.gateway_overhead --rate {args.rate} --stream-rate "
        f"{args.stream_rate} --seconds {args.seconds} --rounds {args.rounds} --memory-calls "
        f"{args.memory_calls}`; medians of {args.rounds} alternating rounds; {errors} errors.",
        "",
        "| workload | metric | direct ms | via gateway ms | added ms | ratio |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for kind, label, metrics in (
        ("plain", f"non-streaming @ {args.rate:g} rps", ("p50", "p99")),
        (
            "stream",
            f"streaming @ {args.stream_rate:g} rps",
            ("ttft_p50", "ttft_p99", "itl_p50", "p50"),
        ),
    ):
        for metric in metrics:
            d, v = _side(rounds, "direct", kind, metric), _side(rounds, "via", kind, metric)
            lines.append(
                f"| {label} | {metric} | {d:.2f} | {v:.2f} | {_added(rounds, kind, metric):.2f} "
                f"| {v / d if d else float('nan'):.2f} |"
            )
    memory = result["memory"]
    first = next((m for n, m in memory if n >= memory[-1][0] // 10), memory[0][1])
    lines += [
        "",
        f"Gateway CPU: {result['cpu_per_1000']:.2f} s per 1,000 calls (recording to Postgres, "
        "top-5 logprobs captured).",
        f"Gateway resident memory over {memory[-1][0]:,} calls: "
        + ", ".join(f"{n:,}: {m:.0f} MiB" for n, m in memory)
        + f" (from the first tenth to the end: {(memory[-1][1] / first - 1) * 100:+.1f}%).",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run, print and record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200.0, help="non-streaming requests/s")
    parser.add_argument("--stream-rate", type=float, default=25.0, help="streams started/s")
    parser.add_argument("--seconds", type=float, default=5.0, help="per phase")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--memory-calls", type=int, default=100_000)
    parser.add_argument("--smoke", action="store_true", help="a few seconds, nothing recorded")
    args = parser.parse_args()
    if args.smoke:
        args.rate, args.stream_rate, args.seconds, args.rounds, args.memory_calls = 20, 5, 1, 1, 200
    section = report(args, measure(args))
    print(section)
    if not args.smoke:
        record_section("Gateway overhead", "gateway-overhead", section)


if __name__ == "__main__":
    main()
