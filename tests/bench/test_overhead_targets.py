"""The overhead targets judged on runs that left a side out (`--sides`)."""

from __future__ import annotations

from bench.harness.step_search import SearchResult
from bench.overhead.figures import OverheadRun
from bench.overhead.latency import LatencyResult, Phase
from bench.overhead.report import overhead_section
from bench.overhead.targets import overhead_verdicts

PHASES = [Phase("plain", 5), Phase("plain", 200), Phase("stream", 2), Phase("stream", 25)]


def _run(sides: list[str], plumbline_p50: float) -> OverheadRun:
    def summary(p50: float) -> dict[str, dict[str, float]]:
        plain = {"p50": p50, "p99": p50 * 2, "errors": 0.0}
        stream = {"ttft_p50": p50, "ttft_p99": p50, "itl_p50": 5.0, "itl_p99": 6.0}
        return {
            **{p.key: plain for p in PHASES if p.kind == "plain"},
            **{p.key: {**stream, "errors": 0.0} for p in PHASES if p.kind == "stream"},
        }

    base = {"direct": 3.0, "nginx": 3.4, "litellm": 50.0, "plumbline": 3.0 + plumbline_p50}
    rounds = [{side: summary(base[side]) for side in sides}]
    latency = LatencyResult(rounds=rounds, skipped={side: [] for side in sides})
    return OverheadRun(sides, PHASES, latency, capacity={}, memory={})


def test_without_the_litellm_proxy_over_1_ms_is_still_a_miss() -> None:
    run = _run(["direct", "nginx", "plumbline"], plumbline_p50=1.5)
    p50 = overhead_verdicts(run)[0]
    assert (p50.measured, p50.met) == ("1.50 ms; the LiteLLM proxy was not measured", False)
    capacity = overhead_verdicts(run)[2]
    assert (capacity.measured, capacity.met) == ("the LiteLLM proxy was not measured", None)


def test_without_the_litellm_proxy_under_1_ms_is_not_judged() -> None:
    p50 = overhead_verdicts(_run(["direct", "nginx", "plumbline"], plumbline_p50=0.5))[0]
    assert p50.met is None and p50.mark == "not measured"


def test_with_every_side_the_share_of_litellm_is_judged() -> None:
    p50 = overhead_verdicts(_run(["direct", "nginx", "litellm", "plumbline"], 0.5))[0]
    assert (p50.measured, p50.met) == ("0.50 ms vs LiteLLM 47.00 ms (0.01 of it)", True)


def test_the_report_renders_a_run_without_the_litellm_proxy() -> None:
    class Args:
        capacity_rounds, step_seconds = 0, 1.0

    run = _run(["direct", "plumbline"], 0.8)
    run.capacity = {"direct": [SearchResult(300.0)], "plumbline": [SearchResult(200.0)]}
    text = overhead_section(["### header"], run, Args())
    assert "| Plumbline | 5 | 3.80 |" in text and "LiteLLM proxy |" not in text
    assert "| Plumbline | 200 | 200 | ceiling | 0.67x | n/a |" in text
