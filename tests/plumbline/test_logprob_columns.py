"""The v2 logprob form: exact tokens, bytes and sampled logprobs; alternatives within 0.001."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.recording.rows import call_row
from plumbline import logprob_codec, logprob_packing, logprob_read
from plumbline.logprob_codec import CHAT, COMPLETION
from tests.support.captures import capture_body
from tests.support.logprob_match import chat_entries_match
from tests.support.records import make_record

f32 = st.floats(-60.0, 0.0, width=32).map(float)
any_logprob = st.one_of(
    f32,
    st.floats(-1e6, 0.0),  # not float32-exact: stored as float64
    st.sampled_from([-9999.0, 0.0, -0.0, -131.07, -131.069, -1e-45, -1e300]),
)
token = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=12),
    st.sampled_from(["bytes:\\xe2", "\u00e9", "\U0001f600", "\x00", '"', "\\", "}]", ""]),
)


@st.composite
def entry(draw: st.DrawFn, k: int) -> dict[str, Any]:
    def one(keys: int) -> dict[str, Any]:
        text = draw(token)
        raw = list(text.encode())
        if text.startswith("bytes:"):
            raw = [0xE2]  # a byte token: its bytes are not its text
        value = {"token": text, "logprob": draw(any_logprob), "bytes": raw}
        if keys == 4:
            value["top_logprobs"] = [one(3) for _ in range(k)]
        return value

    return one(4)


def _chunks(entries: list[dict[str, Any]], index: int = 0) -> list[tuple[int, bytes]]:
    return [(index, orjson.dumps(e)) for e in entries]


def _round_trip(fmt: str, chunks: list[tuple[int, bytes]]) -> dict[int, Any]:
    packed = logprob_packing.pack(fmt, logprob_codec.parsed_choices(fmt, chunks))
    return logprob_read.decode(packed.payload, packed.topk)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 6).flatmap(lambda k: st.lists(entry(k), max_size=30)))
def test_chat_round_trip_is_exact_but_for_the_alternatives_bound(entries: list[Any]) -> None:
    stored = _round_trip(CHAT, _chunks(entries))
    if not entries:
        assert stored == {}
        return
    assert chat_entries_match(stored[0], entries)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=1, max_size=20))
def test_uneven_alternatives_per_position(counts: list[int]) -> None:
    entries = [
        {
            "token": f"t{i}",
            "logprob": -0.5,
            "bytes": list(f"t{i}".encode()),
            "top_logprobs": [
                {"token": f"a{j}", "logprob": -1.0 - j / 3, "bytes": list(f"a{j}".encode())}
                for j in range(n)
            ],
        }
        for i, n in enumerate(counts)
    ]
    assert chat_entries_match(_round_trip(CHAT, _chunks(entries))[0], entries)


def test_vllm_capture_sampled_exact_and_float32() -> None:
    content = capture_body("chat_nonstream_logprobs.txt")["choices"][0]["logprobs"]["content"]
    stored = _round_trip(CHAT, _chunks(content))[0]
    assert chat_entries_match(stored, content)
    assert [e["logprob"] for e in stored] == [e["logprob"] for e in content]


def test_bytes_null_reads_back_as_null() -> None:
    # vLLM sends `bytes: null` where a token has none; a v2 row holding one once failed to read.
    alternative = {"token": "b", "logprob": -1.5, "bytes": None}
    entries = [
        {"token": "a", "logprob": -0.25, "bytes": None, "top_logprobs": [alternative]},
        {"token": "c", "logprob": -0.5, "bytes": [99], "top_logprobs": [alternative]},
    ]
    stored = _round_trip(CHAT, _chunks(entries))
    assert stored[0] == entries


def test_irregular_entries_are_kept_exactly_as_json() -> None:
    odd = [
        {"token": "a", "logprob": -1.0, "bytes": None, "top_logprobs": []},
        {"logprob": -2, "token": "b", "bytes": [98], "top_logprobs": None, "extra": 1},
    ]
    assert _round_trip(CHAT, _chunks(odd)) == {0: odd}


def test_choices_kept_apart() -> None:
    a = [{"token": "a", "logprob": -1.0, "bytes": [97], "top_logprobs": []}]
    b = [{"token": "", "logprob": -2.5, "bytes": [], "top_logprobs": []}]
    stored = _round_trip(CHAT, [*_chunks(b, 1), *_chunks(a, 0), (0, b"")])
    assert stored == {0: a, 1: b}


def test_completions_round_trip_and_drop_top_logprobs_alone() -> None:
    whole = capture_body("cmpl_nonstream_logprobs.json")["choices"][0]["logprobs"]
    pieces = [
        {key: values[i : i + 1] for key, values in whole.items()}
        for i in range(len(whole["tokens"]))
    ]
    chunks = [(0, orjson.dumps(piece)) for piece in pieces]
    packed = logprob_packing.pack(COMPLETION, logprob_codec.parsed_choices(COMPLETION, chunks))
    assert logprob_read.decode(packed.payload, packed.topk) == {0: whole}
    assert logprob_read.decode(packed.payload, None) == {0: {**whole, "top_logprobs": []}}
    assert logprob_read.topk_expired(packed.payload, None)


def test_huge_k_and_long_answers_stay_exact() -> None:
    # top_logprobs=-1 asks vLLM for the whole vocabulary: tens of thousands per position.
    k, n = 40_000, 3
    values = np.float32(-np.linspace(0.0, 200.0, k)).tolist()
    entries = [
        {
            "token": f"s{i}",
            "logprob": values[0],
            "bytes": list(f"s{i}".encode()),
            "top_logprobs": [
                {"token": f"v{j}", "logprob": values[j], "bytes": list(f"v{j}".encode())}
                for j in range(k)
            ],
        }
        for i in range(n)
    ]
    stored = _round_trip(CHAT, _chunks(entries))[0]
    assert chat_entries_match(stored, entries)  # values below -131 nats kept exactly


def test_v1_rows_read_as_before() -> None:
    content = capture_body("chat_nonstream_logprobs.txt")["choices"][0]["logprobs"]["content"]
    v1 = logprob_codec.encode(logprob_codec.per_choice_json(CHAT, _chunks(content)))
    assert logprob_read.decode(v1) == {0: content}
    assert logprob_read.decode(v1, None) == {0: content}
    assert not logprob_read.topk_expired(v1, None)


def test_foreign_payloads_are_refused() -> None:
    with pytest.raises(ValueError, match="not a Plumbline"):
        logprob_read.decode(b"LPC2 but not zstd")
    packed = logprob_packing.pack(
        CHAT,
        {
            0: [
                {
                    "token": "a",
                    "logprob": -1.0,
                    "bytes": [97],
                    "top_logprobs": [{"token": "b", "logprob": -2.0, "bytes": [98]}],
                }
            ]
        },
    )
    with pytest.raises(ValueError, match="not a Plumbline"):
        logprob_read.decode(packed.payload, packed.payload)


def test_a_v1_row_of_bytes_that_are_no_json_reads_as_no_logprobs() -> None:
    # v1 keeps a backend's bytes as sent; invalid UTF-8 there once made the call view fail.
    document = b'{"0":[{"token":"\xff","logprob":-0.1,"bytes":null,"top_logprobs":[]}]}'
    assert logprob_read.decode(logprob_codec.encode(document)) == {}


json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(-1e9, 1e9) | token,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(token, inner, max_size=4),
    max_leaves=12,
)
shaped = st.fixed_dictionaries(
    {"token": json_value, "logprob": json_value, "bytes": json_value, "top_logprobs": json_value}
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(shaped, json_value), max_size=6))
def test_whatever_a_backend_sends_is_stored_and_read_back(entries: list[Any]) -> None:
    record = make_record(tokens=0, logprob_chunks=_chunks(entries))
    _, row = call_row(record, None, "v2")
    if not entries:
        assert row is None or logprob_read.decode(row["payload"], row.get("topk")) == {}
        return
    assert row is not None
    stored = logprob_read.decode(row["payload"], row.get("topk"))[0]
    assert stored == entries or chat_entries_match(stored, entries)
