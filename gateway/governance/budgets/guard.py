"""BudgetGuard: holds a call's likely cost on its budgets at admission, charges the real one.

With the Redis store a failing or slow Redis (each command bounded like the rate limits')
means either this process's own spend (fail open) or a 503 (fail closed), per
`limits.budgets.on_redis_failure`; then Redis is left alone for `redis_retry_s`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import aiohttp
from redis.exceptions import RedisError

from gateway.auth.keys import KeyInfo
from gateway.config import ModelConfig
from gateway.governance.budgets.charges import recorded_cost, reservation
from gateway.governance.budgets.config import BudgetConfig
from gateway.governance.budgets.limits import BudgetLimits
from gateway.governance.budgets.lines import (
    BudgetLine,
    Crossing,
    Hold,
    Overrun,
    current_periods,
    lines_in,
)
from gateway.governance.budgets.notice import deliver_notice, notice_facts
from gateway.governance.budgets.periods import Period
from gateway.governance.budgets.refusal import BudgetExceeded, BudgetsUnavailable
from gateway.governance.budgets.store_joint import JointAdmission
from gateway.governance.budgets.store_memory import MemoryBudgets
from gateway.governance.budgets.store_redis import RedisBudgets
from gateway.metering.record import CallRecord
from gateway.rate_limit_config import RateLimitConfig
from plumbline.settings import ChannelSettings

log = logging.getLogger(__name__)
STORE_ERRORS = (RedisError, OSError, TimeoutError)
# Budgets whose last spend /metrics shows; beyond this the oldest seen are dropped.
MAX_SHOWN = 10_000
# Keys whose budget lines are kept for reuse within a period (then they are built again).
MAX_CACHED_LINES = 10_000
LineKey = tuple[BudgetLimits, int, int]


@dataclass(slots=True)
class BudgetCounts:
    """What the guard did since start, for /metrics."""

    refusals: dict[tuple[str, str], int] = field(default_factory=dict)
    store: dict[str, int] = field(
        default_factory=lambda: {"timeout": 0, "error": 0, "failed_open": 0, "failed_closed": 0}
    )
    notices: dict[str, int] = field(default_factory=lambda: {"delivered": 0, "failed": 0})
    settlements_lost: int = 0
    # (scope, team, key, period) -> (spent, limit) as last seen by this process.
    shown: dict[tuple[str, str, str, str], tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BudgetPlan:
    """A call's budget lines, the most it may cost, and when it was admitted."""

    lines: tuple[BudgetLine, ...]
    amount: int
    now: datetime

    def hold(self, info: KeyInfo, store: str) -> Hold:
        """What the call holds once admitted by `store` ("redis" or "memory")."""
        return Hold(self.lines, self.amount, store, info.team_name, info.prefix)


@dataclass(frozen=True, slots=True)
class NoticeTargets:
    """Where soft-level notices go, and how they are sent."""

    http: aiohttp.ClientSession
    channels: tuple[ChannelSettings, ...]
    timeout_s: float


