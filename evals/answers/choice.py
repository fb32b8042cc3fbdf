"""Choice answers: which one of a fixed set of options (or their aliases) the text names."""

from __future__ import annotations

import re

from evals.answers.outcome import AnswerOutcome, ParsedAnswer, ParseFailure
from plumbline.answers.normalize import answer_line, normalize_text
from plumbline.answers.specs import ChoiceAnswer


def parse_choice(spec: ChoiceAnswer, text: str) -> AnswerOutcome:
    """The option a completion names; naming none or several is a parse failure."""
    spellings = _spellings(spec)
    line = answer_line(text)
    for region in ([line] if line is not None else []) + [text]:
        norm = normalize_text(region)
        if norm in spellings:
            return ParsedAnswer(spellings[norm])
        named = _named_options(norm, spellings)
        if len(named) == 1:
            return ParsedAnswer(named[0])
        if len(named) > 1:
            return ParseFailure("ambiguous: names " + ", ".join(repr(n) for n in named))
    return ParseFailure("names none of the options")


def _spellings(spec: ChoiceAnswer) -> dict[str, str]:
    return {
        normalize_text(spelling): option.value
        for option in spec.options
        for spelling in (option.value, *option.aliases)
    }


def _named_options(norm: str, spellings: dict[str, str]) -> list[str]:
    # Longest spellings claim their span first, so "not applicable" hides "applicable".
    claimed: list[tuple[int, int]] = []
    named: list[str] = []
    for spelling in sorted(spellings, key=len, reverse=True):
        for match in re.finditer(rf"(?<!\S){re.escape(spelling)}(?!\S)", norm):
            if any(s < match.end() and match.start() < e for s, e in claimed):
                continue
            claimed.append(match.span())
            if spellings[spelling] not in named:
                named.append(spellings[spelling])
    return named
