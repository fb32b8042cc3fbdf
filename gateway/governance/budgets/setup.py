"""Build a gateway's budget guard from its settings and config."""

from __future__ import annotations

import aiohttp

from gateway.config import GatewayConfig
from gateway.governance.budgets.guard import BudgetGuard, NoticeTargets
from gateway.governance.budgets.store_joint import JointAdmission
from gateway.governance.budgets.store_redis import RedisBudgets
from gateway.proxy.rate_limits.redis_buckets import connect_buckets
from plumbline.settings import Settings


def budget_guard(
    settings: Settings, config: GatewayConfig, http: aiohttp.ClientSession
) -> BudgetGuard:
    """Spend in memory, or in the rate limits' Redis (PLUMBLINE_REDIS__URL) shared by all."""
    limits = config.limits
    notify = settings.worker.notify
    names = limits.budgets.notify_channels
    chosen = names if names is not None else notify.default_channels
    channels = tuple(notify.channels[name] for name in chosen if name in notify.channels)
    notices = NoticeTargets(http, channels, notify.timeout_s)
    shared = joint = None
    if limits.rate_limits.store == "redis":
        # Its own bounded pool, built like the buckets' (connects on first use).
        buckets = connect_buckets(
            settings.redis.url, settings.worker.key_prefix, limits.rate_limits
        )
        shared = RedisBudgets(buckets.redis, settings.worker.key_prefix)
        # The rate limiter's buckets live in the same Redis under the same prefix.
        joint = JointAdmission(buckets, shared)
    return BudgetGuard(limits.budgets, limits.rate_limits, shared, notices, joint=joint)
