"""The writer thread turns a sampled call into a re-askable pending row (and spools it)."""

from __future__ import annotations

from pathlib import Path

import orjson

from gateway.metering.record import LiveSampleOrder
from gateway.recording.live_rows import live_sample_row
from gateway.recording.rows import build_rows
from gateway.recording.spool import Spool
from tests.support.records import make_record

ORDER = LiveSampleOrder({"type": "number"}, 5, True)
REQUEST = orjson.dumps(
    {
        "model": "tiny",
        "messages": [{"role": "user", "content": "What is the cap?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "n": 2,
        "temperature": 0.7,
    }
)
BODY = orjson.dumps(
    {"choices": [{"index": 0, "message": {"role": "assistant", "content": "12 months."}}]}
)
STREAM = (
    b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"12 "}},'
    b'{"index":1,"delta":{"content":"24 "}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"months."},"finish_reason":"stop"}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":5}}\n\n'
    b"data: [DONE]\n\n"
)


def test_a_streamed_call_becomes_a_plain_request_and_its_first_answer() -> None:
    record = make_record(
        live_sample=ORDER,
        request_body=REQUEST,
        response_body=STREAM,
        stream=True,
        feature="contracts",
    )
    row = live_sample_row(record)
    assert row is not None
    assert row["request"] == {
        "model": "tiny",
        "messages": [{"role": "user", "content": "What is the cap?"}],
        "n": 1,
        "temperature": 0.7,
    }
    assert row["original_text"] == "12 months."
    assert (row["feature"], row["resamples"], row["priority"]) == ("contracts", 5, 1)
    assert (row["answer_spec"], row["status"], row["keep_texts"]) == (
        {"type": "number"},
        "pending",
        False,
    )


def test_a_whole_body_answer_is_read_from_the_message() -> None:
    record = make_record(live_sample=ORDER, request_body=REQUEST, response_body=BODY, stream=False)
    row = live_sample_row(record)
    assert row is not None and row["original_text"] == "12 months."


def test_failed_cancelled_or_unsampled_calls_give_no_row() -> None:
    assert live_sample_row(make_record(request_body=REQUEST, response_body=BODY)) is None
    failed = make_record(
        live_sample=ORDER,
        request_body=REQUEST,
        response_body=BODY,
        status_code=503,
        error_type="ServiceUnavailableError",
        error_message="down",
    )
    assert live_sample_row(failed) is None
    cancelled = make_record(
        live_sample=ORDER, request_body=REQUEST, response_body=BODY, cancelled=True
    )
    assert live_sample_row(cancelled) is None
    garbled = make_record(live_sample=ORDER, request_body=b"{", response_body=BODY)
    assert live_sample_row(garbled) is None


def test_live_rows_survive_the_spool(tmp_path: Path) -> None:
    record = make_record(live_sample=ORDER, request_body=REQUEST, response_body=BODY, stream=False)
    batch = build_rows([record])
    assert len(batch.live_samples) == 1
    spool = Spool(tmp_path)
    spool.write(batch)
    ((_, replayed),) = list(spool.read_all())
    assert replayed.live_samples == batch.live_samples
