"""The queries scenario's markdown section."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.harness.verdict import Verdict, at_most, verdict_table
from bench.queries.rollups import RollupBackfill
from bench.queries.usage_api import Timed

TARGET_MS = 300.0


@dataclass(frozen=True)
class Usage:
    """The usage endpoint timed before the rollups existed, the first rollup pass, and after."""

    raw: list[Timed]
    rollup: RollupBackfill
    rolled: list[Timed]


def _table(found: list[Timed]) -> list[str]:
    lines = [
        "| query | rows | p50 ms | p95 ms | p95 ≤ 300 ms |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for timed in found:
        mark = "met" if timed.p95_ms <= TARGET_MS else "**missed**"
        figures = f"{timed.rows:,} | {timed.p50_ms:,.0f} | {timed.p95_ms:,.0f}"
        lines.append(f"| {timed.name} | {figures} | {mark} |")
    return lines


def _plan_lines(plans: dict[str, list[str]]) -> list[str]:
    lines = []
    for name, plan in plans.items():
        lines += ["", f"{name}:", "", "```", *plan, "```"]
    return lines


def queries_section(
    header: list[str],
    both: Usage,
    panels: list[Timed],
    plans: dict[str, list[str]],
    seconds: float,
    args: Any,
) -> str:
    """The dated section for docs/benchmarks.md."""
    usage = both.rolled
    rollup = both.rollup
    worst = max(usage, key=lambda t: t.p95_ms)
    default = [t for t in usage if "default" in t.name]
    verdicts = [
        Verdict(
            f"usage endpoint p95 < {TARGET_MS:.0f} ms, default window (24 h)",
            ", ".join(f"{t.name}: {t.p95_ms:,.0f} ms" for t in default),
            all(at_most(t.p95_ms, TARGET_MS) for t in default),
        ),
        Verdict(
            f"usage endpoint p95 < {TARGET_MS:.0f} ms, every window",
            f"worst {worst.name}: {worst.p95_ms:,.0f} ms",
            at_most(worst.p95_ms, TARGET_MS),
        ),
    ]
    lines = [
        *header,
        "",
        f"{args.rows:,} call rows over 30 days (8 teams, 12 features, 4 models; generated with "
        f"INSERT ... SELECT generate_series into the day partitions in {seconds:.0f} s, then "
        f"VACUUM ANALYZE); each query repeated {args.repeats} times.",
        "",
        "`GET /api/usage` through a running gateway (admin key: every team; team key: one team "
        f"of eight), first from the calls table alone (exact percentiles, {args.raw_repeats} "
        "repeats: this is what it cost before rollups):",
        "",
        *_table(both.raw),
        "",
        f"The rollup job's first pass (what `usage.rollup` does on a worker every minute): "
        f"{rollup.hours:,} hours and {rollup.days} days rolled up in {rollup.seconds:.1f} s, "
        f"{rollup.rows:,} rollup rows. Later passes roll one new hour, plus any that took late "
        "calls.",
        "",
        "Then with the rollups (whole days and hours from `usage_rollups`, the ragged edges "
        "from the calls table; percentiles from 5% log buckets):",
        "",
        *_table(usage),
        "",
        "Dashboard panels that read the calls tables, expanded as Grafana sends them, each at "
        "its dashboard's default time range (the stability board reads eval tables only):",
        "",
        *_table(panels),
        "",
        "Targets:",
        "",
        *verdict_table(verdicts),
    ]
    if plans:
        lines += ["", "Where the time goes (EXPLAIN (ANALYZE, BUFFERS), first lines):"]
        lines += _plan_lines(plans)
    return "\n".join(lines) + "\n"
