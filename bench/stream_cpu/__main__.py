"""`python -m bench.stream_cpu`: CPU per streamed token of the gateway (and nginx) on the simulator.

Streams `--calls` chat calls (`--tokens` each, top-5 logprobs, usage chunk) `--workers` at a
time through each side in front of one simulator stepping `--step-ms` per token, and prints
the side's CPU per token and per call: the gateway's own process, and its children (the
recorder). `--strace` counts the gateway's syscalls per token; `--profile` samples it with
py-spy. Rounds alternate between sides, so a busy shared machine hits both alike.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path

from bench.harness.profile import hotspot_lines, hotspots, recording
from bench.proxies.sides import Side, start_sides
from bench.stream_cpu.measure import (
    CpuRun,
    gateway_overheads,
    run_calls,
    strace_counts,
    stream_body,
    syscall_counts,
)
from simulator.process import SimulatorProcess


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.stream_cpu")
    parser.add_argument("--sides", default="plumbline", help="comma list: plumbline,nginx")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--step-ms", type=float, default=1.0)
    parser.add_argument("--top-logprobs", type=int, default=5)
    parser.add_argument("--strace", action="store_true", help="count the gateway's syscalls")
    parser.add_argument("--profile", action="store_true", help="py-spy the gateway")
    return parser.parse_args()


def _line(side: Side, run: CpuRun) -> str:
    gaps = [g for s in run.samples for g in s.gaps]
    itl = statistics.median(gaps) * 1000 if gaps else float("nan")
    return (
        f"{side.name:10} main {run.per_token_us(run.main_s):7.1f} us/token "
        f"{run.per_call_us(run.main_s):8.0f} us/call "
        f"(sys {run.per_call_us(run.main_sys_s):6.0f}) | children "
        f"{run.per_token_us(run.children_s):7.1f} us/token "
        f"{run.per_call_us(run.children_s):8.0f} us/call | database "
        f"{run.per_call_us(run.database_s):6.0f} us/call | ITL p50 {itl:.3f} ms"
    )


def main() -> None:
    """Run the rounds and print them, then the medians."""
    args = _arguments()
    timing = {
        "prefill_ms_per_token": 0.0,
        "decode_ms_per_token": args.step_ms,
        "decode_ms_per_extra_seq": 0.0,
        "max_num_seqs": 4096,
    }
    request = stream_body(args.tokens, args.top_logprobs)
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess({"timing": timing}))
        sides = start_sides(exits, simulator, tuple(args.sides.split(",")))
        for side in sides:
            run_calls(side, request, args.tokens, 20, args.workers)  # warm up
        runs: dict[str, list[CpuRun]] = {side.name: [] for side in sides}
        for round_number in range(args.rounds):
            for side in sides:
                run = run_calls(side, request, args.tokens, args.calls, args.workers)
                runs[side.name].append(run)
                print(f"round {round_number + 1} {_line(side, run)}", flush=True)
        for side in sides:
            mains = [r.per_token_us(r.main_s) for r in runs[side.name]]
            kids = [r.per_token_us(r.children_s) for r in runs[side.name]]
            print(
                f"median {side.name:10} main {statistics.median(mains):7.1f} us/token, "
                f"children {statistics.median(kids):7.1f} us/token"
            )
        gateway = next((s for s in sides if s.name == "plumbline"), None)
        if gateway is not None:
            overheads = sorted(gateway_overheads(gateway, request, args.calls))
            print(
                f"gateway overhead before the upstream request (x-plumbline-overhead-ms): "
                f"p50 {statistics.median(overheads):.3f} ms, "
                f"p90 {overheads[int(len(overheads) * 0.9)]:.3f} ms"
            )
        if gateway is not None and args.strace:
            _strace(gateway, request, args)
        if gateway is not None and args.profile:
            _profile(gateway, request, args)


def _strace(side: Side, request: object, args: argparse.Namespace) -> None:
    output = Path(tempfile.mkdtemp(prefix="plumbline-strace-")) / "summary.txt"
    with strace_counts(side.pid, output):
        run_calls(side, request, args.tokens, args.calls, args.workers)  # type: ignore[arg-type]
    tokens = args.calls * args.tokens
    counts = syscall_counts(output)
    print(f"syscalls per token ({tokens} tokens; {output}):")
    for name, count in sorted(counts.items(), key=lambda item: -item[1])[:12]:
        print(f"  {name:20} {count / tokens:6.2f}")
    print(f"  {'all':20} {sum(counts.values()) / tokens:6.2f}")


def _profile(side: Side, request: object, args: argparse.Namespace) -> None:
    output = Path(tempfile.mkdtemp(prefix="plumbline-spy-")) / "gateway.txt"
    with recording(side.pid, output, rate=500):
        run_calls(side, request, args.tokens, args.calls, args.workers)  # type: ignore[arg-type]
    print(f"py-spy, by own samples ({output}):")
    print("\n".join(hotspot_lines(hotspots(output, top=25, by_own=True))))


if __name__ == "__main__":
    main()
