"""Redaction before storage: what is found, what is left alone, and text cut into pieces."""

from __future__ import annotations

import re

import orjson
import pytest

from gateway.config import RedactionConfig
from gateway.recording.redaction import API_KEYS, CARD, EMAIL, Redactor, luhn_valid
from gateway.recording.rows import build_rows
from gateway.recording.stored_text import (
    RedactionPolicy,
    logprob_document,
    request_body,
    response_body,
)
from tests.support.records import make_record

SECRETS = {
    "email": "jane.roe+billing@example.co.uk",
    "card": "4111 1111 1111 1111",
    "openai": "sk-proj-Abc123Def456Ghi789Jkl012",
    "plumbline": "pl-0123456789.Zm9vYmFyYmF6cXV4cXV1eA",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_" + "a1B2" * 9,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
    "bearer": "Bearer abcdefghijklmnop1234",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_kind_of_secret_is_replaced(kind: str) -> None:
    text = f"before {SECRETS[kind]} after"
    redacted = Redactor().text(text)
    assert SECRETS[kind] not in redacted
    assert redacted.startswith("before [REDACTED:") and redacted.endswith(" after")


@pytest.mark.parametrize(
    "innocent",
    [
        "order 4111 1111 1111 1112 shipped",  # fails the Luhn check
        "call +44 20 7946 0958 today",
        "version 1.2.3 at user@localhost",
        "the sky is blue",
        "password reset link sent",
    ],
)
def test_look_alikes_are_left_alone(innocent: str) -> None:
    assert Redactor().text(innocent) == innocent


def test_luhn() -> None:
    assert luhn_valid("4111111111111111") and luhn_valid("79927398713")
    assert not luhn_valid("4111111111111112") and not luhn_valid("79927398710")


def test_extra_patterns_and_switches() -> None:
    redactor = Redactor(emails=False, card_numbers=False, extra_patterns=[r"ACME-\d{6}"])
    text = "ticket ACME-123456 for a@b.com paid with 4111111111111111"
    assert redactor.text(text) == (
        "ticket [REDACTED:custom] for a@b.com paid with 4111111111111111"
    )


def test_a_secret_cut_across_pieces_is_removed_from_every_piece() -> None:
    pieces = ["mail jo", "hn@exam", "ple.com or ", "call"]
    new, changed = Redactor().pieces(pieces)
    assert "".join(new) == "mail [REDACTED:email] or call"
    assert new[0] == "mail [REDACTED:email]" and new[1] == "" and changed == {0, 1, 2}


def test_patterns_have_bounded_repetition() -> None:
    """No `+` or `*` (each quantifier is {m,n}): a hostile body costs linear time to scan."""
    for pattern in (EMAIL, CARD, *API_KEYS):
        unescaped = re.sub(r"\\.", "", pattern)
        unescaped = re.sub(r"\[[^\]]*\]", "", unescaped)
        assert "+" not in unescaped and "*" not in unescaped, pattern


def test_json_request_bodies_are_redacted_value_by_value_even_escaped() -> None:
    body = orjson.dumps(
        {"messages": [{"role": "user", "content": "reach me at jane\u0040example.com"}]}
    ).replace(b"@", b"\\u0040")
    stored = request_body(body, Redactor())
    assert "example.com" not in stored and "[REDACTED:email]" in stored
    assert orjson.loads(stored)["messages"][0]["role"] == "user"


def _chat_chunk(text: str, logprobs: bool = True) -> bytes:
    choice: dict[str, object] = {"index": 0, "delta": {"content": text}}
    if logprobs:
        choice["logprobs"] = {
            "content": [
                {
                    "token": text,
                    "logprob": -0.1,
                    "bytes": list(text.encode()),
                    "top_logprobs": [{"token": text, "logprob": -0.1, "bytes": []}],
                }
            ]
        }
    return b"data: " + orjson.dumps({"id": "x", "choices": [choice]}) + b"\n\n"


def test_a_secret_streamed_over_several_events_is_redacted_in_deltas_and_logprobs() -> None:
    pieces = ["Card: 4111 ", "1111 11", "11 1111", ", thanks"]
    body = b"".join(_chat_chunk(p) for p in pieces) + b"data: [DONE]\n\n"
    stored = response_body(body, True, Redactor())
    assert "1111" not in stored and "[REDACTED:card]" in stored
    assert stored.endswith("data: [DONE]\n\n")
    events = [orjson.loads(e[6:]) for e in stored.split("\n\n") if e.startswith("data: {")]
    text = "".join(e["choices"][0]["delta"]["content"] for e in events)
    assert text == "Card: [REDACTED:card], thanks"
    tokens = [e["choices"][0]["logprobs"]["content"][0] for e in events]
    assert [t["token"] for t in tokens] == ["Card: [REDACTED:card]", "", "", ", thanks"]
    assert tokens[1]["top_logprobs"][0]["token"] == "[REDACTED]"
    assert bytes(tokens[0]["bytes"]).decode() == tokens[0]["token"]


def test_stored_logprob_documents_mask_secret_tokens_and_keep_the_numbers() -> None:
    tokens = [" write", " to", " bob", "@", "corp", ".io", " now"]
    entries = [
        {
            "token": t,
            "logprob": -float(i),
            "bytes": list(t.encode()),
            "top_logprobs": [{"token": t, "logprob": -float(i), "bytes": list(t.encode())}],
        }
        for i, t in enumerate(tokens)
    ]
    document = orjson.dumps({"0": entries})
    stored = orjson.loads(logprob_document(document, Redactor()))["0"]
    assert "".join(e["token"] for e in stored) == " write to [REDACTED:email] now"
    assert [e["logprob"] for e in stored] == [-float(i) for i in range(len(tokens))]
    assert all("corp" not in str(e) and "bob" not in str(e) for e in stored)
    clean = orjson.dumps({"0": entries[:2]})
    assert logprob_document(clean, Redactor()) is clean  # nothing found: stored as sent


def test_completion_logprobs_are_masked_too() -> None:
    logprobs = {
        "tokens": ["key", " sk-", "proj-", "Abc123Def456Ghi789Jkl012", "!"],
        "token_logprobs": [-1.0, -2.0, -3.0, -4.0, -5.0],
        "top_logprobs": [{"key": -1.0}, {" sk-": -2.0}, {"proj-": -3.0}, {"x": -4.0}, {"!": -5}],
        "text_offset": [0, 3, 7, 12, 36],
    }
    stored = orjson.loads(logprob_document(orjson.dumps({"0": logprobs}), Redactor()))["0"]
    assert "Abc123" not in orjson.dumps(stored).decode()
    assert stored["top_logprobs"][2] == {"[REDACTED]": -3.0}
    assert stored["top_logprobs"][0] == {"key": -1.0}


def test_documents_too_deep_to_walk_are_redacted_as_text() -> None:
    deep = b'{"a":' * 600 + b'"mail jane@example.com"' + b"}" * 600
    stored = request_body(deep, Redactor())
    assert "jane@example.com" not in stored and stored.count("{") == 600
    assert "[REDACTED:email]" in response_body(deep, False, Redactor())


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("choices", [5, "text", {"0": {}}, None])
def test_a_backends_odd_choices_are_still_stored_redacted_and_the_call_recorded(
    stream: bool, choices: object
) -> None:
    answer = orjson.dumps({"choices": choices, "note": f"mail {SECRETS['email']}"})
    body = b"data: " + answer + b"\n\ndata: [DONE]\n\n" if stream else answer
    record = make_record(
        stream=stream, store_body=True, request_body=b"{}", response_body=body, logprob_chunks=[]
    )
    # One row per table, even for a body a meter let through (it reads only lists of choices).
    batch = build_rows([record], RedactionPolicy(RedactionConfig(enabled=True)))
    assert [row["id"] for row in batch.calls] == [record.id]
    (stored,) = batch.bodies
    assert SECRETS["email"] not in stored["response_body"]
    assert "[REDACTED:" in stored["response_body"]
