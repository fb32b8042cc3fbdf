"""Retention classes: the few retention periods a team may choose, so partitions stay bounded."""

from __future__ import annotations

# Days a team's calls, logprobs and bodies are kept. 0 keeps them until deleted by hand.
RETENTION_CLASSES = (0, 1, 7, 14, 30, 60, 90, 180, 365, 730)
KEEP = 0


def check_retention_days(days: int | None) -> int | None:
    """`days` if it is a retention class (None: keep), else a ValueError naming the choices."""
    if days is None or days in RETENTION_CLASSES:
        return days
    choices = ", ".join(str(d) for d in RETENTION_CLASSES if d)
    raise ValueError(f"retention_days must be one of {choices} (or null to keep); got {days}")


MAX_TOPK_DAYS = 730


def check_topk_retention_days(days: int | None) -> int | None:
    """`days` if it is a top-k retention period (None, 0: as long as the calls), else ValueError."""
    if days is None or 0 <= days <= MAX_TOPK_DAYS:
        return days
    raise ValueError(
        f"topk_retention_days must be 1 to {MAX_TOPK_DAYS} (or null: as long as the calls); "
        f"got {days}"
    )


def retention_class(days: int | None) -> int:
    """The class stored on a call's rows for a team's retention setting."""
    return KEEP if days is None else days
