"""The compact logprob encoding gives back exactly what vLLM sent."""

from __future__ import annotations

from gateway.metering import logprob_codec
from gateway.metering.logprob_codec import CHAT, COMPLETION
from tests.support.captures import capture_body


def _chat_choices(name: str) -> dict[int, object]:
    body = capture_body(name)
    return {c["index"]: c["logprobs"]["content"] for c in body["choices"]}


def test_chat_logprobs_round_trip_exactly() -> None:
    choices = _chat_choices("chat_nonstream_logprobs.txt")
    payload = logprob_codec.encode(CHAT, choices)
    assert payload.startswith(b"LP1")
    assert logprob_codec.decode(payload) == choices


def test_token_id_tokens_keep_their_bytes() -> None:
    choices = _chat_choices("chat_tokids.json")
    assert logprob_codec.decode(logprob_codec.encode(CHAT, choices)) == choices


def test_partial_utf8_tokens_and_empty_top_lists_survive() -> None:
    entries = [
        {"token": "", "logprob": -5.9070048332214355, "bytes": [], "top_logprobs": []},
        {
            "token": " 12",
            "logprob": -0.7765288352966309,
            "bytes": [32, 49, 50],
            "top_logprobs": None,
        },
    ]
    assert logprob_codec.decode(logprob_codec.encode(CHAT, {0: entries})) == {0: entries}


def test_values_that_are_not_float32_fall_back_to_float64() -> None:
    entries = [{"token": "a", "logprob": -0.1, "bytes": [97], "top_logprobs": []}]
    assert logprob_codec.decode(logprob_codec.encode(CHAT, {0: entries}))[0][0]["logprob"] == -0.1


def test_completion_logprobs_round_trip() -> None:
    body = capture_body("cmpl_echo_logprobs.json")
    choices = {c["index"]: c["logprobs"] for c in body["choices"]}
    assert logprob_codec.decode(logprob_codec.encode(COMPLETION, choices)) == choices


def test_unusual_chat_shapes_are_kept_as_json() -> None:
    odd = {0: [{"token": "x", "logprob": -1.0, "extra": True}]}
    payload = logprob_codec.encode(CHAT, odd)
    assert payload.startswith(b"J")
    assert logprob_codec.decode(payload) == odd


def test_merge_joins_stream_chunks_per_choice() -> None:
    a = [{"token": "a", "logprob": -1.0, "bytes": [97], "top_logprobs": []}]
    b = [{"token": "b", "logprob": -2.0, "bytes": [98], "top_logprobs": []}]
    merged = logprob_codec.merge_choices(CHAT, [(0, a), (1, b), (0, b)])
    assert merged == {0: a + b, 1: b}
    assert logprob_codec.token_count(CHAT, merged) == 3


def test_encoding_is_smaller_than_the_json() -> None:
    import orjson

    choices = _chat_choices("chat_nonstream_logprobs.txt")
    assert len(logprob_codec.encode(CHAT, choices)) < len(orjson.dumps(choices[0])) / 2
