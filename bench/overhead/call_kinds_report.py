"""The call-kind section: added latency and ratio to direct per call kind and side."""

from __future__ import annotations

import math

from bench.harness.stats import median, ratio
from bench.overhead.call_kinds import CASES, KindsRun
from bench.proxies.sides import LABELS

TITLE = "Overhead by call kind: Responses and embeddings against direct"
CASE_LABELS = {
    "responses": "Responses, plain",
    "responses-stream": "Responses, streamed",
    "embeddings": "embeddings",
}


def _f(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def _times(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}x"


def _figure(run: KindsRun, side: str, case: str, metric: str) -> float:
    return median([r[side][case][metric] for r in run.rounds if case in r.get(side, {})])


def _added(run: KindsRun, side: str, case: str, metric: str) -> float:
    """Median over rounds of (side - direct) within the same round."""
    return median(
        [
            r[side][case][metric] - r["direct"][case][metric]
            for r in run.rounds
            if case in r.get(side, {}) and case in r.get("direct", {})
        ]
    )


def _errors(run: KindsRun, side: str, case: str) -> int:
    return int(sum(r[side][case]["errors"] for r in run.rounds if case in r.get(side, {})))


def kinds_table(run: KindsRun) -> list[str]:
    """One row per case and side: p50, p99, added p50/p99, ratio to direct, TTFT for streams."""
    lines = [
        "| call kind | side | rate | p50 ms | p99 ms | added p50 ms | added p99 ms "
        "| p50 vs direct | TTFT p50 ms | added TTFT p50 | TTFT vs direct | errors |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for case in run.cases:
        if case in run.skipped:
            lines.append(f"| {CASE_LABELS[case]} | skipped: {run.skipped[case]} ||||||||||")
            continue
        rate = run.rates["stream" if CASES[case].stream else "plain"]
        for side in run.sides:
            p50 = _figure(run, side, case, "p50")
            ttft = _figure(run, side, case, "ttft_p50") if CASES[case].stream else math.nan
            direct_ttft = _figure(run, "direct", case, "ttft_p50") if CASES[case].stream else 1.0
            added_ttft = _added(run, side, case, "ttft_p50") if CASES[case].stream else math.nan
            lines.append(
                f"| {CASE_LABELS[case]} | {LABELS[side]} | {rate:g} | {_f(p50)} "
                f"| {_f(_figure(run, side, case, 'p99'))} "
                f"| {_f(_added(run, side, case, 'p50'))} | {_f(_added(run, side, case, 'p99'))} "
                f"| {_times(ratio(p50, _figure(run, 'direct', case, 'p50')))} "
                f"| {_f(ttft)} | {_f(added_ttft)} | {_times(ratio(ttft, direct_ttft))} "
                f"| {_errors(run, side, case)} |"
            )
    return lines


def kinds_section(header: list[str], run: KindsRun) -> str:
    """The whole section."""
    lines = [*header, "", *kinds_table(run)]
    if run.skipped:
        lines += [
            "",
            "Skipped: "
            + "; ".join(f"{CASE_LABELS[c]} ({reason})" for c, reason in run.skipped.items())
            + ".",
        ]
    return "\n".join(lines) + "\n"
