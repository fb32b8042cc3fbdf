"""Publish committed key changes on Redis pub/sub, for every gateway process to drop them."""

from __future__ import annotations

from collections.abc import Sequence

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from gateway.auth.invalidation.changes import KeyChange

# How long one publish may take before it is given up (the change is committed either way).
PUBLISH_TIMEOUT_S = 2.0


def channel_name(key_prefix: str) -> str:
    """The pub/sub channel of one deployment (`worker.key_prefix`, so tests and deployments
    sharing a Redis do not hear each other)."""
    return f"{key_prefix}key-invalidations"


class RedisChangePublisher:
    """PUBLISHes each change; blocking (the admin API's routes and the CLI run in threads)."""

    def __init__(self, url: str, channel: str, timeout_s: float = PUBLISH_TIMEOUT_S) -> None:
        self.channel = channel
        self._redis = redis.Redis.from_url(
            url,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            # One retry: a pooled connection Redis closed while idle is then replaced once.
            retry=Retry(NoBackoff(), 1),
        )

    def publish(self, changes: Sequence[KeyChange]) -> int:
        """Send every change; the number of subscribers the last one reached. Raises RedisError."""
        reached = 0
        for change in changes:
            reached = int(self._redis.publish(self.channel, change.encode()))
        return reached

    def close(self) -> None:
        """Close the connections."""
        self._redis.close()
