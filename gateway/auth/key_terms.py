"""KeyTerms: a new key's scopes, expiry and note, validated together (clear 400s)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from gateway.auth.key_expiry import parse_expiry
from gateway.auth.scopes import checked_scopes, stored_scopes
from gateway.errors import GatewayError

MAX_NOTE_CHARS = 500


@dataclass(frozen=True, slots=True)
class KeyTerms:
    """What goes into a key row's `scopes`, `expires_at` and `note` columns."""

    scopes: str | None = None
    expires_at: datetime | None = None
    note: str | None = None

    def audited(self) -> dict[str, object]:
        """The terms as an audit entry's details."""
        return {
            "scopes": self.scopes.split(",") if self.scopes else None,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "note": self.note,
        }


def check_note(note: str | None) -> str | None:
    """The note, at most MAX_NOTE_CHARS and free of control characters (it is printed)."""
    if note is None:
        return None
    if len(note) > MAX_NOTE_CHARS:
        raise GatewayError(
            400, f"`note` is {len(note)} characters; it may have {MAX_NOTE_CHARS}.", "note"
        )
    # A note reaches operators' terminals (`plumbline keys list`): no escape sequences.
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in note):
        raise GatewayError(400, "`note` may not contain control characters.", "note")
    return note or None


def key_terms(
    scopes: Iterable[str] | None,
    expires: str | None,
    note: str | None,
    *,
    admin: bool,
    now: datetime,
) -> KeyTerms:
    """Validated terms of a new key: scopes (None: all three), expiry (None: never), note."""
    chosen = checked_scopes(scopes, admin=admin)
    return KeyTerms(
        scopes=None if chosen is None else stored_scopes(chosen),
        expires_at=None if expires is None else parse_expiry(expires, now),
        note=check_note(note),
    )
