"""The stored logprobs decode to exactly what vLLM sent."""

from __future__ import annotations

import orjson

from plumbline import logprob_codec
from plumbline.logprob_codec import CHAT, COMPLETION
from tests.support.captures import capture_body


def _items(content: list[object]) -> bytes:
    return orjson.dumps(content)[1:-1]


def test_chat_logprobs_round_trip_exactly() -> None:
    body = capture_body("chat_nonstream_logprobs.txt")
    content = body["choices"][0]["logprobs"]["content"]
    # A stream delivers the same content in pieces, one or a few positions per chunk.
    chunks = [(0, _items(content[:1])), (0, _items(content[1:3])), (0, _items(content[3:]))]
    document = logprob_codec.per_choice_json(CHAT, chunks)
    payload = logprob_codec.encode(document)
    assert logprob_codec.decode(payload) == {0: content}


def test_choices_are_kept_apart_and_empty_pieces_skipped() -> None:
    a = [{"token": "a", "logprob": -1.0, "bytes": [97], "top_logprobs": []}]
    b = [{"token": "", "logprob": -2.5, "bytes": [], "top_logprobs": []}]
    document = logprob_codec.per_choice_json(CHAT, [(1, _items(b)), (0, _items(a)), (0, b"")])
    assert logprob_codec.decode(logprob_codec.encode(document)) == {0: a, 1: b}


def test_completion_logprobs_are_merged_per_choice() -> None:
    body = capture_body("cmpl_nonstream_logprobs.json")
    whole = body["choices"][0]["logprobs"]
    pieces = [
        {key: values[i : i + 1] for key, values in whole.items()}
        for i in range(len(whole["tokens"]))
    ]
    chunks = [(0, orjson.dumps(piece)) for piece in pieces]
    document = logprob_codec.per_choice_json(COMPLETION, chunks)
    assert logprob_codec.decode(logprob_codec.encode(document)) == {0: whole}


def test_payload_is_compact() -> None:
    body = capture_body("chat_nonstream_logprobs.txt")
    content = body["choices"][0]["logprobs"]["content"] * 50
    document = logprob_codec.per_choice_json(CHAT, [(0, _items(content))])
    assert len(logprob_codec.encode(document)) < len(document) / 5


def test_foreign_payloads_are_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="not a Plumbline"):
        logprob_codec.decode(b"something else")
