"""Numbers in free text (digits or words, scales, currency, units), compared with tolerance."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from evals.answers.number_words import find_word_numbers
from evals.answers.outcome import ParseFailure
from plumbline.answers.normalize import answer_region
from plumbline.answers.specs import NumberAnswer
from plumbline.answers.units import UNIT_SPELLINGS, Unit, display_in_best_unit, find_unit

_DIGITS = re.compile(
    r"(?<![\w.,])(?P<sign>[-+\u2212])?(?P<cur>[$\u20ac\u00a3])?[ \t]?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])"
    r"(?:[ \t]*(?P<scale>thousand|million|billion|bn|k|m)\b)?",
    re.IGNORECASE,
)
_SCALE = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9}
_CURRENCY = {"$": "usd", "\u20ac": "eur", "\u00a3": "gbp"}
_UNIT_AFTER = re.compile(
    r"[ \t]*-?[ \t]*(?P<unit>" + "|".join(re.escape(s) for s in UNIT_SPELLINGS) + r")(?![A-Za-z])",
    re.IGNORECASE,
)
_ONE_UNIT = re.compile(r"\ban?\s+(?=[a-z])", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class NumberMention:
    """A number found in text with its unit (None when bare) and its position."""

    value: float
    unit: Unit | None
    start: int


@dataclass(frozen=True, slots=True)
class NumberReading:
    """A parsed numeric answer: its value in the answer's canonical unit and its dimension."""

    value: float
    dimension: str | None


def find_numbers(text: str) -> list[NumberMention]:
    """Every number in the text (digits, words, "a year"), in order, with any unit after it."""
    mentions: list[NumberMention] = []
    taken: list[tuple[int, int]] = []
    for match in _DIGITS.finditer(text):
        scale = (match.group("scale") or "").lower()
        currency = match.group("cur")
        if scale in {"k", "m", "bn"} and not currency:
            # "12 m" without a currency is more likely metres than millions.
            scale = "" if scale != "bn" else scale
        value = float(match.group("num").replace(",", "")) * _SCALE.get(scale, 1.0)
        if match.group("sign") in {"-", "\u2212"}:
            value = -value
        end = match.end() if scale else match.end("num")
        unit = find_unit(currency) if currency else None
        after = _UNIT_AFTER.match(text, end)
        if unit is None and after:
            unit = find_unit(after.group("unit"))
        mentions.append(NumberMention(value, unit, match.start()))
        taken.append((match.start(), end))
    for word in find_word_numbers(text):
        if any(s <= word.start < e for s, e in taken):
            continue
        after = _UNIT_AFTER.match(text, word.end)
        mentions.append(
            NumberMention(word.value, find_unit(after.group("unit")) if after else None, word.start)
        )
    for article in _ONE_UNIT.finditer(text):
        after = _UNIT_AFTER.match(text, article.end())
        if after and not any(s <= article.start() < e for s, e in taken):
            mentions.append(NumberMention(1.0, find_unit(after.group("unit")), article.start()))
    return sorted(mentions, key=lambda m: m.start)


def read_number(spec: NumberAnswer, text: str) -> NumberReading | ParseFailure:
    """The numeric answer in a completion, in the spec's unit when it has one."""
    mentions = find_numbers(answer_region(text))
    if not mentions:
        return ParseFailure("no number found")
    target = find_unit(spec.unit) if spec.unit else None
    if target is not None:
        same = [
            (m.value, m.unit)
            for m in mentions
            if m.unit is not None and m.unit.dimension == target.dimension
        ]
        bare = [m for m in mentions if m.unit is None]
        if same:
            value, unit = same[0]
            return NumberReading(value * unit.factor / target.factor, target.dimension)
        if bare:
            return NumberReading(bare[0].value, target.dimension)
        first = mentions[0].unit
        assert first is not None
        return ParseFailure(f"unit {first.name!r} cannot be converted to {target.name!r}")
    first_mention = mentions[0]
    if first_mention.unit is None:
        return NumberReading(first_mention.value, None)
    return NumberReading(
        first_mention.value * first_mention.unit.factor, first_mention.unit.dimension
    )


def readings_equal(spec: NumberAnswer, a: NumberReading, b: NumberReading) -> bool:
    """Whether two readings are the same answer under the spec's tolerance."""
    if a.dimension != b.dimension:
        return False
    return math.isclose(a.value, b.value, rel_tol=spec.rel_tol, abs_tol=spec.abs_tol)


def reading_key(spec: NumberAnswer, reading: NumberReading) -> str:
    """A readable canonical key for a reading, e.g. "12 month" or "1 year"."""
    if spec.unit is not None:
        target = find_unit(spec.unit)
        assert target is not None
        return f"{_format(reading.value)} {target.name}"
    if reading.dimension is None:
        return _format(reading.value)
    value, name = display_in_best_unit(reading.value, reading.dimension)
    return f"{_format(value)} {name}"


def _format(value: float) -> str:
    text = format(value, ".10g")
    return "0" if text in {"-0", "0"} else text


def reading_equal_key(
    spec: NumberAnswer, reading: NumberReading, leaders: list[NumberReading]
) -> str | None:
    """The key of the first leader equal to the reading under tolerance, or None."""
    for leader in leaders:
        if readings_equal(spec, reading, leader):
            return reading_key(spec, leader)
    return None
