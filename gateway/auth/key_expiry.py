"""When a new key expires: `2027-03-31` (through that day, UTC), an ISO time, or `90d`."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

from gateway.errors import GatewayError

MAX_DAYS = 3650
_DAYS = re.compile(r"([0-9]{1,5})d")
_HINT = "use a date (2027-03-31), an ISO time (2027-03-31T12:00:00Z) or a number of days (90d)"


def parse_expiry(text: str, now: datetime) -> datetime:
    """The moment a key stops working, from what an admin typed; 400 unless it is ahead."""
    value = text.strip()
    days = _DAYS.fullmatch(value)
    if days is not None:
        count = int(days.group(1))
        if not 1 <= count <= MAX_DAYS:
            raise GatewayError(400, f"`expires` in days must be 1 to {MAX_DAYS}.", "expires")
        return check_expiry(now + timedelta(days=count), now)
    try:
        if len(value) == 10:
            # A date means the key works through that day (UTC).
            moment = datetime.combine(date.fromisoformat(value), time(), UTC) + timedelta(days=1)
        else:
            moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        moment = moment.astimezone(UTC)
    except (ValueError, OverflowError):
        # OverflowError: a time at the very end of the calendar, moved by a day or an offset.
        raise GatewayError(
            400, f"`expires` {value[:40]!r} is not a time: {_HINT}.", "expires"
        ) from None
    return check_expiry(moment, now)


def check_expiry(moment: datetime, now: datetime) -> datetime:
    """`moment` if it is in the future and within MAX_DAYS, else a 400 saying which."""
    if moment <= now:
        raise GatewayError(
            400,
            f"`expires` ({moment.isoformat(timespec='seconds')}) is in the past: {_HINT}.",
            "expires",
        )
    if moment - now > timedelta(days=MAX_DAYS):
        raise GatewayError(400, f"`expires` may be at most {MAX_DAYS} days ahead.", "expires")
    return moment
