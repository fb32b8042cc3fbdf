"""Redactor: find secrets and personal data in text and replace them before anything is stored.

Every pattern has bounded repetition, so a megabyte of hostile text costs linear time in the
log sink's writer thread (the only place redaction runs). Card numbers must pass the Luhn check,
so order ids and phone numbers are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

EMAIL = r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}"
EMAIL_LOCAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
EMAIL_MAX = 64 + 1 + 9 * 64 + 25
# Each API key pattern with the lower-case strings one of which any match contains: checking
# those with `in` is far cheaper than a regex pass per pattern over clean text.
API_KEY_RULES = (
    (("pl-",), r"\bpl-[0-9a-f]{10}\.[A-Za-z0-9_-]{16,128}"),  # Plumbline's own keys
    (
        ("sk-",),
        r"\bsk-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_-]{20,256}",
    ),  # OpenAI, Anthropic, Stripe
    (("akia", "asia"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b"),  # GitHub
    (("xox",), r"\bxox[abprs]-[A-Za-z0-9-]{10,256}"),  # Slack tokens
    (("aiza",), r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
    (("eyj",), r"\beyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}"),  # JWT
    (("bearer",), r"(?i)\bbearer\s{1,8}[A-Za-z0-9._~+/=-]{16,1024}"),
    (
        ("api", "secret", "token", "passw"),
        r"(?i)(?<=[\"'\s(])(?:api[_-]?key|secret|token|password|passwd)[\"']?\s{0,4}[:=]\s{0,4}"
        r"[\"']?[^\s\"',;]{8,256}",
    ),
)
API_KEYS = tuple(pattern for _, pattern in API_KEY_RULES)
# Letters an ignore-case pattern matches as `i` and `s` though `lower()` leaves them as they are.
CASE_FOLDS = str.maketrans("\u0131\u017f", "is")
CARD = r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)"
MARK = "[REDACTED:{kind}]"


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn checksum (every card number does)."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of text to replace, and what kind of secret it is."""

    start: int
    end: int
    kind: str


class Redactor:
    """Replaces emails, API keys and tokens, card numbers and configured patterns."""

    def __init__(
        self,
        *,
        emails: bool = True,
        api_keys: bool = True,
        card_numbers: bool = True,
        extra_patterns: Iterable[str] = (),
    ) -> None:
        self._key_rules = [(hints, re.compile(p)) for hints, p in API_KEY_RULES] if api_keys else []
        self._custom_rules = [("custom", re.compile(p)) for p in extra_patterns]
        self._email = re.compile(EMAIL) if emails else None
        self._card = re.compile(CARD) if card_numbers else None

    def _emails(self, text: str) -> list[Span]:
        # Anchored on each "@": a plain regex scan retries the local part at every position,
        # which costs 64 steps per character of a long run of letters.
        assert self._email is not None
        found: list[Span] = []
        last = 0
        at = text.find("@")
        while at >= 0:
            start = at
            while start > max(at - 64, last) and text[start - 1] in EMAIL_LOCAL:
                start -= 1
            match = self._email.match(text, start, at + EMAIL_MAX) if start < at else None
            if match is not None:
                found.append(Span(match.start(), match.end(), "email"))
                last = match.end()
            at = text.find("@", max(at + 1, last))
        return found

    def spans(self, text: str) -> list[Span]:
        """Non-overlapping stretches of `text` to replace, in order."""
        found: list[Span] = []
        lowered = text.lower().translate(CASE_FOLDS)
        rules = [
            ("api_key", pattern)
            for hints, pattern in self._key_rules
            if any(hint in lowered for hint in hints)
        ]
        for kind, pattern in rules + self._custom_rules:
            found += [Span(m.start(), m.end(), kind) for m in pattern.finditer(text) if m.end()]
        if self._email is not None:
            found += self._emails(text)
        # A card number has at least 13 digits; counting them is cheaper than the pattern.
        if self._card is not None and sum(map(text.count, "0123456789")) >= 13:
            for match in self._card.finditer(text):
                digits = re.sub(r"[ -]", "", match.group())
                if 13 <= len(digits) <= 19 and luhn_valid(digits):
                    found.append(Span(match.start(), match.end(), "card"))
        found.sort(key=lambda s: (s.start, -s.end))
        merged: list[Span] = []
        for span in found:
            if merged and span.start < merged[-1].end:
                last = merged[-1]
                merged[-1] = Span(last.start, max(last.end, span.end), last.kind)
            else:
                merged.append(span)
        return merged

    def text(self, text: str) -> str:
        """`text` with every secret replaced by a marker naming its kind."""
        return self.pieces([text])[0][0]

    def pieces(self, pieces: list[str]) -> tuple[list[str], set[int]]:
        """Redact text that arrives cut into pieces (stream deltas, tokens) as one text.

        Returns the new pieces and the indices of those that changed. A secret cut across
        pieces leaves its marker in the piece where it starts and is removed from the others.
        """
        text = "".join(pieces)
        spans = self.spans(text)
        if not spans:
            return pieces, set()
        out: list[str] = []
        changed: set[int] = set()
        position = current = 0
        for index, piece in enumerate(pieces):
            at, end = position, position + len(piece)
            position = end
            parts: list[str] = []
            while at < end:
                while current < len(spans) and spans[current].end <= at:
                    current += 1
                if current == len(spans) or spans[current].start >= end:
                    parts.append(text[at:end])
                    break
                span = spans[current]
                if span.start > at:
                    parts.append(text[at : span.start])
                    at = span.start
                if at == span.start:
                    parts.append(MARK.format(kind=span.kind))
                at = min(span.end, end)
            new = "".join(parts)
            if new != piece:
                changed.add(index)
            out.append(new)
        return out, changed
