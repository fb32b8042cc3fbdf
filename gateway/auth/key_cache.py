"""KeyCache: verified keys held in memory for a short time so the hot path skips the database."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from datetime import UTC, datetime

import anyio.to_thread
from anyio import CapacityLimiter
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth.bounded import bounded_put
from gateway.auth.invalidation.changes import KeyChange
from gateway.auth.invalidation.channel_state import ChannelState
from gateway.auth.key_lookups import KeyLookups
from gateway.auth.keys import KeyInfo, split_key
from gateway.auth.last_use import LastUse
from gateway.auth.lookup_errors import FailedLookupsThrottled, KeyExpired, KeyLookupsBusy
from gateway.auth.lookup_throttle import FailedLookupThrottle
from gateway.auth.prefix_flights import PrefixFlights
from gateway.config import KeyLastUsed, KeyLookupLimits

log = logging.getLogger(__name__)
POSITIVE_TTL_S = 30.0
NEGATIVE_TTL_S = 5.0
# How long past its TTL a granted key is still served while a background lookup refreshes it:
# a slow or hung database then delays revocations, never calls. Only while the invalidation
# channel is confirmed live (or none is configured): a revocation it carries drops the key anyway.
STALE_S = 300.0
# After a failed background refresh a key is looked up again only this much later: a database
# that is down then costs one attempt per key every few seconds, not one per call.
REFRESH_RETRY_S = NEGATIVE_TTL_S
# A granted key's cache entry: (expires, grants, when it was verified), monotonic times.
Granted = tuple[float, KeyInfo, float]


class KeyCache:
    """Resolves presented keys, caching verdicts (revocation takes effect within the TTL).

    Unknown keys are cached apart from granted ones, looked up on their own bounded threads,
    one lookup per prefix at a time, and each client address may cause only so many that fail.
    With an invalidation channel (`channel`), a committed change drops its keys at once; while
    the channel is not confirmed live a verdict is trusted for `channel.bound_s` only, then
    looked up again in the foreground, and never served stale.
    """

    def __init__(
        self,
        sessions: sessionmaker[Session],
        pepper: str,
        lookups: KeyLookups,
        ttl_s: float = POSITIVE_TTL_S,
        limits: KeyLookupLimits | None = None,
        last_use: LastUse | None = None,
    ) -> None:
        self._sessions = sessions
        self._pepper = pepper
        self._lookups = lookups
        self.ttl_s = ttl_s
        self.limits = limits or KeyLookupLimits()
        # Uses of granted keys, flushed to the database in batches by the lifecycle.
        self.last_use = last_use or LastUse(KeyLastUsed().max_keys)
        self._entries: OrderedDict[bytes, Granted] = OrderedDict()
        self._unknown: OrderedDict[bytes, float] = OrderedDict()
        # Prefixes of keys granted here: their lookups get threads a flood of others cannot take.
        self._granted_prefixes: OrderedDict[str, None] = OrderedDict()
        self._known_threads = CapacityLimiter(self.limits.lookup_threads)
        self._unknown_threads = CapacityLimiter(self.limits.lookup_threads)
        self._flights = PrefixFlights()
        self._throttle = FailedLookupThrottle(
            self.limits.failed_lookups_per_minute, self.limits.max_tracked_clients
        )
        self._teams: OrderedDict[str, tuple[float, KeyInfo | None]] = OrderedDict()
        # Background refreshes of stale keys: one per key, referenced so none is collected.
        self._refreshing: dict[bytes, asyncio.Task[None]] = {}
        # Keys whose last refresh failed: when the next one may start.
        self._refresh_after: OrderedDict[bytes, float] = OrderedDict()
        self.lookups_started = 0
        self.lookups_refused = 0
        self.lookups_throttled = 0
        # Granted keys looked up again because the channel was not confirmed live.
        self.rechecks = 0
        # None: no channel (one process); the TTL and STALE_S bound a change made elsewhere.
        self.channel: ChannelState | None = None
        # Bumped by every invalidation: a lookup that began before one does not cache its answer.
        self._generation = 0

    async def resolve(self, plaintext: str, client: str | None = None) -> KeyInfo | None:
        """A key's grants: from memory when fresh (or stale while refreshed), else the database.

        `client` is the caller's address, whose failed lookups are throttled (a 429). A key past
        its `expires_at` is a KeyExpired (401), compared here so a cached verdict ends on time.
        """
        info = await self._resolve(plaintext, client)
        if info is None:
            return None
        if info.expires_at is not None and info.expires_at <= datetime.now(UTC):
            raise KeyExpired(info.expires_at)
        self.last_use.note(info.key_id)
        return info

    async def _resolve(self, plaintext: str, client: str | None) -> KeyInfo | None:
        parts = split_key(plaintext)
        if parts is None:
            return None  # not a key at all: nothing to look up
        prefix = parts[0]
        digest = hashlib.sha256(plaintext.encode()).digest()
        while True:
            hit, info = self._cached(digest, plaintext)
            if hit:
                return info
            if not self._flights.busy(prefix):
                break
            await self._flights.wait(prefix)
        wait = self._throttle.retry_after(client)
        if wait is not None:
            self.lookups_throttled += 1
            raise FailedLookupsThrottled(wait)
        async with self._flights.turn(prefix):
            info = await self._look_up(digest, plaintext, prefix)
        if info is None:
            self._throttle.failed(client)
        return info

    def _cached(self, digest: bytes, plaintext: str) -> tuple[bool, KeyInfo | None]:
        """(True, verdict) from memory, or (False, None) when the database must be asked."""
        now = time.monotonic()
        granted = self._entries.get(digest)
        if granted is not None:
            if not self._confirmed(now):
                expires, info, verified = granted
                trusted = expires > now and now - verified < self._bound_s()
                return trusted, info if trusted else None
            if granted[0] > now:
                return True, granted[1]
            if self._servable_stale(granted, now):
                self._refresh_later(digest, plaintext)
                return True, granted[1]
        unknown_until = self._unknown.get(digest)
        return unknown_until is not None and unknown_until > now, None

    def _threads_for(self, prefix: str) -> CapacityLimiter:
        if prefix in self._granted_prefixes:
            return self._known_threads
        return self._unknown_threads

    async def _look_up(self, digest: bytes, plaintext: str, prefix: str) -> KeyInfo | None:
        threads = self._threads_for(prefix)
        if threads.statistics().tasks_waiting >= self.limits.max_waiting_lookups:
            self.lookups_refused += 1
            raise KeyLookupsBusy()
        self.lookups_started += 1
        generation = self._generation
        confirmed = self._confirmed(time.monotonic())
        if not confirmed and digest in self._entries:
            self.rechecks += 1
        try:
            info = await anyio.to_thread.run_sync(self._lookup, plaintext, limiter=threads)
        except SQLAlchemyError:
            # Database away: keep serving keys we verified before rather than fail every call,
            # unless a change to them may have been missed (the channel was not live).
            cached = self._entries.get(digest)
            if cached is not None and confirmed and self._confirmed(time.monotonic()):
                expires = time.monotonic() + NEGATIVE_TTL_S
                self._entries[digest] = (expires, cached[1], cached[2])
                return cached[1]
            raise
        self._store(digest, info, generation)
        return info

    def _confirmed(self, now: float) -> bool:
        return self.channel is None or self.channel.confirmed(now)

    def _bound_s(self) -> float:
        return 0.0 if self.channel is None else self.channel.bound_s

    def _servable_stale(self, cached: Granted, now: float) -> bool:
        """A granted key within STALE_S of its expiry and not past a rotation's grace period."""
        expires, info, _ = cached
        if now > expires + STALE_S:
            return False
        return info.revokes_at is None or info.revokes_at > datetime.now(UTC)

    def _refresh_later(self, digest: bytes, plaintext: str) -> None:
        if self._refresh_after.get(digest, 0.0) > time.monotonic():
            return
        if digest not in self._refreshing:
            task = asyncio.get_running_loop().create_task(self._refresh(digest, plaintext))
            self._refreshing[digest] = task

    async def _refresh(self, digest: bytes, plaintext: str) -> None:
        generation = self._generation
        try:
            info = await anyio.to_thread.run_sync(
                self._lookup, plaintext, limiter=self._known_threads
            )
        except SQLAlchemyError as error:
            log.warning("key lookup failed; serving the cached verdict: %s", error)
            retry_at = time.monotonic() + REFRESH_RETRY_S
            bounded_put(self._refresh_after, digest, retry_at, self.limits.max_granted_keys)
        else:
            self._refresh_after.pop(digest, None)
            self._store(digest, info, generation)
        finally:
            self._refreshing.pop(digest, None)

    async def settle(self) -> None:
        """Wait for the background refreshes under way (tests use it to see their outcome)."""
        while self._refreshing:
            await asyncio.gather(*self._refreshing.values(), return_exceptions=True)

    def _store(self, digest: bytes, info: KeyInfo | None, generation: int) -> None:
        if generation != self._generation:
            return  # invalidated while it was looked up: the answer may predate the change
        now = time.monotonic()
        expires = now + self._ttl(info)
        if info is None:
            self._entries.pop(digest, None)
            bounded_put(self._unknown, digest, expires, self.limits.max_unknown_keys)
            return
        self._unknown.pop(digest, None)
        bounded_put(self._entries, digest, (expires, info, now), self.limits.max_granted_keys)
        bounded_put(self._granted_prefixes, info.prefix, None, self.limits.max_granted_keys)

    def _ttl(self, info: KeyInfo | None) -> float:
        """How long a verdict may be reused: never past the end of a key's grace period."""
        if info is None:
            return min(NEGATIVE_TTL_S, self.ttl_s)
        if info.revokes_at is None:
            return self.ttl_s
        left = (info.revokes_at - datetime.now(UTC)).total_seconds()
        return max(0.0, min(self.ttl_s, left))

    def lookup_counts(self) -> dict[str, int]:
        """Key lookups by state and outcome, for /metrics."""
        known, unknown = self._known_threads.statistics(), self._unknown_threads.statistics()
        return {
            "running": int(known.borrowed_tokens + unknown.borrowed_tokens),
            "waiting": known.tasks_waiting + unknown.tasks_waiting,
            "started": self.lookups_started,
            "joined": self._flights.joined,
            "refused": self.lookups_refused,
            "throttled": self.lookups_throttled,
        }

    async def team(self, name: str) -> KeyInfo | None:
        """A team's policies as a KeyInfo without a key (for admin calls made on its behalf)."""
        now = time.monotonic()
        cached = self._teams.get(name)
        if cached is not None and cached[0] > now:
            if self._confirmed(now) or cached[0] - self.ttl_s > now - self._bound_s():
                return cached[1]
        info = await anyio.to_thread.run_sync(self._team_lookup, name, limiter=self._known_threads)
        # Names come from an admin's X-Plumbline-Team header: bounded like unknown keys.
        bounded_put(self._teams, name, (now + self.ttl_s, info), self.limits.max_unknown_keys)
        return info

    def _team_lookup(self, name: str) -> KeyInfo | None:
        with self._sessions() as session:
            return self._lookups.team_info(session, name)

    def forget(self, change: KeyChange) -> None:
        """Drop the verdicts a committed change may have made wrong: one key's, or a team's."""
        self._generation += 1
        doomed = [
            digest
            for digest, (_, info, _) in self._entries.items()
            if info.prefix == change.prefix or info.team_id == change.team_id
        ]
        for digest in doomed:
            del self._entries[digest]
            self._refresh_after.pop(digest, None)
        if change.team_id is not None:
            self._teams.clear()

    def forget_all(self) -> None:
        """Drop every cached verdict (after a key or team change through this gateway's API)."""
        self._generation += 1
        self._entries.clear()
        self._unknown.clear()
        self._teams.clear()
        self._refresh_after.clear()

    def _lookup(self, plaintext: str) -> KeyInfo | None:
        with self._sessions() as session:
            return self._lookups.authenticate(session, plaintext, self._pepper)
