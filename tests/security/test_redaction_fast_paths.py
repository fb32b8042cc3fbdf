"""The writer's shortcuts give the answers of the slow ways: hinted rules and unparsed logprobs."""

from __future__ import annotations

import re
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.recording.redaction import API_KEYS, CARD, EMAIL, Redactor, Span, luhn_valid
from gateway.recording.stored_text import _sampled_tokens, logprob_document

# Text that mixes secrets' pieces, look-alike letters and JSON's awkward characters.
PIECES = [
    "sk-",
    "proj-",
    "Abc123Def456Ghi789Jkl012",
    "pl-0123456789.",
    "Zm9vYmFyYmF6cXV4cXV1eA",
    "AKIA",
    "IOSFODNN7EXAMPLE",
    "ghp_",
    "a1B2" * 9,
    "gh",
    "xoxb-",
    "1234567890ab",
    "AIza",
    "x" * 35,
    "eyJ",
    "hbGciOiJIUzI1NiJ9",
    ".",
    "Bearer ",
    "bearer\t",
    "\u017fecret",
    "\u017f",
    "\u0131",
    "\u0130",
    "\u212a",
    "api_key",
    "Token",
    "password",
    "=",
    ": ",
    '"',
    "'",
    "(",
    " ",
    "\\",
    "@",
    "jane",
    "example.com",
    "4111 ",
    "1111",
    "1111 1111 1111",
    "7",
    "-",
    "\n",
    "é",
    "😀",
]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=30).map("".join)


def _unhinted_spans(text: str) -> list[Span]:
    """Every rule run over the whole text, as the redactor did before it had hints."""
    found = [Span(m.start(), m.end(), "api_key") for p in API_KEYS for m in re.finditer(p, text)]
    email = re.compile(EMAIL)
    found += [Span(m.start(), m.end(), "email") for m in email.finditer(text)]
    for match in re.finditer(CARD, text):
        digits = re.sub(r"[ -]", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            found.append(Span(match.start(), match.end(), "card"))
    return sorted(found, key=lambda s: (s.start, -s.end))


@settings(max_examples=400, deadline=None)
@given(texts)
def test_hints_never_hide_a_secret_the_full_rules_find(text: str) -> None:
    covered = Redactor().spans(text)
    for span in _unhinted_spans(text):
        assert any(c.start <= span.start and span.end <= c.end for c in covered), (text, span)


def test_look_alike_letters_that_ignore_case_matches_are_still_found() -> None:
    assert Redactor().text('x \u017fecret="abcdefgh123"') == 'x [REDACTED:api_key]"'
    assert Redactor().text("authorization: BEARER abcdefghijklmnop1234") == (
        "authorization: [REDACTED:api_key]"
    )


def _position(token: str, logprob: float, k: int) -> dict[str, Any]:
    alternatives = [
        {"token": token + str(i), "logprob": logprob - i, "bytes": list((token + str(i)).encode())}
        for i in range(k)
    ]
    return {
        "token": token,
        "logprob": logprob,
        "bytes": list(token.encode()),
        "top_logprobs": alternatives,
    }


tokens = st.text(max_size=6) | st.sampled_from(
    ['"', "\\", '"top_logprobs":[', '{"token":"', '}],"']
)
choices = st.lists(st.lists(tokens, max_size=12), min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(choices, st.integers(0, 3))
def test_sampled_tokens_read_without_parsing_equal_the_parsed_ones(
    per_choice: list[list[str]], k: int
) -> None:
    document = orjson.dumps(
        {str(i): [_position(t, -0.5, k) for t in ts] for i, ts in enumerate(per_choice)}
    )
    read = _sampled_tokens(document)
    assert read is not None
    assert [t for t in read if t] == [ts for ts in per_choice if ts]


def test_documents_in_another_layout_are_parsed_and_still_masked() -> None:
    entries = [
        {"logprob": -1.0, "token": t, "top_logprobs": [{"token": t, "logprob": -1.0}]}
        for t in ["mail ", "bob", "@", "corp.io", " now"]
    ]
    document = orjson.dumps({"0": entries})
    assert _sampled_tokens(document) is None
    stored = orjson.loads(logprob_document(document, Redactor()))["0"]
    assert "".join(e["token"] for e in stored) == "mail [REDACTED:email] now"


def test_choices_are_read_as_separate_texts() -> None:
    """A card number must not hide behind the digit that ends the choice before it."""
    card = ["4111 1111", " 1111 1111"]
    document = orjson.dumps(
        {"0": [_position("room 7", -1.0, 2)], "1": [_position(t, -1.0, 2) for t in card]}
    )
    stored = orjson.loads(logprob_document(document, Redactor()))
    assert stored["0"][0]["token"] == "room 7"
    assert "".join(e["token"] for e in stored["1"]) == "[REDACTED:card]"


def test_logprobs_that_are_not_json_are_dropped_not_the_call() -> None:
    """Invalid UTF-8 from a backend: nothing to check for secrets, nothing a read could parse."""
    document = b'{"0":[{"token":"sk-\xff\xfe","logprob":-0.1,"bytes":null,"top_logprobs":[]}]}'
    assert orjson.loads(logprob_document(document, Redactor())) == {}
