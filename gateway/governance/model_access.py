"""Model access: the configured models a key may call, from its team's and its own patterns.

A list holds exact names or fnmatch-style patterns (`llama-8b*`, `org/*-instruct`), matched
case-sensitively as the proxy matches model names. No list (None) allows every model; a key's
effective set is what both its team's and its own lists allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

MAX_PATTERNS = 64
MAX_PATTERN_CHARS = 128
Patterns = tuple[str, ...] | None


def check_patterns(value: object, where: str = "allowed_models") -> list[str] | None:
    """A model list as stored (None: every model); ValueError says what is wrong with it."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f'`{where}` is a list of model names or patterns, e.g. ["llama-8b*"].')
    if len(value) > MAX_PATTERNS:
        raise ValueError(f"`{where}` holds at most {MAX_PATTERNS} names or patterns.")
    patterns: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item:
            raise ValueError(f"Each entry of `{where}` is a non-empty string.")
        if len(item) > MAX_PATTERN_CHARS:
            raise ValueError(f"Each entry of `{where}` is at most {MAX_PATTERN_CHARS} characters.")
        if not item.isprintable() or any(c.isspace() for c in item):
            raise ValueError(
                f"Entries of `{where}` hold no spaces or control characters: `{item[:64]!r}`."
            )
        patterns.append(item)
    # Empty means every model, as no list does: one stored form for both.
    return list(dict.fromkeys(patterns)) or None


def stored_patterns(value: object) -> Patterns:
    """Patterns read back from the database; a malformed value allows no model (fail closed)."""
    try:
        checked = check_patterns(value)
    except ValueError:
        return ()
    return None if checked is None else tuple(checked)


def _matches(patterns: Patterns, name: str) -> bool:
    return patterns is None or any(fnmatchcase(name, pattern) for pattern in patterns)


@dataclass(frozen=True, slots=True)
class ModelAccess:
    """A team's and a key's model lists, with the allowed set of configured models memoised."""

    team: Patterns = None
    key: Patterns = None
    # (configured names, allowed names) of the last configuration asked about.
    _memo: list[tuple[tuple[str, ...], frozenset[str]]] = field(
        default_factory=list, compare=False, repr=False
    )

    @property
    def restricted(self) -> bool:
        """Whether some list narrows the models (else every configured model is allowed)."""
        return self.team is not None or self.key is not None

    def allowed(self, configured: tuple[str, ...]) -> frozenset[str]:
        """The configured models both lists allow: matched once per configuration, then reused."""
        memo = self._memo
        if memo and (memo[0][0] is configured or memo[0][0] == configured):
            return memo[0][1]
        found = frozenset(
            name for name in configured if _matches(self.team, name) and _matches(self.key, name)
        )
        memo[:] = [(configured, found)]
        return found

    def permits(self, name: str, configured: tuple[str, ...]) -> bool:
        """Whether the lists let a call name this model (whether it exists is the caller's)."""
        return not self.restricted or name in self.allowed(configured)

    def visible(self, configured: tuple[str, ...]) -> list[str]:
        """The configured models this key may call, in configuration order."""
        if not self.restricted:
            return list(configured)
        allowed = self.allowed(configured)
        return [name for name in configured if name in allowed]
