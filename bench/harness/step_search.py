"""Step-up open-loop search: the highest rate a server sustains before errors or p99 break."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SearchRules:
    """Where the search starts, how it climbs, and what counts as broken."""

    start: float = 5.0
    ceiling: float = 2560.0
    # Bisections between the last good and the first broken rate after the doubling phase.
    refinements: int = 3
    max_error_rate: float = 0.01
    # Broken when p99 exceeds this multiple of the p99 at the starting rate.
    p99_factor: float = 1.5
    # The load generator itself fell behind its schedule: the figure is a lower bound.
    max_client_lag_ms: float = 100.0
    pause_s: float = 1.0


@dataclass(frozen=True)
class Step:
    """One rate tried, what it gave, and the verdict."""

    rate: float
    summary: dict[str, float]
    reason: str  # "" when it held

    @property
    def held(self) -> bool:
        """True when neither errors, p99 nor the client broke."""
        return not self.reason


@dataclass
class SearchResult:
    """The highest rate that held, why the next one did not, and every step."""

    sustained: float = 0.0
    limit_reason: str = "ceiling"
    steps: list[Step] = field(default_factory=list)

    @property
    def client_bound(self) -> bool:
        """The generator, not the server, gave out first: `sustained` is a lower bound."""
        return self.limit_reason.startswith("client")


def _judge(rate: float, summary: dict[str, float], base_p99: float, rules: SearchRules) -> Step:
    errors = summary["errors"] / max(summary["n"], 1)
    if errors > rules.max_error_rate:
        return Step(rate, summary, f"errors {errors:.1%}")
    if summary["p99"] > rules.p99_factor * base_p99:
        return Step(rate, summary, f"p99 {summary['p99']:.0f} ms > {rules.p99_factor:g}x")
    if summary["lag_p99"] > rules.max_client_lag_ms:
        return Step(rate, summary, f"client lag {summary['lag_p99']:.0f} ms")
    return Step(rate, summary, "")


def step_up(run: Callable[[float], dict[str, float]], rules: SearchRules) -> SearchResult:
    """Double the rate until a step breaks, then bisect between the last good and that one."""
    result = SearchResult()
    base_p99 = float("inf")
    rate = rules.start
    broken: float | None = None
    while rate <= rules.ceiling:
        step = _judge(rate, run(rate), base_p99, rules)
        result.steps.append(step)
        time.sleep(rules.pause_s)
        if not step.held:
            broken, result.limit_reason = rate, step.reason
            break
        if not result.steps[:-1]:
            base_p99 = step.summary["p99"]
        result.sustained = rate
        rate *= 2
    if broken is None or result.sustained == 0:
        return result
    good = result.sustained
    for _ in range(rules.refinements):
        middle = (good + broken) / 2
        step = _judge(middle, run(middle), base_p99, rules)
        result.steps.append(step)
        time.sleep(rules.pause_s)
        if step.held:
            good = middle
        else:
            broken, result.limit_reason = middle, step.reason
    result.sustained = good
    return result
