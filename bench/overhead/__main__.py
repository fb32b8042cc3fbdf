"""`python -m bench.overhead`: direct vs nginx vs LiteLLM proxy vs Plumbline, one request mix.

Starts one simulator (200-token answers with top-5 logprobs) and, in front of it, nginx as a
plain reverse proxy, the LiteLLM proxy and a Plumbline gateway recording every call to Postgres
with logprob capture on. Then, sides alternating in every round: a step-up open-loop search for
each side's maximum sustained rate, latency phases at fixed rates (non-streaming and streaming),
CPU per call from /proc, and resident memory over many calls. Records the section in
docs/benchmarks.md. `--smoke` runs everything tiny (CI keeps the scenario from rotting).
`--call-kinds responses,embeddings` runs, instead, the added latency of those call kinds against
direct and nginx (bench/overhead/call_kinds.py), recorded in its own section. `--tracing` runs,
instead, the same latency phases and a closed loop on gateways with tracing off and with every
call sampled, the collector live, down or hung (bench/overhead/tracing.py), in its own section.
`--governance` runs, instead, latency phases on gateways with scopes, model lists, budgets and
shedding off and on (bench/overhead/governance.py), in its own section.
"""

from __future__ import annotations

import argparse
import os
from contextlib import ExitStack

from bench.harness.header import section_header
from bench.harness.record import DOC, publish
from bench.harness.stats import median
from bench.harness.step_search import SearchResult, SearchRules
from bench.overhead.call_kinds import KIND_NAMES, KIND_SIDES, measure_kinds
from bench.overhead.call_kinds_report import TITLE as KINDS_TITLE
from bench.overhead.call_kinds_report import kinds_section
from bench.overhead.capacity import capacity_rounds
from bench.overhead.figures import OverheadRun
from bench.overhead.governance_scenario import run_governance
from bench.overhead.latency import Phase, latency_rounds
from bench.overhead.memory import memory_curves
from bench.overhead.profiling import profile_side
from bench.overhead.report import overhead_section
from bench.overhead.tracing import Load, measure_tracing
from bench.overhead.tracing_report import TITLE as TRACING_TITLE
from bench.overhead.tracing_report import tracing_section
from bench.overhead.tracing_sides import TRACING_SIDES, tracing_env
from bench.overhead.workers import run_workers
from bench.overhead.workload import ZERO_TIME
from bench.proxies.installed import litellm_version, nginx_version
from bench.proxies.sides import SIDES, start_sides
from plumbline.otlp.settings import trace_export_settings
from simulator.process import SimulatorProcess

