"""KeyCache: verified keys held in memory for a short time so the hot path skips the database."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from datetime import UTC, datetime

import anyio.to_thread
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from gateway.auth.keys import KeyInfo
from gateway.auth.service import authenticate, team_info

log = logging.getLogger(__name__)
POSITIVE_TTL_S = 30.0
NEGATIVE_TTL_S = 5.0
# How long past its TTL a granted key is still served while a background lookup refreshes it:
# a slow or hung database then delays revocations, never calls.
STALE_S = 300.0
MAX_ENTRIES = 10_000


class KeyCache:
    """Resolves presented keys, caching verdicts (revocation takes effect within the TTL)."""

    def __init__(
        self, sessions: sessionmaker[Session], pepper: str, ttl_s: float = POSITIVE_TTL_S
    ) -> None:
        self._sessions = sessions
        self._pepper = pepper
        self.ttl_s = ttl_s
        self._entries: OrderedDict[bytes, tuple[float, KeyInfo | None]] = OrderedDict()
        self._teams: dict[str, tuple[float, KeyInfo | None]] = {}
        # Background refreshes of stale keys: one per key, referenced so none is collected.
        self._refreshing: dict[bytes, asyncio.Task[None]] = {}

    async def resolve(self, plaintext: str) -> KeyInfo | None:
        """A key's grants: from memory when fresh (or stale while refreshed), else the database."""
        digest = hashlib.sha256(plaintext.encode()).digest()
        cached = self._entries.get(digest)
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        if cached is not None and self._servable_stale(cached, now):
            self._refresh_later(digest, plaintext)
            return cached[1]
        try:
            info = await anyio.to_thread.run_sync(self._lookup, plaintext)
        except SQLAlchemyError:
            # Database away: keep serving keys we verified before rather than fail every call.
            if cached is not None:
                self._entries[digest] = (now + NEGATIVE_TTL_S, cached[1])
                return cached[1]
            raise
        self._store(digest, info)
        return info

    def _servable_stale(self, cached: tuple[float, KeyInfo | None], now: float) -> bool:
        """A granted key within STALE_S of its expiry and not past a rotation's grace period."""
        expires, info = cached
        if info is None or now > expires + STALE_S:
            return False
        return info.revokes_at is None or info.revokes_at > datetime.now(UTC)

    def _refresh_later(self, digest: bytes, plaintext: str) -> None:
        if digest not in self._refreshing:
            task = asyncio.get_running_loop().create_task(self._refresh(digest, plaintext))
            self._refreshing[digest] = task

    async def _refresh(self, digest: bytes, plaintext: str) -> None:
        try:
            info = await anyio.to_thread.run_sync(self._lookup, plaintext)
        except SQLAlchemyError as error:
            log.warning("key lookup failed; serving the cached verdict: %s", error)
        else:
            self._store(digest, info)
        finally:
            self._refreshing.pop(digest, None)

    async def settle(self) -> None:
        """Wait for the background refreshes under way (tests use it to see their outcome)."""
        while self._refreshing:
            await asyncio.gather(*self._refreshing.values(), return_exceptions=True)

    def _store(self, digest: bytes, info: KeyInfo | None) -> None:
        self._entries[digest] = (time.monotonic() + self._ttl(info), info)
        self._entries.move_to_end(digest)
        while len(self._entries) > MAX_ENTRIES:
            self._entries.popitem(last=False)

    def _ttl(self, info: KeyInfo | None) -> float:
        """How long a verdict may be reused: never past the end of a key's grace period."""
        if info is None:
            return min(NEGATIVE_TTL_S, self.ttl_s)
        if info.revokes_at is None:
            return self.ttl_s
        left = (info.revokes_at - datetime.now(UTC)).total_seconds()
        return max(0.0, min(self.ttl_s, left))

    async def team(self, name: str) -> KeyInfo | None:
        """A team's policies as a KeyInfo without a key (for admin calls made on its behalf)."""
        now = time.monotonic()
        cached = self._teams.get(name)
        if cached is not None and cached[0] > now:
            return cached[1]
        info = await anyio.to_thread.run_sync(self._team_lookup, name)
        self._teams[name] = (now + self.ttl_s, info)
        return info

    def _team_lookup(self, name: str) -> KeyInfo | None:
        with self._sessions() as session:
            return team_info(session, name)

    def forget_all(self) -> None:
        """Drop every cached verdict (after a key or team change through this gateway's API)."""
        self._entries.clear()
        self._teams.clear()

    def _lookup(self, plaintext: str) -> KeyInfo | None:
        with self._sessions() as session:
            return authenticate(session, plaintext, self._pepper)
