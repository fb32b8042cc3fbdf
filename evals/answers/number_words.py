"""English number words to values: "twelve", "twenty-four", "one hundred and five"."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SMALL = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    word: 10 * (i + 2)
    for i, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_SPECIAL = {"dozen": 12}
NUMBER_WORDS = frozenset({*_SMALL, *_TENS, *_SCALES, *_SPECIAL})
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class WordNumber:
    """A number written in words and where it sits in the text."""

    value: float
    start: int
    end: int


def find_word_numbers(text: str) -> list[WordNumber]:
    """Every maximal run of number words in the text, with its value."""
    lowered = text.lower()
    found: list[WordNumber] = []
    words = list(_WORD.finditer(lowered))
    i = 0
    while i < len(words):
        run_end = i
        while run_end < len(words) and _continues(words, run_end, i, lowered):
            run_end += 1
        if run_end > i:
            value = _run_value([w.group() for w in words[i:run_end] if w.group() != "and"])
            if value is not None:
                found.append(WordNumber(value, words[i].start(), words[run_end - 1].end()))
            i = run_end
        else:
            i += 1
    return found


def _continues(words: list[re.Match[str]], j: int, start: int, text: str) -> bool:
    word = words[j].group()
    if j > start and text[words[j - 1].end() : words[j].start()].strip(" -") != "":
        return False
    if word == "and":
        # "one hundred and five": "and" only joins number words on both sides.
        return (
            j > start
            and j + 1 < len(words)
            and words[j - 1].group() in NUMBER_WORDS
            and words[j + 1].group() in NUMBER_WORDS
        )
    return word in NUMBER_WORDS


def _run_value(words: list[str]) -> float | None:
    total = 0
    current = 0
    seen_digit_word = False
    for word in words:
        if word in _SMALL:
            current += _SMALL[word]
            seen_digit_word = True
        elif word in _TENS:
            current += _TENS[word]
            seen_digit_word = True
        elif word in _SPECIAL:
            current = (current or 1) * _SPECIAL[word]
            seen_digit_word = True
        elif word == "hundred":
            current = (current or 1) * 100
        else:
            total += (current or 1) * _SCALES[word]
            current = 0
    if not seen_digit_word and total == 0 and current == 0:
        return None
    return float(total + current)
