"""Cover a time window with rolled days and hours where it can, and raw calls where it cannot."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


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


def _next_hour(moment: datetime) -> datetime:
    floor = moment.replace(minute=0, second=0, microsecond=0)
    return floor if floor == moment else floor + HOUR


def plan_window(since: datetime, until: datetime, clean: set[tuple[int, datetime]]) -> WindowPlan:
    """Whole clean days first, then whole clean hours, raw calls for the rest (edges, gaps)."""
    plan = WindowPlan()
    at = since.astimezone(UTC)
    until = until.astimezone(UTC)
    while at < until:
        aligned_hour = at.minute == at.second == at.microsecond == 0
        if aligned_hour and at.hour == 0 and at + DAY <= until and (24, at) in clean:
            plan.periods.append((24, at))
            at += DAY
        elif aligned_hour and at + HOUR <= until and (1, at) in clean:
            plan.periods.append((1, at))
            at += HOUR
        else:
            end = min(_next_hour(at) if not aligned_hour else at + HOUR, until)
            plan.add_raw(at, end)
            at = end
    return plan
