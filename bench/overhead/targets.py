"""The overhead targets of issue 8, judged on one run's figures."""

from __future__ import annotations

import math

from bench.harness.stats import ratio
from bench.harness.verdict import Verdict, at_least, at_most
from bench.overhead.figures import OverheadRun, added, flat_change, sustained


def _phase(run: OverheadRun, kind: str, light: bool) -> str:
    rates = sorted(p.rate for p in run.phases if p.kind == kind)
    return f"{kind}@{(rates[0] if light else rates[-1]):g}"


def overhead_verdicts(run: OverheadRun) -> list[Verdict]:
    """Added latency, p99 under load, capacity, ITL inflation and memory, met or missed."""
    light, load = _phase(run, "plain", True), _phase(run, "plain", False)
    ours, theirs = added(run, "plumbline", light, "p50"), added(run, "litellm", light, "p50")
    share = ratio(ours, theirs)
    if math.isnan(share):
        p50_text = f"{ours:.2f} ms; the LiteLLM proxy was not measured"
        # Over 1 ms misses the target whatever the LiteLLM proxy did; under it, half is unjudged.
        p50_met = False if at_most(ours, 1.0) is False else None
    else:
        p50_text = f"{ours:.2f} ms vs LiteLLM {theirs:.2f} ms ({share:.2f} of it)"
        p50_met = bool(at_most(share, 0.2) and at_most(ours, 1.0))
    p99 = added(run, "plumbline", load, "p99")
    times = ratio(sustained(run, "plumbline"), sustained(run, "litellm"))
    itl = added(run, "plumbline", _phase(run, "stream", True), "itl_p50")
    curve = run.memory.get("plumbline")
    change = flat_change(curve) if curve is not None else float("nan")
    return [
        Verdict(
            f"added p50 ({light}) ≤ 1/5 of LiteLLM's and ≤ 1 ms",
            p50_text,
            p50_met,
        ),
        Verdict(f"added p99 ≤ 5 ms at {load}", f"{p99:.2f} ms", at_most(p99, 5.0)),
        Verdict(
            "max sustained ≥ 3x LiteLLM's",
            "the LiteLLM proxy was not measured" if math.isnan(times) else f"{times:.1f}x",
            at_least(times, 3.0),
        ),
        Verdict(
            "streaming ITL inflation p50 < 0.2 ms",
            f"{itl:.3f} ms",
            None if math.isnan(itl) else itl < 0.2,
        ),
        Verdict(
            "memory flat within 10% from the first tenth to the end",
            f"{change * 100:+.1f}%",
            at_most(abs(change), 0.10),
        ),
    ]
