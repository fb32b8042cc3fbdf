"""Regex answers: a capture group of the first match in the completion."""

from __future__ import annotations

import re

from evals.answers.outcome import AnswerOutcome, ParsedAnswer, ParseFailure
from plumbline.answers.normalize import normalize_text
from plumbline.answers.specs import RegexAnswer


def parse_regex(spec: RegexAnswer, text: str) -> AnswerOutcome:
    """The configured group of the first match, normalised unless the spec says not to."""
    flags = re.IGNORECASE if spec.ignore_case else 0
    match = re.search(spec.pattern, text, flags | re.MULTILINE)
    if match is None:
        return ParseFailure("pattern did not match")
    value = match.group(spec.group)
    if value is None:
        return ParseFailure(f"group {spec.group!r} did not take part in the match")
    return key_for_captured(spec, value)


def key_for_captured(spec: RegexAnswer, value: str) -> AnswerOutcome:
    """The key of a captured (or expected) value."""
    key = normalize_text(value) if spec.normalize else value.strip()
    return ParsedAnswer(key) if key else ParseFailure("captured text is empty")