NOTES = [
    "Sides: the simulator on loopback; nginx (Debian package, one worker, upstream keep-alive, "
    "`proxy_buffering off`, no access log); the LiteLLM proxy with its default settings "
    "(`model: openai/tiny`, no database so no spend logs or key tracking, no callbacks, "
    "uvicorn's access log on as it ships, one worker, offline cost map); Plumbline recording "
    "every call to Postgres with top-5 logprob capture (default batching). Every request asks "
    "for 200 tokens (`ignore_eos`) with `logprobs` and `top_logprobs: 5`, seeded; added "
    "latency is the median over rounds of (side - direct) within the same round.",
]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; `--smoke` shrinks everything to seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", default=",".join(SIDES), help="comma-separated")
    parser.add_argument("--light-rate", type=float, default=5.0, help="non-streaming rps")
    parser.add_argument("--load-rate", type=float, default=200.0, help="non-streaming rps")
    parser.add_argument("--light-streams", type=float, default=2.0, help="streams/s")
    parser.add_argument("--load-streams", type=float, default=25.0, help="streams/s")
    parser.add_argument("--seconds", type=float, default=8.0, help="per latency phase")
    parser.add_argument("--rounds", type=int, default=5, help="latency rounds")
    parser.add_argument("--capacity-rounds", type=int, default=3)
    parser.add_argument("--step-seconds", type=float, default=4.0)
    parser.add_argument("--start-rate", type=float, default=2.0)
    parser.add_argument("--ceiling", type=float, default=2560.0)
    parser.add_argument("--refinements", type=int, default=3)
    parser.add_argument("--memory-calls", type=int, default=100_000)
    parser.add_argument("--memory-budget-s", type=float, default=900.0, help="per side")
    parser.add_argument("--profile", action="store_true", help="py-spy Plumbline at load")
    parser.add_argument("--busy", default=None, help="a note on what else ran on the machine")
    parser.add_argument("--doc", default=str(DOC), help="where to record the section")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI")
    parser.add_argument(
        "--call-kinds", default=None, help=f"instead: added latency of {','.join(KIND_NAMES)}"
    )
    parser.add_argument("--kind-rate", type=float, default=5.0, help="call kinds: plain rps")
    parser.add_argument("--kind-streams", type=float, default=2.0, help="call kinds: streams/s")
    parser.add_argument("--tracing", action="store_true", help="instead: tracing on vs off")
    parser.add_argument("--governance", action="store_true", help="instead: governance on/off")
    parser.add_argument("--check-calls", type=int, default=5000, help="governance: checks timed")
    parser.add_argument(
        "--workers-capacity", action="store_true", help="instead: --workers 1 vs 2 capacity"
    )
    parser.add_argument(
        "--tracing-sides", default=",".join(TRACING_SIDES), help="tracing: comma-separated"
    )
    parser.add_argument("--closed-rounds", type=int, default=3, help="tracing: closed loops")
    parser.add_argument("--closed-workers", type=int, default=32, help="tracing: concurrency")
    parser.add_argument("--closed-calls", type=int, default=5000, help="tracing: per loop")
    args = parser.parse_args(argv)
    unknown = set((args.call_kinds or "").split(",")) - set(KIND_NAMES) - {""}
    if unknown:
        parser.error(f"--call-kinds: unknown {', '.join(sorted(unknown))}")
    if args.smoke:
        args.light_rate, args.load_rate, args.light_streams, args.load_streams = 5, 20, 2, 4
        args.seconds, args.rounds, args.capacity_rounds, args.step_seconds = 1, 1, 1, 1
        args.start_rate, args.ceiling, args.refinements = 5, 10, 0
        args.memory_calls, args.memory_budget_s = 100, 60
        args.closed_rounds, args.closed_workers, args.closed_calls = 1, 4, 40
        args.check_calls = 50
    return args


def capacity_limits(capacity: dict[str, list[SearchResult]]) -> dict[str, float]:
    """Rates above which a side is not asked to run a latency phase (it would only queue)."""
    limits = {}
    for name, found in capacity.items():
        bound = any(r.client_bound for r in found) or not found
        limits[name] = float("inf") if bound else median([r.sustained for r in found])
    return limits


def measure(args: argparse.Namespace) -> OverheadRun:
    """Start the sides, then capacity, latency and memory, sides alternating."""
    names = tuple(args.sides.split(","))
    phases = [
        Phase("plain", args.light_rate),
        Phase("plain", args.load_rate),
        Phase("stream", args.light_streams),
        Phase("stream", args.load_streams),
    ]
    rules = SearchRules(start=args.start_rate, ceiling=args.ceiling, refinements=args.refinements)
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess({"timing": ZERO_TIME}))
        sides = start_sides(exits, simulator, names)
        capacity = capacity_rounds(simulator, sides, args.capacity_rounds, args.step_seconds, rules)
        latency = latency_rounds(
            simulator, sides, phases, args.rounds, args.seconds, capacity_limits(capacity)
        )
        memory = memory_curves(simulator, sides, args.memory_calls, args.memory_budget_s)
        profile = []
        if args.profile:
            gateway = next(side for side in sides if side.name == "plumbline")
            profile = profile_side(simulator, gateway, phases, args.seconds)
    return OverheadRun(list(names), phases, latency, capacity, memory, profile)


