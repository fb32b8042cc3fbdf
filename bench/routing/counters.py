"""Sums of Prometheus samples read off a /metrics page, by metric name and label text."""

from __future__ import annotations


def sample_sum(page: str, name: str, labels: str = "") -> float:
    """The sum of the samples of `name` whose label set contains `labels` (as written)."""
    total = 0.0
    for line in page.splitlines():
        if not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        metric = head.split("{", 1)[0]
        if metric != name or labels not in head:
            continue
        try:
            total += float(value)
        except ValueError:
            continue
    return total
