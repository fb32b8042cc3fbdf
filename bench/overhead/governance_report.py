"""The governance section: latency and CPU per call against off, the checks in-process, verdict."""

from __future__ import annotations

import math

from bench.harness.stats import ratio
from bench.harness.verdict import Verdict, at_most, verdict_table
from bench.overhead.figures import OverheadRun, added, figure
from bench.overhead.governance import GovernanceRun
from bench.overhead.governance_sides import GOVERNANCE_LABELS

TITLE = "Overhead of governance: scopes, model access, budgets, shedding"
BASE = "off"
TARGET_MS = 0.05


def _f(value: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _overhead(run: GovernanceRun) -> OverheadRun:
    return OverheadRun(run.sides, run.phases, run.latency, capacity={}, memory={})


def _errors(run: GovernanceRun, side: str, phase: str) -> int:
    rounds = run.latency.rounds
    return int(sum(r[side][phase]["errors"] for r in rounds if phase in r.get(side, {})))


def latency_table(run: GovernanceRun) -> list[str]:
    """Per phase and side: p50 and p99 (TTFT for streams), added against off, errors."""
    lines = [
        "| side | phase | p50 ms | p99 ms | added p50 ms | added p99 ms | errors |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    figures = _overhead(run)
    for phase in run.phases:
        p50, p99 = ("ttft_p50", "ttft_p99") if phase.kind == "stream" else ("p50", "p99")
        what = f"{phase.kind} {phase.rate:g}/s" + (" (TTFT)" if phase.kind == "stream" else "")
        for side in run.sides:
            cells = [figure(figures, side, phase.key, m) for m in (p50, p99)]
            cells += [added(figures, side, phase.key, m, base=BASE) for m in (p50, p99)]
            row = " | ".join(_f(c) for c in cells)
            errors = _errors(run, side, phase.key)
            lines.append(f"| {GOVERNANCE_LABELS[side]} | {what} | {row} | {errors} |")
    return lines


def _per_call_ms(run: GovernanceRun, side: str) -> tuple[float, float, float]:
    cpu, calls = run.cpu[side], run.calls[side]
    gateway, recorder = ratio(cpu.gateway, calls) * 1000, ratio(cpu.recorder, calls) * 1000
    return gateway, recorder, gateway + recorder


def cpu_table(run: GovernanceRun) -> list[str]:
    """Per side: CPU milliseconds per call of the gateway, its recorder, both, added vs off."""
    lines = [
        "| side | calls | gateway CPU ms / call | recorder CPU ms / call | total ms / call "
        "| added total ms vs off |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    base = _per_call_ms(run, BASE)[2] if BASE in run.cpu else math.nan
    for side in run.sides:
        gateway, recorder, total = _per_call_ms(run, side)
        lines.append(
            f"| {GOVERNANCE_LABELS[side]} | {run.calls[side]:,.0f} | {_f(gateway)} "
            f"| {_f(recorder)} | {_f(total)} | {_f(total - base)} |"
        )
    return lines


def checks_table(run: GovernanceRun) -> list[str]:
    """The budget checks timed in-process, one call at a time (bench.budget_cost)."""
    lines = ["| admit + settle per call | p50 µs | p95 µs |", "| --- | ---: | ---: |"]
    lines += [f"| {name} | {p50:.1f} | {p95:.1f} |" for name, (p50, p95) in run.checks.items()]
    return lines


def budgets_table(run: GovernanceRun) -> list[str]:
    """What the "on" side's budgets were charged over the run: proof the checks ran."""
    lines = ["| budget | period | spent |", "| --- | --- | ---: |"]
    lines += [f"| {scope} | {period} | {amount:.6f} |" for scope, period, amount in run.budgets]
    return lines


def light_added(run: GovernanceRun) -> float:
    """Added p50 at the lightest non-streaming rate: the unloaded cost of the checks."""
    plain = [p for p in run.phases if p.kind == "plain"]
    if not plain or "on" not in run.sides:
        return math.nan
    lightest = min(plain, key=lambda p: p.rate)
    return added(_overhead(run), "on", lightest.key, "p50", base=BASE)


def verdicts(run: GovernanceRun) -> list[Verdict]:
    """The issue's target: under 0.05 ms added p50 with budgets and model access on."""
    value = light_added(run)
    rate = min((p.rate for p in run.phases if p.kind == "plain"), default=math.nan)
    measured = f"{_f(value)} ms at {rate:g} rps (median over rounds of on - off)"
    target = f"added p50 < {TARGET_MS:g} ms with budgets and model access on"
    return [Verdict(target, measured, at_most(value, TARGET_MS))]


def governance_section(header: list[str], run: GovernanceRun) -> str:
    """The whole section."""
    lines = [
        *header,
        "",
        *verdict_table(verdicts(run)),
        "",
        "Open loop, sides alternating within each round; plain calls take no model time, "
        "streams decode at 5 ms a token (figures on TTFT):",
        "",
        *latency_table(run),
        "",
        "Process cost over all the latency rounds (the gateway process; its recorder child; "
        "the warm-up calls and idle work such as health checks included, the same on both):",
        "",
        *cpu_table(run),
        "",
        f"The budget checks alone, in this process against the same Redis, {run.check_calls:,} "
        "calls one at a time after 200 to warm up (the rate limiter for scale):",
        "",
        *checks_table(run),
        "",
        'Spent on the "on" side\'s budgets after the rounds, from `/api/usage/budgets` (before '
        "the rounds its key was answered 404 for a configured model outside its lists and 403 "
        "for `/api/calls`, outside its scope, where the off side's key got 200s, or the run "
        "stops):",
        "",
        *budgets_table(run),
    ]
    return "\n".join(lines) + "\n"