class BudgetGuard:
    """The one budget guard of a gateway process: memory only, or Redis with a fallback."""

    def __init__(
        self,
        config: BudgetConfig,
        store_config: RateLimitConfig,
        shared: RedisBudgets | None = None,
        notices: NoticeTargets | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        joint: JointAdmission | None = None,
    ) -> None:
        self.config = config
        self.store_config = store_config
        self.shared = shared
        # The same Redis as the rate limits: a call with both is admitted in one script.
        self.joint = joint
        self.local = MemoryBudgets()
        self.notices = notices
        self.clock = clock
        self.counts = BudgetCounts()
        self._skip_until = 0.0
        self._sending: set[asyncio.Task[None]] = set()
        # The day and month now, and each key's lines in them: built once per period, as
        # formatting dates is most of what a call with budgets costs in memory.
        self._periods: dict[str, Period] = {}
        self._next_reset: datetime | None = None
        self._lines: dict[LineKey, tuple[BudgetLine, ...]] = {}

    def _lines_of(
        self, limits: BudgetLimits, info: KeyInfo, now: datetime
    ) -> tuple[BudgetLine, ...]:
        if self._next_reset is None or now >= self._next_reset:
            self._periods = current_periods(now)
            self._next_reset = self._periods["day"].resets_at  # a month ends on a day's end
            self._lines.clear()
            self.local.forget_before(now)
        key = (limits, info.key_id, info.team_id)
        lines = self._lines.get(key)
        if lines is None:
            if len(self._lines) >= MAX_CACHED_LINES:
                self._lines.clear()
            lines = self._lines[key] = tuple(
                lines_in(limits, info.key_id, info.team_id, self._periods)
            )
        return lines

    def plan(
        self, info: KeyInfo, model: ModelConfig, body_bytes: int, completion_tokens: int
    ) -> BudgetPlan | None:
        """The call's budget lines and the most it may cost; None without budgets."""
        limits = info.budget
        if limits is None or not self.config.enabled:
            return None
        now = self.clock()
        amount = reservation(
            model, body_bytes, completion_tokens, self.config.body_bytes_per_prompt_token
        )
        return BudgetPlan(self._lines_of(limits, info, now), amount, now)

    async def admit(
        self, info: KeyInfo, model: ModelConfig, body_bytes: int, completion_tokens: int
    ) -> Hold | None:
        """Hold the call's most possible cost on every budget of `info`, or raise a 429/503."""
        plan = self.plan(info, model, body_bytes, completion_tokens)
        if plan is None:
            return None
        if self.shared is not None and self.redis_up:
            try:
                async with asyncio.timeout(self.store_config.redis_timeout_s):
                    overrun = await self.shared.reserve(plan.lines, plan.amount)
            except STORE_ERRORS as error:
                self.store_failed(error)
            else:
                if overrun is not None:
                    raise self.refusal(info, plan, overrun)
                return plan.hold(info, "redis")
        return self.unshared_admit(info, plan)

    def unshared_admit(self, info: KeyInfo, plan: BudgetPlan) -> Hold:
        """Admission without Redis: this process's spend, or a 503 where the store fails closed."""
        if self.shared is not None:
            if self.config.on_redis_failure == "closed":
                self.counts.store["failed_closed"] += 1
                raise BudgetsUnavailable(max(self._skip_until - time.monotonic(), 1.0))
            self.counts.store["failed_open"] += 1
        overrun = self.local.reserve(plan.lines, plan.amount)
        if overrun is not None:
            raise self.refusal(info, plan, overrun)
        return plan.hold(info, "memory")

    def refusal(self, info: KeyInfo, plan: BudgetPlan, overrun: Overrun) -> BudgetExceeded:
        """The 429 for a budget that refused the call, counted and shown."""
        self._refused(info, overrun.line, overrun.spent)
        return BudgetExceeded(overrun, self._name(info, overrun.line), plan.now, plan.amount)

    def store_failed(self, error: BaseException) -> None:
        """Count a failed admission command and leave Redis alone for `redis_retry_s`."""
        self._failed(error, "admission")

    async def settle(self, hold: Hold, record: CallRecord) -> None:
        """Replace what the call held by its recorded cost (never raises)."""
        cost = recorded_cost(record)
        if hold.store == "memory" or self.shared is None:
            levels = self.local.settle(hold.lines, hold.amount, cost)
        else:
            try:
                async with asyncio.timeout(self.config.settle_timeout_s):
                    levels = await self.shared.settle(hold.lines, hold.amount, cost)
            except STORE_ERRORS as error:
                self.settlement_lost(error)
                return
        self.settled(hold, levels)

    def settlement_lost(self, error: BaseException) -> None:
        """Count a charge that did not reach Redis."""
        # The hold stands until the period's spend expires: spend is over-counted.
        self._failed(error, "settlement")
        self.counts.settlements_lost += 1

    def settled(self, hold: Hold, levels: list[tuple[int, bool]]) -> None:
        """Show each line's spend after a charge; announce the soft levels this call reached."""
        for line, (spent, reached) in zip(hold.lines, levels, strict=True):
            self._show(hold, line, spent)
            if reached:
                self._announce(hold, Crossing(line, spent))

    def _name(self, info: KeyInfo, line: BudgetLine) -> str:
        return info.prefix if line.scope == "key" else info.team_name

    def _refused(self, info: KeyInfo, line: BudgetLine, spent: int) -> None:
        key = (line.scope, line.period.kind)
        self.counts.refusals[key] = self.counts.refusals.get(key, 0) + 1
        self._show(Hold((), 0, "", info.team_name, info.prefix), line, spent)

    def _show(self, hold: Hold, line: BudgetLine, spent: int) -> None:
        shown = self.counts.shown
        key_label = hold.key_prefix if line.scope == "key" else ""
        label = (line.scope, hold.team_name, key_label, line.period.kind)
        shown.pop(label, None)
        shown[label] = (spent, line.limit)
        if len(shown) > MAX_SHOWN:
            shown.pop(next(iter(shown)))

    def _announce(self, hold: Hold, crossing: Crossing) -> None:
        if self.notices is None or not self.notices.channels:
            log.warning("budget soft level reached but no notify channel is configured")
            return
        facts = notice_facts(crossing, hold.owner_name(crossing.line), hold.team_name)
        for channel in self.notices.channels:
            task = asyncio.create_task(self._send(channel, facts))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, channel: ChannelSettings, facts: dict[str, object]) -> None:
        assert self.notices is not None
        delivered = await deliver_notice(
            self.notices.http,
            channel,
            dict(facts),
            attempts=self.config.notify_attempts,
            timeout_s=self.notices.timeout_s,
        )
        self.counts.notices["delivered" if delivered else "failed"] += 1

    async def spent(self, lines: list[BudgetLine]) -> list[tuple[int, int]] | None:
        """(spent, held) on each line, from the store calls are admitted by; None if unreadable."""
        if self.shared is None:
            return [self.local.spent(line) for line in lines]
        try:
            async with asyncio.timeout(self.store_config.redis_timeout_s):
                return await self.shared.spent(lines)
        except STORE_ERRORS as error:
            self._failed(error, "read")
            return None

    def _failed(self, error: BaseException, step: str) -> None:
        self.counts.store["timeout" if isinstance(error, TimeoutError) else "error"] += 1
        if time.monotonic() >= self._skip_until:
            log.warning(
                "budget store failed at %s (%s); %s for %.1f s",
                step,
                type(error).__name__,
                "admitting by local spend"
                if self.config.on_redis_failure == "open"
                else "refusing calls with budgets",
                self.store_config.redis_retry_s,
            )
        self._skip_until = time.monotonic() + self.store_config.redis_retry_s

    @property
    def redis_up(self) -> bool:
        """Whether the Redis store is being asked (False while skipped after a failure)."""
        return time.monotonic() >= self._skip_until

    async def aclose(self) -> None:
        """Stop sending notices and close the Redis connections, if any."""
        for task in list(self._sending):
            task.cancel()
        await asyncio.gather(*self._sending, return_exceptions=True)
        if self.shared is not None:
            await self.shared.aclose()
