"""`python -m bench.vllm_serve`: streams timed by vLLM's own benchmark client, four sides.

Starts the real vLLM (CPU build, the tiny model, as tests/vllm do) pinned to one CPU, and in
front of it nginx (one worker, no buffering) and a Plumbline gateway recording every call to
Postgres with top-5 logprob capture; everything but vLLM runs on the other CPUs. Then, sides
rotated in every round, vLLM's serving benchmark client (`vllm bench serve`, through
scripts/vllm-bench-serve) sends its random dataset at a fixed Poisson rate to: vLLM directly;
vLLM directly with the top-5 logprobs the gateway asks for; nginx with them; and Plumbline.
Records TTFT, TPOT, ITL and end-to-end percentiles against nginx-with-logprobs, and the
gateway's and recorder's CPU per token, in docs/benchmarks.md. `--smoke` runs a few calls.
"""

from __future__ import annotations

import argparse
import os

from bench.harness.header import section_header
from bench.harness.record import DOC, publish
from bench.proxies.installed import nginx_version, vllm_version
from bench.vllm_serve.cores import CorePlan, plan_cores
from bench.vllm_serve.measure import ServeRun, measure, workload
from bench.vllm_serve.report import SLUG, TITLE, serve_section
from bench.vllm_serve.sides import SIDES
from plumbline.otlp.settings import trace_export_settings


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; `--smoke` shrinks the run to a few calls per side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", default=",".join(SIDES), help="comma-separated")
    parser.add_argument("--requests", type=int, default=320, help="per side and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rate", type=float, default=8.0, help="requests/s (Poisson)")
    parser.add_argument("--input-len", type=int, default=48, help="prompt tokens")
    parser.add_argument("--output-len", type=int, default=32, help="tokens out (ignore_eos)")
    parser.add_argument("--warmups", type=int, default=4, help="client warm-up calls per run")
    parser.add_argument("--idle-s", type=float, default=20.0, help="gateway idle CPU reading")
    parser.add_argument("--no-pin", action="store_true", help="leave every process unpinned")
    parser.add_argument("--busy", default=None, help="a note on what else ran on the machine")
    parser.add_argument("--doc", default=str(DOC), help="where to record the section")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--smoke", action="store_true", help="a few calls per side, for CI")
    args = parser.parse_args(argv)
    unknown = set(args.sides.split(",")) - set(SIDES)
    if unknown:
        parser.error(f"--sides: unknown {', '.join(sorted(unknown))}; choose from {SIDES}")
    if args.smoke:
        args.requests, args.rounds, args.warmups, args.idle_s = 4, 1, 1, 2.0
    return args


def config_lines(run: ServeRun, plan: CorePlan) -> list[str]:
    """What was measured: the workload, the sides' settings, the pinning as /proc showed it."""
    work = run.work
    tracing = "on" if trace_export_settings(os.environ).enabled else "off"
    held = ", ".join(map(str, sorted(run.vllm_cpus))) or "unknown"
    return [
        f"Workload: vLLM's client (`vllm bench serve` {vllm_version()}, `--backend openai-chat`, "
        f"`/v1/chat/completions`), random dataset, {work.input_len} prompt tokens, "
        f"{work.output_len} tokens out (`--ignore-eos`), temperature 0, Poisson arrivals at "
        f"{work.rate:g} requests/s, {work.requests} requests per side and round after "
        f"{work.warmups} warm-up calls, seed {work.seed}, {len(run.runs)} runs; sides rotated "
        "each round.",
        "",
        "Sides: vLLM (CPU build, the tiny random-weight Llama the tests use, scripts/vllm-server) "
        "directly; directly with `logprobs: true, top_logprobs: 5` in every body (what the "
        "gateway asks for); nginx (one worker, upstream keep-alive, `proxy_buffering off`, no "
        "access log) with the same logprobs, the floor a proxy hop costs and the baseline; "
        "Plumbline sent the client's bodies as they are: the gateway asks vLLM for the top-5 "
        "logprobs, records them and strips them from what the client gets.",
        "",
        f"Plumbline: `plumbline gateway` with 1 worker, recording every call to Postgres "
        f"(recorder process, default batching), top-5 logprob capture, tracing {tracing}, "
        "health checks every 5 s.",
        "",
        f"CPUs: {plan.describe()}; vLLM's processes were allowed CPU {held} as /proc read "
        "them during the run.",
    ]


def main(argv: list[str] | None = None) -> str:
    """Run, print and record; returns the section."""
    args = parse(argv)
    plan = plan_cores(enabled=not args.no_pin)
    work = workload(args.requests, args.rate, args.input_len, args.output_len, args.warmups)
    run = measure(args.sides.split(","), work, args.rounds, plan, args.idle_s)
    tools = (f"vLLM {vllm_version()} (CPU)", f"nginx {nginx_version().removeprefix('nginx/')}")
    header = section_header("bench.vllm_serve", [], tools=tools, busy=args.busy)
    section = serve_section(header, config_lines(run, plan), run)
    return publish(TITLE, SLUG, section, args)


if __name__ == "__main__":
    main()
