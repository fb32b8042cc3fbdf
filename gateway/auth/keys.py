"""Key format and hashing: `pl-<prefix>.<secret>`, stored as a salted SHA-256 of the secret."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from gateway.auth.scopes import LEGACY_SCOPES
from gateway.governance.model_access import ModelAccess

if TYPE_CHECKING:
    from gateway.governance.budgets.limits import BudgetLimits

KEY_PREFIX = "pl-"
PREFIX_LENGTH = 10


@dataclass(frozen=True, slots=True)
class NewKey:
    """A freshly generated key: the plaintext is shown once, only the hash is stored."""

    plaintext: str
    prefix: str
    salt: str
    key_hash: str


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """What a verified key grants: its team, admin scope, its own and its team's policies."""

    key_id: int
    team_id: int
    team_name: str
    is_admin: bool
    store_bodies: bool
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    key_requests_per_minute: int | None = None
    key_tokens_per_minute: int | None = None
    # The team's retention class, copied onto each call's rows.
    retention_days: int = 0
    prefix: str = ""
    # When a rotated key's grace period ends (None: the key has no end).
    revokes_at: datetime | None = None
    # Spend budgets of the key and its team (gateway.governance.budgets); None: none set.
    budget: BudgetLimits | None = None
    # Scopes and expiry (gateway/auth/scopes.py): what the key may do, and until when; an
    # expired key is refused at resolve time, also from the key cache.
    scopes: frozenset[str] = LEGACY_SCOPES
    expires_at: datetime | None = None
    # Model access: the team's and the key's model lists (admin keys get none: every model).
    models: ModelAccess = field(default_factory=ModelAccess)

    @property
    def actor(self) -> str:
        """How this key is named in the audit log."""
        return f"key {self.prefix} ({self.team_name})"


def hash_secret(secret: str, salt: str, pepper: str) -> str:
    """Salted (per key) and peppered (per deployment) SHA-256 of a key's secret."""
    return hashlib.sha256(f"{salt}:{pepper}:{secret}".encode()).hexdigest()


def generate_key(pepper: str) -> NewKey:
    """Make a new random key."""
    prefix = secrets.token_hex(PREFIX_LENGTH // 2)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    return NewKey(f"{KEY_PREFIX}{prefix}.{secret}", prefix, salt, hash_secret(secret, salt, pepper))


def split_key(plaintext: str) -> tuple[str, str] | None:
    """(prefix, secret) of a well-formed key, else None."""
    if not plaintext.startswith(KEY_PREFIX):
        return None
    prefix, dot, secret = plaintext[len(KEY_PREFIX) :].partition(".")
    if not dot or len(prefix) != PREFIX_LENGTH or not secret:
        return None
    return prefix, secret


def verify_secret(secret: str, salt: str, pepper: str, key_hash: str) -> bool:
    """Constant-time comparison of a presented secret with the stored hash."""
    return hmac.compare_digest(hash_secret(secret, salt, pepper), key_hash)


# Compared against when the prefix is unknown, so a miss costs what a wrong secret costs.
DUMMY_SALT = "0" * 32
DUMMY_HASH = "0" * 64


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
