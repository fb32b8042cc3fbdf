"""The gateway's end of the key invalidation channel: its subscriber, its publisher, its metrics.

Started and stopped by `gateway.lifecycle`; off (None) unless PLUMBLINE_KEY_INVALIDATION__CHANNEL
is `redis`. docs/security.md, "Revocation across processes and replicas".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from redis.exceptions import RedisError

from gateway.auth.invalidation.changes import KeyChange, publish_after_commit
from gateway.auth.invalidation.publisher import RedisChangePublisher, channel_name
from gateway.auth.invalidation.subscriber import EVENTS, OUTCOMES, InvalidationSubscriber
from gateway.metrics import CallbackCollector

if TYPE_CHECKING:
    from gateway.state import GatewayState

log = logging.getLogger(__name__)


@dataclass(slots=True)
class KeyInvalidation:
    """This process's subscription and the publisher its admin API's commits go through."""

    subscriber: InvalidationSubscriber
    publisher: RedisChangePublisher
    publish_failures: int = 0

    def publish(self, changes: Sequence[KeyChange]) -> None:
        """Announce committed changes (this process has cleared its own cache already)."""
        try:
            self.publisher.publish(changes)
        except RedisError as error:
            self.publish_failures += 1
            log.warning(
                "key change committed but not announced (%s): other gateway processes see it "
                "within limits.key_cache_ttl_s",
                error,
            )

    def metric_families(self) -> Iterator[Metric]:
        """The channel's counters and state, for /metrics."""
        sub = self.subscriber
        applied = CounterMetricFamily(
            "plumbline_key_invalidations",
            "Invalidations heard: applied (a key's or team's verdicts dropped), flushed (the whole "
            "cache, on each subscription), unreadable (the whole cache)",
            labels=["outcome"],
        )
        for outcome in OUTCOMES:
            applied.add_metric([outcome], sub.outcomes[outcome])
        events = CounterMetricFamily(
            "plumbline_key_invalidation_channel_events",
            "Subscriptions made, live ones lost, connection attempts failed",
            labels=["event"],
        )
        for event in EVENTS:
            events.add_metric([event], sub.events[event])
        up = GaugeMetricFamily(
            "plumbline_key_invalidation_channel_up", "1 while the subscription is confirmed live"
        )
        up.add_metric([], 1.0 if sub.confirmed(time.monotonic()) else 0.0)
        rechecks = CounterMetricFamily(
            "plumbline_key_cache_rechecks",
            "Cached keys looked up again because the channel was not confirmed live",
        )
        rechecks.add_metric([], sub.cache.rechecks)
        failures = CounterMetricFamily(
            "plumbline_key_invalidation_publish_failures", "Committed changes not announced"
        )
        failures.add_metric([], self.publish_failures)
        yield from (applied, events, up, rechecks, failures)


def start_key_invalidation(state: GatewayState) -> KeyInvalidation | None:
    """Subscribe this process's key cache and publish its admin API's commits (channel: redis)."""
    settings = state.settings.key_invalidation
    if settings.channel == "none":
        if state.config.limits.rate_limits.store == "redis":
            log.warning(
                "rate limits are shared in Redis but key_invalidation.channel is none: a key "
                "revoked through another process stays valid here for limits.key_cache_ttl_s"
            )
        return None
    url, channel = state.settings.redis.url, channel_name(state.settings.worker.key_prefix)
    subscriber = InvalidationSubscriber(
        url, channel, state.keys, settings.unconfirmed_ttl_s, settings.heartbeat_s
    )
    invalidation = KeyInvalidation(subscriber, RedisChangePublisher(url, channel))
    state.keys.channel = subscriber
    publish_after_commit(state.sessions, invalidation.publish)
    state.metrics.add_collector(CallbackCollector(invalidation.metric_families))
    subscriber.start()
    return invalidation


async def stop_key_invalidation(invalidation: KeyInvalidation | None) -> None:
    """Unsubscribe and close the publisher's connections."""
    if invalidation is not None:
        await invalidation.subscriber.stop()
        invalidation.publisher.close()
