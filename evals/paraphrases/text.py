"""Paraphrase text rules: identity by normalised text, and checks against the canonical question."""

from __future__ import annotations

import hashlib
import re

from evals.answers import normalize_text

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
MIN_LENGTH_RATIO = 0.3
MAX_LENGTH_RATIO = 3.0


def text_hash(text: str) -> str:
    """SHA-256 of the SQuAD-normalised text: wordings apart only in case or punctuation match."""
    return hashlib.sha256(normalize_text(text).encode()).hexdigest()


def rejection_reason(candidate: str, canonical: str) -> str | None:
    """Why a generated paraphrase cannot stand in for the canonical question, or None."""
    text = candidate.strip()
    if not text:
        return "empty"
    if text_hash(text) == text_hash(canonical):
        return "same as the canonical question"
    ratio = len(text) / max(len(canonical.strip()), 1)
    if not MIN_LENGTH_RATIO <= ratio <= MAX_LENGTH_RATIO:
        return f"length {len(text)} is far from the question's {len(canonical.strip())}"
    # Numbers name the facts asked about (clause 7.2, 2024): a paraphrase may not drop them.
    missing = set(_NUMBER.findall(canonical)) - set(_NUMBER.findall(text))
    if missing:
        return f"drops {', '.join(sorted(missing))}"
    return None
