"""Incremental detokenisation: partial UTF-8 is held back, stop strings cut the text."""

from __future__ import annotations

from simulator.output_text import OutputText
from simulator.tokenizer import Tokenizer


def _feed(text: OutputText, tokenizer: Tokenizer, source: str) -> str | None:
    for token in tokenizer.encode(source):
        stop = text.add(token)
        if stop is not None:
            return stop
    return None


def test_partial_utf8_is_held_back_until_complete() -> None:
    tokenizer = Tokenizer()
    text = OutputText(tokenizer, (), False)
    lead, tail = tokenizer.encode("é")
    text.add(lead)
    assert text.text == ""
    text.add(tail)
    assert text.text == "é"
    assert text.ends == [0, 1]


def test_a_trailing_partial_character_is_never_shown() -> None:
    tokenizer = Tokenizer()
    text = OutputText(tokenizer, (), False)
    for token in tokenizer.encode(" ok"):
        text.add(token)
    text.add(tokenizer.encode("é")[0])
    text.finish()
    assert text.text == " ok"


def test_stop_string_is_cut_and_never_streamed() -> None:
    tokenizer = Tokenizer()
    text = OutputText(tokenizer, ("STOP",), False)
    assert _feed(text, tokenizer, "one two STOP three") == "STOP"
    text.finish()
    assert text.text == "one two "
    assert all(end <= len(text.text) for end in text.ends)
    assert text.ends == sorted(text.ends)


def test_stop_string_kept_when_asked() -> None:
    tokenizer = Tokenizer()
    text = OutputText(tokenizer, ("STOP",), True)
    assert _feed(text, tokenizer, "one STOP three") == "STOP"
    text.finish()
    assert text.text == "one STOP"


def test_streamed_text_lags_by_the_longest_stop_string() -> None:
    tokenizer = Tokenizer()
    text = OutputText(tokenizer, ("xyz",), False)
    for token in tokenizer.encode(" hello world"):
        text.add(token)
    assert text.ends[-1] == len(" hello world") - 2
    text.finish()
    assert text.ends[-1] == len(" hello world")
