"""The overhead scenario's markdown section: tables per workload, capacity, cost, targets."""

from __future__ import annotations

import math
from typing import Any

from bench.harness.profile import hotspot_lines
from bench.harness.stats import ratio
from bench.harness.verdict import verdict_table
from bench.overhead.figures import OverheadRun, added, figure, flat_change, sustained
from bench.overhead.targets import overhead_verdicts
from bench.proxies.sides import LABELS


def _f(value: float, digits: int = 2) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _times(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}x"


def _errors(run: OverheadRun, side: str, phase: str) -> int:
    rounds = run.latency.rounds
    return int(sum(r[side][phase]["errors"] for r in rounds if phase in r.get(side, {})))


def _plain_table(run: OverheadRun) -> list[str]:
    lines = [
        "| side | rate | p50 ms | p99 ms | added p50 ms | added p99 ms | p50 vs direct | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for phase in (p for p in run.phases if p.kind == "plain"):
        for side in run.sides:
            if phase.key in run.latency.skipped[side]:
                lines.append(f"| {LABELS[side]} | {phase.rate:g} | above its capacity |||||")
                continue
            p50, p99 = figure(run, side, phase.key, "p50"), figure(run, side, phase.key, "p99")
            direct = figure(run, "direct", phase.key, "p50")
            lines.append(
                f"| {LABELS[side]} | {phase.rate:g} | {_f(p50)} | {_f(p99)} "
                f"| {_f(added(run, side, phase.key, 'p50'))} "
                f"| {_f(added(run, side, phase.key, 'p99'))} | {_f(ratio(p50, direct))}x "
                f"| {_errors(run, side, phase.key)} |"
            )
    return lines


def _stream_table(run: OverheadRun) -> list[str]:
    lines = [
        "| side | streams/s | TTFT p50 ms | TTFT p99 ms | added TTFT p50 | ITL p50 ms "
        "| ITL p99 ms | added ITL p50 | added ITL p99 | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for phase in (p for p in run.phases if p.kind == "stream"):
        for side in run.sides:
            if phase.key in run.latency.skipped[side]:
                lines.append(f"| {LABELS[side]} | {phase.rate:g} | above its capacity ||||||||")
                continue
            cells = [figure(run, side, phase.key, m) for m in ("ttft_p50", "ttft_p99")]
            cells.append(added(run, side, phase.key, "ttft_p50"))
            cells += [figure(run, side, phase.key, m) for m in ("itl_p50", "itl_p99")]
            cells += [added(run, side, phase.key, m) for m in ("itl_p50", "itl_p99")]
            lines.append(
                f"| {LABELS[side]} | {phase.rate:g} | "
                + " | ".join(_f(c, 3 if i >= 3 else 2) for i, c in enumerate(cells))
                + f" | {_errors(run, side, phase.key)} |"
            )
    return lines


def _capacity_table(run: OverheadRun) -> list[str]:
    lines = [
        "| side | max sustained rps (median) | each round | stopped by (last round) "
        "| vs direct | vs LiteLLM |",
        "| --- | ---: | --- | --- | ---: | ---: |",
    ]
    for side in run.sides:
        found = run.capacity.get(side, [])
        if not found:
            continue
        rate = sustained(run, side)
        bound = "≥ " if any(r.client_bound for r in found) else ""
        lines.append(
            f"| {LABELS[side]} | {bound}{rate:.0f} | "
            + ", ".join(f"{r.sustained:.0f}" for r in found)
            + f" | {found[-1].limit_reason} | {_times(ratio(rate, sustained(run, 'direct')))} "
            f"| {_times(ratio(rate, sustained(run, 'litellm')))} |"
        )
    return lines


def _cost_table(run: OverheadRun) -> list[str]:
    lines = [
        "| side | CPU s / 1,000 non-streaming | CPU s / 1,000 streams | RSS at start MiB "
        "| RSS after first tenth | RSS at end | change |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for side in run.sides:
        cpu = run.latency.cpu.get(side, {})
        per = [ratio(cpu[k][0], cpu[k][1]) * 1000 for k in ("plain", "stream")] if cpu else []
        curve = run.memory.get(side)
        if curve is None or len(curve.points) < 2:
            memory = "| | | |"
        else:
            tenth, end = curve.points[1], curve.points[-1]
            memory = (
                f"| {curve.points[0][1]:.0f} | {tenth[1]:.0f} ({tenth[0]:,} calls) "
                f"| {end[1]:.0f} ({end[0]:,} calls{', budget' if curve.cut_short else ''}) "
                f"| {flat_change(curve) * 100:+.1f}% |"
            )
        lines.append(f"| {LABELS[side]} | " + " | ".join(_f(p, 3) for p in per) + f" {memory}")
    return lines


def overhead_section(header: list[str], run: OverheadRun, args: Any) -> str:
    """The dated section for docs/benchmarks.md."""
    lines = [*header, "", "Non-streaming, zero model time:", "", *_plain_table(run)]
    lines += ["", "Streaming, model ITL 5 ms:", "", *_stream_table(run)]
    if run.capacity:
        lines += [
            "",
            f"Maximum sustained rate, half streaming, every call 200 x 2 ms of model time "
            f"({args.capacity_rounds} alternating rounds, {args.step_seconds:g} s steps):",
            "",
            *_capacity_table(run),
        ]
    lines += ["", "Process cost (the proxy's process tree; the simulator for direct):", ""]
    lines += _cost_table(run)
    lines += ["", "Targets:", "", *verdict_table(overhead_verdicts(run))]
    if run.profile:
        lines += ["", "Plumbline's gateway under the loaded phases (py-spy, all threads):", ""]
        lines += hotspot_lines(run.profile)
    return "\n".join(lines) + "\n"
