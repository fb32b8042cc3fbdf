"""`python -m bench.overhead --workers-capacity`: capacity of `--workers 1` against `--workers 2`.

Two Plumbline gateways in front of one simulator, identical but for `--workers`, both with
their rate limits in Redis (a pool refuses memory limits) and recording every call to Postgres.
Each round runs the overhead benchmark's step-up capacity search on each, alternating.
"""

from __future__ import annotations

import argparse
import uuid
from contextlib import ExitStack

from bench.harness.header import section_header
from bench.harness.record import publish
from bench.harness.stats import median
from bench.harness.step_search import SearchResult, SearchRules
from bench.overhead.capacity import capacity_rounds
from bench.overhead.workload import ZERO_TIME
from bench.proxies.sides import Side, plumbline_config
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, issue_key

TITLE = "Gateway workers"
WORKER_COUNTS = (1, 2)
REDIS = "redis://127.0.0.1:6379/0"
NOTES = [
    "Sides: `plumbline gateway --workers 1` and `--workers 2`, otherwise identical, in front "
    "of one simulator (200 tokens a call, 2 ms a token of model time as in the capacity "
    "search above), each recording every call to Postgres with top-5 logprob capture, rate "
    "limits in Redis. Capacity: the overhead benchmark's step-up open-loop search (half "
    "streaming), sides alternating. Scaling efficiency = sustained(2) / (2 x sustained(1)).",
]


def _pool_side(exits: ExitStack, simulator: SimulatorProcess, workers: int) -> Side:
    database = exits.enter_context(postgres_database("plumbline_bench_workers"))
    config = plumbline_config(simulator.base_url)
    config["limits"] = {"rate_limits": {"store": "redis"}}
    env = {
        "PLUMBLINE_REDIS__URL": REDIS,
        "PLUMBLINE_WORKER__KEY_PREFIX": f"plumbline-bench-workers-{uuid.uuid4().hex[:8]}:",
        "PLUMBLINE_KEY_INVALIDATION__CHANNEL": "redis",
    }
    gateway = GatewayProcess(config, database, env, args=("--workers", str(workers)))
    exits.enter_context(gateway)
    key = issue_key(database, "bench")
    assert gateway.process is not None
    headers = {"Authorization": f"Bearer {key}"}
    return Side(f"workers-{workers}", f"{gateway.url}/v1/chat/completions", headers)


def measure_workers(args: argparse.Namespace) -> dict[str, list[SearchResult]]:
    """Capacity rounds of each worker count."""
    rules = SearchRules(start=args.start_rate, ceiling=args.ceiling, refinements=args.refinements)
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess({"timing": ZERO_TIME}))
        sides = [_pool_side(exits, simulator, count) for count in WORKER_COUNTS]
        return capacity_rounds(simulator, sides, args.capacity_rounds, args.step_seconds, rules)


def workers_section(header: list[str], found: dict[str, list[SearchResult]]) -> str:
    """The section: sustained rate per worker count, per round and median, and efficiency."""
    lines = [*header, "", "| workers | sustained calls/s (median) | rounds | limited by |"]
    lines.append("| --- | --- | --- | --- |")
    medians = {}
    for name, results in found.items():
        medians[name] = median([r.sustained for r in results])
        rounds = ", ".join(f"{r.sustained:.0f}" for r in results)
        reasons = ", ".join(sorted({r.limit_reason for r in results}))
        lines.append(
            f"| {name.removeprefix('workers-')} | {medians[name]:.0f} | {rounds} | {reasons} |"
        )
    one, two = medians["workers-1"], medians["workers-2"]
    efficiency = two / (2 * one) if one else 0.0
    lines += ["", f"Speed-up {two / one if one else 0:.2f}x; scaling efficiency {efficiency:.2f}."]
    return "\n".join(lines) + "\n"


def run_workers(args: argparse.Namespace) -> str:
    """The workers scenario: measure, print and record its own section."""
    header = section_header("bench.overhead", NOTES, busy=args.busy)
    return publish(TITLE, "overhead-workers", workers_section(header, measure_workers(args)), args)
