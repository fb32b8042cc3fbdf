"""The routing section of docs/benchmarks.md: hit rate, TTFT and balance per policy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bench.harness.stats import median, percentile, ratio
from bench.harness.verdict import Verdict, at_least, at_most, verdict_table
from bench.routing.fleet import Phase

AFFINITY, LEAST = "prefix_affinity", "least_in_flight"


def ttfts(phase: Phase) -> list[float]:
    """The TTFT of every answered call, in seconds."""
    return [s.ttft for s in phase.samples if s.status == 200 and s.ttft is not None]


def hit_rate(phase: Phase) -> float:
    """Prompt tokens the backends found in their prefix caches, as a share of those looked up."""
    return ratio(phase.hits, phase.queries)


def imbalance(phase: Phase) -> float:
    """The busiest backend's calls over the idlest's (1.0 is even; inf: one got none)."""
    low = min(phase.served)
    return max(phase.served) / low if low else math.inf


def _row(phase: Phase) -> str:
    times = ttfts(phase)
    total = sum(phase.served) or 1.0
    shares = " / ".join(f"{100 * n / total:.0f}%" for n in phase.served)
    failed = sum(1 for s in phase.samples if s.status != 200)
    return (
        f"| {phase.policy} | {len(phase.samples)} | {failed} | {100 * hit_rate(phase):.1f}% | "
        f"{1000 * percentile(times, 0.5):.1f} | {1000 * percentile(times, 0.99):.1f} | "
        f"{shares} | {imbalance(phase):.2f} |"
    )


def _by_policy(phases: Sequence[Phase], policy: str, figure: Any) -> float:
    return median([figure(p) for p in phases if p.policy == policy])


def routing_verdicts(phases: Sequence[Phase]) -> list[Verdict]:
    """Affinity against least-in-flight, medians over rounds, as ratios."""

    def p50(phase: Phase) -> float:
        return percentile(ttfts(phase), 0.5)

    def p99(phase: Phase) -> float:
        return percentile(ttfts(phase), 0.99)

    figures = {
        name: (_by_policy(phases, AFFINITY, f), _by_policy(phases, LEAST, f))
        for name, f in (("hit", hit_rate), ("p50", p50), ("p99", p99), ("bal", imbalance))
    }
    hit_a, hit_l = figures["hit"]
    return [
        Verdict(
            "prefix-cache hit rate, affinity / least-in-flight ≥ 1.2",
            f"{ratio(hit_a, hit_l):.2f}x",
            at_least(ratio(hit_a, hit_l), 1.2),
        ),
        Verdict(
            "TTFT p50, affinity / least-in-flight ≤ 0.9",
            f"{ratio(*figures['p50']):.2f}x",
            at_most(ratio(*figures["p50"]), 0.9),
        ),
        Verdict(
            "TTFT p99, affinity / least-in-flight ≤ 1.0",
            f"{ratio(*figures['p99']):.2f}x",
            at_most(ratio(*figures["p99"]), 1.0),
        ),
        Verdict(
            "busiest / idlest backend's calls under affinity ≤ 2.0",
            f"{figures['bal'][0]:.2f}",
            at_most(figures["bal"][0], 2.0),
        ),
    ]


def routing_section(header: list[str], phases: Sequence[Phase], args: Any) -> str:
    """The dated section for docs/benchmarks.md."""
    tokens = 33 * args.sections
    lines = [
        *header,
        "",
        f"{args.backends} simulator backends (prefill {args.prefill_ms:g} ms per uncached prompt "
        f"token, decode {args.decode_ms:g} ms per step, `max_num_seqs` {args.max_num_seqs}, "
        f"prefix cache of {args.cache_blocks} blocks of 16 tokens each) behind one gateway. "
        f"{args.documents} documents of about {tokens} tokens each as system prompts, every call "
        f"a new question on one picked at random, streamed, {args.max_tokens} tokens out, open "
        f"loop at {args.rate:g} calls/s, {args.calls} calls a phase; the policies alternate, "
        f"{args.rounds} round(s), every prefix cache emptied before each phase. Hit rate is the "
        "backends' own `vllm:prefix_cache_hits` / `queries`; share is of the calls each backend "
        "served (its `vllm:request_success`).",
        "",
        "| policy | calls | failed | prefix-cache hit rate | TTFT p50 ms | TTFT p99 ms | "
        "share per backend | busiest / idlest |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
        *(_row(p) for p in phases),
        "",
        "Targets (medians over rounds):",
        "",
        *verdict_table(routing_verdicts(phases)),
    ]
    return "\n".join(lines) + "\n"
