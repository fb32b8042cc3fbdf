"""KeyCache: verified keys held in memory for a short time so the hot path skips the database."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from datetime import UTC, datetime
from typing import TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth.key_lookups import KeyLookups
from gateway.auth.keys import KeyInfo, split_key
from gateway.auth.lookup_errors import FailedLookupsThrottled, KeyLookupsBusy
from gateway.auth.lookup_throttle import FailedLookupThrottle
from gateway.auth.prefix_flights import PrefixFlights
from gateway.config import KeyLookupLimits

log = logging.getLogger(__name__)
POSITIVE_TTL_S = 30.0
NEGATIVE_TTL_S = 5.0
# How long past its TTL a granted key is still served while a background lookup refreshes it:
# a slow or hung database then delays revocations, never calls.
STALE_S = 300.0
# After a failed background refresh a key is looked up again only this much later: a database
# that is down then costs one attempt per key every few seconds, not one per call.
REFRESH_RETRY_S = NEGATIVE_TTL_S
K = TypeVar("K")
V = TypeVar("V")


class KeyCache:
    """Resolves presented keys, caching verdicts (revocation takes effect within the TTL).

    Unknown keys are cached apart from granted ones, looked up on their own bounded threads,
    one lookup per prefix at a time, and each client address may cause only so many that fail.
    """

    def __init__(
        self,
        sessions: sessionmaker[Session],
        pepper: str,
        lookups: KeyLookups,
        ttl_s: float = POSITIVE_TTL_S,
        limits: KeyLookupLimits | None = None,
    ) -> None:
        self._sessions = sessions
        self._pepper = pepper
        self._lookups = lookups
        self.ttl_s = ttl_s
        self.limits = limits or KeyLookupLimits()
        self._entries: OrderedDict[bytes, tuple[float, KeyInfo]] = OrderedDict()
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

    async def resolve(self, plaintext: str, client: str | None = None) -> KeyInfo | None:
        """A key's grants: from memory when fresh (or stale while refreshed), else the database.

        `client` is the caller's address, whose failed lookups are throttled (a 429).
        """
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
        try:
            info = await anyio.to_thread.run_sync(self._lookup, plaintext, limiter=threads)
        except SQLAlchemyError:
            # Database away: keep serving keys we verified before rather than fail every call.
            cached = self._entries.get(digest)
            if cached is not None:
                self._entries[digest] = (time.monotonic() + NEGATIVE_TTL_S, cached[1])
                return cached[1]
            raise
        self._store(digest, info)
        return info

    def _servable_stale(self, cached: tuple[float, KeyInfo], now: float) -> bool:
        """A granted key within STALE_S of its expiry and not past a rotation's grace period."""
        expires, info = cached
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
        try:
            info = await anyio.to_thread.run_sync(
                self._lookup, plaintext, limiter=self._known_threads
            )
        except SQLAlchemyError as error:
            log.warning("key lookup failed; serving the cached verdict: %s", error)
            retry_at = time.monotonic() + REFRESH_RETRY_S
            _bounded_put(self._refresh_after, digest, retry_at, self.limits.max_granted_keys)
        else:
            self._refresh_after.pop(digest, None)
            self._store(digest, info)
        finally:
            self._refreshing.pop(digest, None)

    async def settle(self) -> None:
        """Wait for the background refreshes under way (tests use it to see their outcome)."""
        while self._refreshing:
            await asyncio.gather(*self._refreshing.values(), return_exceptions=True)

    def _store(self, digest: bytes, info: KeyInfo | None) -> None:
        expires = time.monotonic() + self._ttl(info)
        if info is None:
            self._entries.pop(digest, None)
            _bounded_put(self._unknown, digest, expires, self.limits.max_unknown_keys)
            return
        self._unknown.pop(digest, None)
        _bounded_put(self._entries, digest, (expires, info), self.limits.max_granted_keys)
        _bounded_put(self._granted_prefixes, info.prefix, None, self.limits.max_granted_keys)

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
            return cached[1]
        info = await anyio.to_thread.run_sync(self._team_lookup, name, limiter=self._known_threads)
        # Names come from an admin's X-Plumbline-Team header: bounded like unknown keys.
        _bounded_put(self._teams, name, (now + self.ttl_s, info), self.limits.max_unknown_keys)
        return info

    def _team_lookup(self, name: str) -> KeyInfo | None:
        with self._sessions() as session:
            return self._lookups.team_info(session, name)

    def forget_all(self) -> None:
        """Drop every cached verdict (after a key or team change through this gateway's API)."""
        self._entries.clear()
        self._unknown.clear()
        self._teams.clear()
        self._refresh_after.clear()

    def _lookup(self, plaintext: str) -> KeyInfo | None:
        with self._sessions() as session:
            return self._lookups.authenticate(session, plaintext, self._pepper)


def _bounded_put(entries: OrderedDict[K, V], key: K, value: V, bound: int) -> None:
    """Insert as the newest entry, dropping the oldest beyond `bound`."""
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > bound:
        entries.popitem(last=False)
