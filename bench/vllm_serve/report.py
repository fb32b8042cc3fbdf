"""The section of docs/benchmarks.md: vLLM's own figures per side, against nginx with logprobs."""

from __future__ import annotations

import math
from collections.abc import Callable

from bench.harness.stats import median, ratio
from bench.harness.verdict import verdict_table
from bench.vllm_serve.client import METRICS
from bench.vllm_serve.measure import ServeRun, SideRun
from bench.vllm_serve.sides import BASELINE, LABELS
from bench.vllm_serve.targets import NAMES, verdicts

STATS = ("p50", "p90", "p99", "mean")
TITLE = "Streams with vLLM's benchmark client"
SLUG = "vllm-serve"


def key(metric: str, stat: str) -> str:
    """The result JSON's key: `p90_itl_ms`, `mean_ttft_ms`."""
    return f"{stat}_{metric}_ms"


def _runs(run: ServeRun, side: str) -> list[SideRun]:
    return [r for r in run.runs if r.side == side]


def _paired(run: ServeRun, side: str, combine: Callable[[float, float], float], name: str) -> float:
    """Median over rounds of combine(side, baseline) within the same round."""
    values = []
    for mine in _runs(run, side):
        base = next((r for r in _runs(run, BASELINE) if r.round == mine.round), None)
        if base is not None:
            values.append(combine(mine.figure(name), base.figure(name)))
    return median(values)


def added(run: ServeRun, side: str, name: str) -> float:
    """The side's figure minus the baseline's, median over rounds (ms)."""
    return _paired(run, side, lambda a, b: a - b, name)


def _fmt(value: float, spec: str = ".2f") -> str:
    return "-" if math.isnan(value) else format(value, spec)


def metric_table(run: ServeRun, metric: str) -> list[str]:
    """One metric's p50/p90/p99/mean per side, and against nginx with logprobs."""
    head = " | ".join(STATS)
    diff = " | ".join(f"{s} - nginx" for s in STATS)
    lines = [
        f"**{NAMES[metric]}** (ms; medians over rounds; - nginx: the difference within a round)",
        "",
        f"| side | {head} | {diff} | p50 / nginx | p90 / nginx |",
        "| --- |" + " ---: |" * (2 * len(STATS) + 2),
    ]
    for side in run.sides:
        cells = [_fmt(median([r.figure(key(metric, s)) for r in _runs(run, side)])) for s in STATS]
        cells += [_fmt(added(run, side, key(metric, s)), "+.3f") for s in STATS]
        cells += [_fmt(_paired(run, side, ratio, key(metric, s)), ".3f") + "x" for s in STATS[:2]]
        lines.append(f"| {LABELS[side]} | " + " | ".join(cells) + " |")
    return lines


