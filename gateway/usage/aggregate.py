"""UsageAggregate: one group's counts, tokens, cost and latency histograms; merging them."""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.usage import latency_histogram
from gateway.usage.latency_histogram import Histogram

METRICS = ("ttft", "itl", "e2e")
# (team_id, feature, model, endpoint); endpoint None: rolled up before call kinds were kept.
GroupKey = tuple[int | None, str | None, str | None, str | None]


def _histograms() -> dict[str, Histogram]:
    return {metric: latency_histogram.empty() for metric in METRICS}


@dataclass(slots=True)
class UsageAggregate:
    """Usage of one (team, feature, model, endpoint) group over some stretch of time."""

    calls: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    input_cost: float = 0.0
    output_cost: float = 0.0
    histograms: dict[str, Histogram] = field(default_factory=_histograms)

    def add(self, other: UsageAggregate) -> None:
        """Fold another aggregate of the same group into this one."""
        self.calls += other.calls
        self.errors += other.errors
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.input_cost += other.input_cost
        self.output_cost += other.output_cost
        for metric in METRICS:
            self.histograms[metric] += other.histograms[metric]


def merge_into(target: dict[GroupKey, UsageAggregate], key: GroupKey, part: UsageAggregate) -> None:
    """Add `part` to the aggregate of `key`, creating it if needed."""
    current = target.get(key)
    if current is None:
        target[key] = part
    else:
        current.add(part)
