"""The tracing section: latency, closed-loop rate, CPU per call and span counters against off."""

from __future__ import annotations

import math

from bench.harness.stats import median, ratio
from bench.overhead.figures import OverheadRun, added, figure
from bench.overhead.tracing import TracingRun
from bench.overhead.tracing_sides import TRACING_LABELS

TITLE = "Overhead of tracing: every call sampled, collector live, down or hung"
BASE = "off"
DROP_ORDER = ("queue_full", "export_failed", "unbuildable")


def _f(value: float, digits: int = 2) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _times(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}x"


def _errors(run: TracingRun, side: str, phase: str) -> int:
    rounds = run.latency.rounds
    return int(sum(r[side][phase]["errors"] for r in rounds if phase in r.get(side, {})))


def _overhead(run: TracingRun) -> OverheadRun:
    return OverheadRun(run.sides, run.phases, run.latency, capacity={}, memory={})


def latency_table(run: TracingRun, kind: str) -> list[str]:
    """Per phase of `kind` and side: p50, p99 (TTFT for streams), added and ratio against off."""
    what = "TTFT " if kind == "stream" else ""
    p50, p99 = ("ttft_p50", "ttft_p99") if kind == "stream" else ("p50", "p99")
    whole = "| whole stream p50 ms " if kind == "stream" else ""
    lines = [
        f"| side | rate | {what}p50 ms | {what}p99 ms | added {what}p50 ms | added {what}p99 ms "
        f"| {what}p50 vs off | {what}p99 vs off {whole}| errors |",
        "| --- |" + " ---: |" * (8 if kind == "stream" else 7) + " ---: |",
    ]
    figures = _overhead(run)
    for phase in (p for p in run.phases if p.kind == kind):
        for side in run.sides:
            cells = [figure(figures, side, phase.key, m) for m in (p50, p99)]
            cells += [added(figures, side, phase.key, m, base=BASE) for m in (p50, p99)]
            bases = [figure(figures, BASE, phase.key, m) for m in (p50, p99)]
            row = [_f(c) for c in cells]
            row += [_times(ratio(c, b)) for c, b in zip(cells[:2], bases, strict=True)]
            if kind == "stream":
                row.append(_f(figure(figures, side, phase.key, "p50")))
            row.append(str(_errors(run, side, phase.key)))
            lines.append(f"| {TRACING_LABELS[side]} | {phase.rate:g} | " + " | ".join(row) + " |")
    return lines


def _closed(run: TracingRun, side: str, metric: str) -> float:
    return median([r[side][metric] for r in run.closed if side in r])


def closed_table(run: TracingRun) -> list[str]:
    """Per side: calls per second as fast as it answers, against off; latency; errors."""
    lines = [
        "| side | calls/s (median) | vs off | p50 ms | p99 ms | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for side in run.sides:
        rate = _closed(run, side, "rate")
        errors = int(sum(r[side]["errors"] for r in run.closed if side in r))
        against = ratio(rate, _closed(run, BASE, "rate"))
        lines.append(
            f"| {TRACING_LABELS[side]} | {_f(rate, 0)} | {_times(against)} "
            f"| {_f(_closed(run, side, 'p50'))} | {_f(_closed(run, side, 'p99'))} | {errors} |"
        )
    return lines


def _per_thousand(run: TracingRun, side: str) -> tuple[float, float, float]:
    cpu, calls = run.cpu[side], run.calls[side]
    gateway, recorder = ratio(cpu.gateway, calls) * 1000, ratio(cpu.recorder, calls) * 1000
    return gateway, recorder, gateway + recorder


def cpu_table(run: TracingRun) -> list[str]:
    """Per side: CPU seconds per 1,000 calls of the gateway, its recorder, both, against off."""
    lines = [
        "| side | calls | gateway CPU s / 1,000 | recorder CPU s / 1,000 | total / 1,000 "
        "| added total vs off | total vs off |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    base = _per_thousand(run, BASE)[2] if BASE in run.cpu else math.nan
    for side in run.sides:
        gateway, recorder, total = _per_thousand(run, side)
        lines.append(
            f"| {TRACING_LABELS[side]} | {run.calls[side]:,.0f} | {_f(gateway, 3)} "
            f"| {_f(recorder, 3)} | {_f(total, 3)} | {_f(total - base, 3)} "
            f"| {_times(ratio(total, base))} |"
        )
    return lines


def spans_table(run: TracingRun) -> list[str]:
    """Per side: calls recorded, spans exported, dropped by reason and still queued."""
    lines = [
        "| side | calls recorded | spans exported | dropped: queue full | dropped: export failed "
        "| dropped: unbuildable | not yet exported or dropped |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for side in run.sides:
        counts = run.spans[side]
        queued = "no spans" if side == BASE else f"{counts.queued:,.0f}"
        dropped = " | ".join(f"{counts.dropped[r]:,.0f}" for r in DROP_ORDER)
        lines.append(
            f"| {TRACING_LABELS[side]} | {counts.recorded:,.0f} | {counts.exported:,.0f} "
            f"| {dropped} | {queued} |"
        )
    return lines


def tracing_section(header: list[str], run: TracingRun) -> str:
    """The whole section."""
    s = run.settings
    lines = [*header, ""]
    lines += [
        f"Batching: queue {s.max_queue_size:,} spans, a batch of up to {s.max_export_batch_size} "
        f"every {s.schedule_delay_s * 1000:g} ms, "
        f"{s.target.timeout_s * 1000:g} ms per export request.",
        "",
        "Non-streaming, zero model time (open loop):",
        "",
        *latency_table(run, "plain"),
        "",
        "Streaming, model ITL 5 ms (open loop; added and ratios on TTFT):",
        "",
        *latency_table(run, "stream"),
        "",
        "Closed loop, 16-token calls, as fast as each side answers:",
        "",
        *closed_table(run),
        "",
        "Process cost over the whole run (the gateway process; its recorder child, which builds "
        "and sends the spans; idle work such as health checks included, the same on every side):",
        "",
        *cpu_table(run),
        "",
        f"Spans, from each gateway's /metrics after {run.settle_s:.1f} s for the exporters to "
        f"settle (a hung collector is not waited for); the live collector received "
        f"{run.received:,} spans:",
        "",
        *spans_table(run),
    ]
    return "\n".join(lines) + "\n"
