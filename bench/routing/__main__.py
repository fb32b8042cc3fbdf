"""`python -m bench.routing`: prefix affinity against least-in-flight over simulator backends.

Starts several simulators (one process each; prefill priced per uncached prompt token, a
bounded prefix cache) and Postgres, then alternates a gateway routing by `least_in_flight`
and one routing by `prefix_affinity` over the same workload: calls on a few long shared
documents with fresh questions. Reports the backends' prefix-cache hit rate, the client's
TTFT p50/p99 and the calls' balance over backends. Records the section in docs/benchmarks.md;
`--smoke` runs seconds.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack

from bench.harness.header import section_header
from bench.harness.record import DOC, publish
from bench.routing.fleet import Phase, run_phase, simulator_config
from bench.routing.report import AFFINITY, LEAST, routing_section
from bench.routing.workload import requests
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import issue_key

TITLE = "Routing over a fleet: prefix affinity against least-in-flight"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; `--smoke` shrinks everything to seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", type=int, default=3)
    parser.add_argument("--documents", type=int, default=12)
    parser.add_argument("--sections", type=int, default=60, help="document length / 33 tokens")
    parser.add_argument("--calls", type=int, default=300, help="per phase")
    parser.add_argument("--rate", type=float, default=10.0, help="calls/s, open loop")
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--prefill-ms", type=float, default=0.1, help="per uncached token")
    parser.add_argument("--decode-ms", type=float, default=10.0)
    parser.add_argument("--max-num-seqs", type=int, default=32)
    parser.add_argument("--cache-blocks", type=int, default=800, help="per backend")
    parser.add_argument("--load-margin", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--busy", default=None, help="a note on what else ran on the machine")
    parser.add_argument("--doc", default=str(DOC), help="where to record the section")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI")
    args = parser.parse_args(argv)
    if args.smoke:
        args.documents, args.sections, args.calls, args.rate, args.rounds = 4, 20, 24, 12.0, 1
    return args


def measure(args: argparse.Namespace) -> list[Phase]:
    """Each round: least-in-flight, then prefix affinity, on the same calls and backends."""
    calls = requests(args.documents, args.sections, args.calls, args.max_tokens, args.seed)
    phases = []
    with ExitStack() as stack:
        fleet = [
            stack.enter_context(SimulatorProcess(simulator_config(args)))
            for _ in range(args.backends)
        ]
        database = stack.enter_context(postgres_database("plumbline_bench_routing"))
        key = issue_key(database, "bench-routing")
        for _ in range(args.rounds):
            for policy in (LEAST, AFFINITY):
                phase = run_phase(fleet, policy, calls, database, key, args)
                print(f"{policy}: served {phase.served}, hits {phase.hits:.0f}", flush=True)
                phases.append(phase)
    return phases


def main(argv: list[str] | None = None) -> None:
    """Measure and record."""
    args = parse(argv)
    phases = measure(args)
    header = section_header("bench.routing", [], busy=args.busy)
    publish(TITLE, "routing", routing_section(header, phases, args), args)


if __name__ == "__main__":
    main()
