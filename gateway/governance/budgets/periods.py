"""UTC budget periods: a day and a calendar month, named and bounded."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# Spend keys outlive their period by this much, so a call admitted just before the reset
# still settles into the period it reserved in.
SETTLE_GRACE = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Period:
    """One budget period: its name ("2026-12-03", "2026-12") and when the next one starts."""

    kind: str  # "day" or "month"
    name: str
    resets_at: datetime

    @property
    def expire_at_ms(self) -> int:
        """When its spend may be forgotten, in epoch milliseconds."""
        return int((self.resets_at + SETTLE_GRACE).timestamp() * 1000)


def period_of(kind: str, now: datetime) -> Period:
    """The day or month `now` (UTC) falls in."""
    now = now.astimezone(UTC)
    if kind == "day":
        start = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return Period("day", start.strftime("%Y-%m-%d"), start + timedelta(days=1))
    month = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    following = (month + timedelta(days=32)).replace(day=1)
    return Period("month", month.strftime("%Y-%m"), following)