KIND_NOTES = [
    "Sides: two simulators on loopback (generate for Responses, `runner: pooling` for "
    "embeddings), nginx in front of each (one worker, upstream keep-alive, no buffering), "
    "and one Plumbline gateway serving both models, recording every call to Postgres "
    "(default batching; it captures top-5 logprobs of Responses calls as of chat). "
    "Responses calls ask for 200 tokens (`ignore_eos`, seeded); streamed ones decode at "
    "5 ms a token, plain ones and embeddings take no model time. Added latency is the median "
    "over rounds of (side - direct) within the same round; the ratio is the side's median "
    "p50 (or TTFT) over direct's.",
]


def run_call_kinds(args: argparse.Namespace) -> str:
    """The call-kind scenario: measure, print and record its own section."""
    cases = [case for kind in args.call_kinds.split(",") for case in KIND_NAMES[kind]]
    asked = tuple(args.sides.split(","))
    names = tuple(s for s in KIND_SIDES if s in asked) if asked != SIDES else KIND_SIDES
    rates = {"plain": args.kind_rate, "stream": args.kind_streams}
    run = measure_kinds(cases, names, rates, args.rounds, args.seconds)
    tools = (f"nginx {nginx_version().removeprefix('nginx/')}",)
    header = section_header("bench.overhead", KIND_NOTES, tools=tools, busy=args.busy)
    return publish(KINDS_TITLE, "overhead-kinds", kinds_section(header, run), args)


TRACING_NOTES = [
    "Sides: one Plumbline gateway per side in front of one simulator, each recording every "
    "call to Postgres with top-5 logprob capture (default batching), differing only in their "
    "OTEL_* variables: no endpoint (off), or `OTEL_TRACES_SAMPLER=always_on` and a span per "
    "call exported to a live OTLP/HTTP receiver in the bench process, to a loopback port where "
    "nothing listens (connection refused), or to one that accepts and never answers. "
    "Requests as in the overhead section; added latency is the median over rounds of "
    "(side - off) within the same round, ratios are medians over off's.",
]


def run_tracing(args: argparse.Namespace) -> str:
    """The tracing scenario: measure, print and record its own section."""
    names = tuple(args.tracing_sides.split(","))
    if "off" not in names:
        raise SystemExit("--tracing-sides must include off: every figure is against it")
    phases = [
        Phase("plain", args.light_rate),
        Phase("plain", args.load_rate),
        Phase("stream", args.light_streams),
        Phase("stream", args.load_streams),
    ]
    closed = (args.closed_rounds, args.closed_workers, args.closed_calls)
    load = Load(phases, args.rounds, args.seconds, *closed)
    # The batch settings the traced sides run with, read as their gateways read them.
    traced = tracing_env("http://127.0.0.1:1", os.environ)
    settings = trace_export_settings({**os.environ, **traced})
    run = measure_tracing(names, load, settings)
    header = section_header("bench.overhead", TRACING_NOTES, busy=args.busy)
    return publish(TRACING_TITLE, "overhead-tracing", tracing_section(header, run), args)


def main(argv: list[str] | None = None) -> str:
    """Run, print and record; returns the section."""
    args = parse(argv)
    if args.call_kinds:
        return run_call_kinds(args)
    if args.tracing:
        return run_tracing(args)
    if args.governance:
        return run_governance(args)
    if args.workers_capacity:
        return run_workers(args)
    tools = (f"nginx {nginx_version().removeprefix('nginx/')}", f"litellm {litellm_version()}")
    header = section_header("bench.overhead", NOTES, tools=tools, busy=args.busy)
    section = overhead_section(header, measure(args), args)
    title = "Overhead: direct, nginx, LiteLLM proxy, Plumbline"
    return publish(title, "overhead", section, args)


if __name__ == "__main__":
    main()
