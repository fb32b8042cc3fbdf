"""SQuAD-style text normalisation and the final `Answer:` line convention."""

from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation + "\u2018\u2019\u201c\u201d\u2013\u2014")
_ANSWER_LINE = re.compile(
    r"^[ \t>*_#-]*(?:final[ \t]+)?answer[ \t*_]*[:\uff1a][ \t]*(?P<answer>.*?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_WRAPPING = " \t*_`\"'"


def normalize_text(text: str) -> str:
    """Lowercase, strip punctuation, drop a/an/the and collapse whitespace (SQuAD)."""
    lowered = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", lowered).split())


def answer_line(text: str) -> str | None:
    """The text after the last `Answer:` line marker, or None when there is none."""
    found = None
    for match in _ANSWER_LINE.finditer(text):
        if match.group("answer").strip(_WRAPPING):
            found = match.group("answer").strip(_WRAPPING)
    return found


def answer_region(text: str) -> str:
    """The part of a completion that holds the answer: the `Answer:` line if any, else all."""
    line = answer_line(text)
    return line if line is not None else text
