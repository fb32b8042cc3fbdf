"""The byte-level tokenizer: numbers as single tokens, GPT-2 token strings, partial UTF-8."""

from __future__ import annotations

from simulator.tokenizer import Tokenizer


def test_whole_numbers_up_to_999_are_one_token_with_or_without_space() -> None:
    tokenizer = Tokenizer()
    for text in ("12", "24", " 12", " 24", "0", " 999"):
        assert len(tokenizer.encode(text)) == 1, text
    assert tokenizer.encode(" 12") != tokenizer.encode(" 24")
    assert len(tokenizer.encode("1000")) == 2


def test_token_strings_use_gpt2_byte_characters() -> None:
    tokenizer = Tokenizer()
    ids = tokenizer.encode("Hello world!\nok")
    strs = [tokenizer.token_strs[i] for i in ids]
    assert "Ġworld" in strs
    assert "Ċ" in strs
    assert strs[0] == "Hello"


def test_special_tokens_are_recognised_and_skippable() -> None:
    tokenizer = Tokenizer()
    ids = tokenizer.encode("<s>hi</s>")
    assert ids[0] == tokenizer.bos_id
    assert ids[-1] == tokenizer.eos_id
    assert tokenizer.decode(ids) == "<s>hi</s>"
    assert tokenizer.decode(ids, skip_special_tokens=True) == "hi"


def test_round_trip_of_unicode_text() -> None:
    tokenizer = Tokenizer()
    text = "Naïve café — 12 months, 24 months; ok?"
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_non_ascii_characters_become_partial_utf8_tokens() -> None:
    tokenizer = Tokenizer()
    ids = tokenizer.encode("é")
    assert len(ids) == 2
    for token_id in ids:
        assert tokenizer.logprob_texts[token_id] == ""
        assert tokenizer.logprob_bytes[token_id] == []


def test_two_instances_agree() -> None:
    first, second = Tokenizer(), Tokenizer()
    assert first.vocab_size == second.vocab_size > 2000
    text = "The indemnity cap is 12 months of fees."
    assert first.encode(text) == second.encode(text)
