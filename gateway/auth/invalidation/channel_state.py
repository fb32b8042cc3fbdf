"""What the key cache asks of an invalidation channel: is it live, and how long is trust."""

from __future__ import annotations

from typing import Protocol


class ChannelState(Protocol):
    """An invalidation channel as the key cache sees it (the Redis subscriber is the one in use)."""

    # How long a verdict is trusted from memory while the channel is not confirmed live.
    bound_s: float

    def confirmed(self, now: float) -> bool:
        """True while every change published since the cache was last flushed has been heard
        (subscribed, and Redis answered within `bound_s` of `now`, a monotonic time)."""
        ...
