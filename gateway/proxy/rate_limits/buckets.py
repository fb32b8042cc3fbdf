"""Which buckets a call takes from, and how much: the same for the memory and the Redis store."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.auth.keys import KeyInfo
from gateway.proxy.lax_values import RequestFields

# A finished call's usage beyond this is taken as this (a hostile backend's counts).
MAX_SETTLED_TOKENS = 2**53


@dataclass(frozen=True, slots=True)
class Take:
    """One bucket of a call: whose, which unit, its limit per minute, and what is taken."""

    scope: str  # "key" or "team"
    unit: str  # "requests" or "tokens"
    owner: int  # the key's or the team's id
    team: int  # the team of the presented key: Redis keeps one call's buckets in one slot
    limit: int
    amount: int

    @property
    def capacity(self) -> float:
        """What the bucket holds when full: one minute's allowance (at least one unit)."""
        return float(max(self.limit, 1))


@dataclass(frozen=True, slots=True)
class Grant:
    """What an admitted call took, so its tokens can be settled once its usage is known."""

    tokens: tuple[Take, ...] = ()
    # Where the buckets were taken from ("memory" or "redis").
    store: str = "memory"

    def delta(self, used: int) -> dict[Take, int]:
        """Tokens each token bucket is still owed (negative: handed back)."""
        used = min(max(0, used), MAX_SETTLED_TOKENS)
        return {take: used - take.amount for take in self.tokens}

    def owed(self, used: int) -> dict[Take, int]:
        """The token buckets that are owed anything, and how much."""
        return {take: amount for take, amount in self.delta(used).items() if amount}


NO_GRANT = Grant()


def reserved_tokens(fields: RequestFields, assumed_max_tokens: int) -> int:
    """Tokens a call may generate, reserved at admission: max_tokens (or the assumed) per choice."""
    if fields.n is None:
        return 0  # pooling: nothing generated; its input is charged when it ends
    limit = fields.max_tokens
    per_choice = limit if type(limit) is int and limit > 0 else assumed_max_tokens
    choices = fields.n if type(fields.n) is int and fields.n > 0 else 1
    return per_choice * choices


def takes_of(info: KeyInfo, reserve: int) -> tuple[Take, ...]:
    """The buckets a call of `info` must pass: requests, then tokens, key's and team's."""
    limits = (
        ("key", "requests", info.key_id, info.key_requests_per_minute, 1),
        ("team", "requests", info.team_id, info.requests_per_minute, 1),
        ("key", "tokens", info.key_id, info.key_tokens_per_minute, reserve),
        ("team", "tokens", info.team_id, info.tokens_per_minute, reserve),
    )
    return tuple(
        # A reservation above the bucket's size could never be admitted: it waits for a full one.
        Take(scope, unit, owner, info.team_id, limit, min(max(0, amount), max(limit, 1)))
        for scope, unit, owner, limit, amount in limits
        if limit is not None and limit > 0
    )