def throughput_table(run: ServeRun) -> list[str]:
    """Calls, failures and output token throughput per side."""
    lines = [
        "| side | calls completed | failed | output tokens/s | / nginx | duration s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for side in run.sides:
        runs = _runs(run, side)
        done = sum(int(r.figure("completed")) for r in runs)
        failed = sum(int(r.figure("failed")) for r in runs)
        rate = median([r.figure("output_throughput") for r in runs])
        share = _paired(run, side, ratio, "output_throughput")
        duration = median([r.figure("duration") for r in runs])
        lines.append(
            f"| {LABELS[side]} | {done:,} | {failed} | {_fmt(rate, '.1f')} | "
            f"{_fmt(share, '.3f')}x | {_fmt(duration, '.1f')} |"
        )
    return lines


def saturation_note(run: ServeRun) -> str:
    """Whether each side kept up with the offered token rate (else the figures are queueing)."""
    work = run.work
    offered = work.rate * work.output_len
    behind = [
        LABELS[side]
        for side in run.sides
        if median([r.figure("output_throughput") for r in _runs(run, side)]) < 0.95 * offered
    ]
    first = (
        f"Offered: {work.rate:g} requests/s x {work.output_len} tokens = {offered:g} tokens/s "
        f"over {work.requests / work.rate:g} s of arrivals."
    )
    if not behind:
        return f"{first} Every side kept up (output tokens/s within 5% of it)."
    return (
        f"{first} **Below it (saturated, so a queue grew and the latencies are mostly waiting "
        f"in vLLM's batch):** {'; '.join(behind)}."
    )


def rounds_table(run: ServeRun) -> list[str]:
    """Every run as measured, in the order it ran."""
    lines = [
        "| round | side | ITL p50 | ITL p90 | TPOT p50 | TTFT p50 | E2E p50 | output tokens/s |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in run.runs:
        cells = [key("itl", "p50"), key("itl", "p90"), key("tpot", "p50"), key("ttft", "p50")]
        figures = [_fmt(r.figure(name), ".3f") for name in [*cells, key("e2el", "p50")]]
        rate = _fmt(r.figure("output_throughput"), ".1f")
        row = " | ".join([str(r.round + 1), LABELS[r.side], *figures, rate])
        lines.append(f"| {row} |")
    return lines


def cpu_table(run: ServeRun) -> list[str]:
    """The gateway's and its recorder's CPU over each Plumbline run, per token and per call."""
    lines = [
        "| round | calls sent | recorded | tokens streamed | gateway CPU s | recorder CPU s "
        "| gateway µs/token | recorder µs/token | gateway µs/call | recorder µs/call |",
        "| ---: |" + " ---: |" * 9,
    ]
    per: dict[str, list[float]] = {"gt": [], "rt": [], "gc": [], "rc": []}
    for r in _runs(run, "plumbline"):
        if r.cpu is None:
            continue
        tokens = r.figure("total_output_tokens") + run.work.warmups * run.work.output_len
        row = {
            "gt": r.cpu.gateway / tokens * 1e6,
            "rt": r.cpu.recorder / tokens * 1e6,
            "gc": r.cpu.gateway / r.sent * 1e6,
            "rc": r.cpu.recorder / r.sent * 1e6,
        }
        for name, value in row.items():
            per[name].append(value)
        lines.append(
            f"| {r.round + 1} | {r.sent} | {r.recorded} | {tokens:,.0f} | {r.cpu.gateway:.2f} | "
            f"{r.cpu.recorder:.2f} | {row['gt']:.0f} | {row['rt']:.0f} | {row['gc']:,.0f} | "
            f"{row['rc']:,.0f} |"
        )
    medians = " | ".join(f"{median(per[n]):,.0f}" for n in ("gt", "rt", "gc", "rc"))
    lines.append(f"| median | | | | | | {medians} |")
    return lines


def idle_note(run: ServeRun) -> str:
    """The gateway's idle CPU, and the per-token figures with it taken off over each window."""
    if run.idle is None:
        return "Idle CPU not read (`--idle-s 0`)."
    idle = run.idle
    above: dict[str, list[float]] = {"gateway": [], "recorder": []}
    for r in _runs(run, "plumbline"):
        if r.cpu is None:
            continue
        tokens = r.figure("total_output_tokens") + run.work.warmups * run.work.output_len
        above["gateway"].append((r.cpu.gateway - idle.gateway * r.window_s) / tokens * 1e6)
        above["recorder"].append((r.cpu.recorder - idle.recorder * r.window_s) / tokens * 1e6)
    windows = ", ".join(f"{r.window_s:.0f}" for r in _runs(run, "plumbline"))
    return (
        f"Idle (read for {run.idle_s:g} s before the first round, nothing sent): the gateway "
        f"spent {idle.gateway * 1000:.1f} ms of CPU a second, its recorder "
        f"{idle.recorder * 1000:.1f} ms. Taken off over each run's window ({windows} s), "
        f"what is left per streamed token is {median(above['gateway']):,.0f} µs (gateway) and "
        f"{median(above['recorder']):,.0f} µs (recorder), medians over rounds."
    )


def plumbline_added(run: ServeRun) -> dict[tuple[str, str], float]:
    """Plumbline minus nginx with logprobs, for every metric and statistic."""
    return {(m, s): added(run, "plumbline", key(m, s)) for m in METRICS for s in STATS}


def serve_section(header: list[str], config: list[str], run: ServeRun) -> str:
    """The whole dated section."""
    lines = [*header, "", *config, ""]
    for metric in METRICS:
        lines += [*metric_table(run, metric), ""]
    lines += ["Throughput (medians over rounds):", "", *throughput_table(run), ""]
    lines += [saturation_note(run), ""]
    lines += ["Every run:", "", *rounds_table(run), ""]
    if "plumbline" in run.sides:
        lines += [
            "CPU of the gateway process and of its recorder process over each Plumbline run "
            "(the whole client run: its warm-up calls, and the seconds it spends loading its "
            "tokenizer while the gateway idles, are included; recorded counts the client's "
            "`/tokenize` probe too, which the gateway answers and records):",
            "",
            *cpu_table(run),
            "",
            idle_note(run),
            "",
        ]
        if BASELINE in run.sides:
            lines += ["Targets (Plumbline - nginx with logprobs, medians over rounds):", ""]
            lines += verdict_table(verdicts(plumbline_added(run)))
    return "\n".join(lines) + "\n"
