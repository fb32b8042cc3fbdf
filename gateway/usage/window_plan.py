"""Cover a time window with rolled days and hours where it can, and raw calls where it cannot."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

HOUR = timedelta(hours=1)


@dataclass(slots=True)
class WindowPlan:
    """Rollup periods (hours, start) to read, and the stretches to aggregate from raw calls."""

    periods: list[tuple[int, datetime]] = field(default_factory=list)
    raw: list[tuple[datetime, datetime]] = field(default_factory=list)

    def add_raw(self, start: datetime, end: datetime) -> None:
        """Add a raw stretch, joined to the previous one when they touch."""
        if self.raw and self.raw[-1][1] == start:
            self.raw[-1] = (self.raw[-1][0], end)
        else:
            self.raw.append((start, end))


def plan_window(since: datetime, until: datetime, clean: set[tuple[int, datetime]]) -> WindowPlan:
    """Whole clean days first, then whole clean hours, raw calls for the rest (edges, gaps).

    Walks the clean periods, not the hours: a window may span millennia (the API allows it).
    """
    plan = WindowPlan()
    at = since.astimezone(UTC)
    until = until.astimezone(UTC)
    inside = sorted(
        ((start, hours) for hours, start in clean if at <= start and start + hours * HOUR <= until),
        key=lambda period: (period[0], -period[1]),  # a day before the first hour it covers
    )
    for start, hours in inside:
        if start < at:
            continue  # inside a day already taken
        if start > at:
            plan.add_raw(at, start)
        plan.periods.append((hours, start))
        at = start + hours * HOUR
    if at < until:
        plan.add_raw(at, until)
    return plan
