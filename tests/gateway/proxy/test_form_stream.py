"""FormStream and AudioMeter on their own: boundaries split anywhere, durations, odd events."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from gateway.errors import GatewayError
from gateway.proxy.audio.form_stream import FormBounds, FormStream
from gateway.proxy.audio.meter import AudioMeter
from gateway.proxy.audio.wav_duration import wav_seconds
from tests.gateway.audio.audio_files import BOUNDARY, field, file_part, form, wav

# File bytes that look like the start of a delimiter, and one that is a delimiter but for a byte.
TRICKY = b"\r\n--" + BOUNDARY[:-1].encode() + b"X\r\n-\r\n--" + b"audio" * 50


def _receiver(body: bytes, size: int) -> Callable[[], Awaitable[dict[str, Any]]]:
    pieces = [body[i : i + size] for i in range(0, len(body), size)] or [b""]

    async def receive() -> dict[str, Any]:
        piece = pieces.pop(0)
        return {"type": "http.request", "body": piece, "more_body": bool(pieces)}

    return receive


async def _read(body: bytes, size: int) -> tuple[list[tuple[str, str]], str | None, bytes]:
    stream = FormStream(
        _receiver(body, size), BOUNDARY.encode(), FormBounds(1 << 20, 5.0, max_parts=8)
    )
    fields, head = await stream.read_fields()
    data = b"".join([chunk async for chunk in stream.file_data()])
    assert stream.finished.is_set()
    assert stream.file_bytes == len(data)
    return fields, head.filename, data


@pytest.mark.parametrize("size", [1, 2, 5, 31, 64, 4096])
def test_fields_and_file_survive_any_split(size: int) -> None:
    body = form(field("model", "tiny"), field("prompt", "a\r\nb"), file_part(TRICKY, "t.wav"))
    fields, filename, data = asyncio.run(_read(body, size))
    assert fields == [("model", "tiny"), ("prompt", "a\r\nb")]
    assert filename == "t.wav"
    assert data == TRICKY


def test_a_preamble_and_an_epilogue_are_ignored() -> None:
    body = b"preamble\r\n" + form(field("model", "tiny"), file_part(b"x")) + b"epilogue"
    assert asyncio.run(_read(body, 3))[2] == b"x"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (form(*[field(f"f{i}", "1") for i in range(9)], file_part(b"x")), "over 8 parts"),
        (form(field("model", "tiny")), "no `file` part"),
        (field("model", "tiny") + file_part(b"x"), "ended before"),
        (form(field("model", "tiny")).replace(b"--\r\n", b"junk\r\n"), "followed by other text"),
    ],
)
def test_malformed_forms_are_400s(body: bytes, says: str) -> None:
    with pytest.raises(GatewayError) as refused:
        asyncio.run(_read(body, 7))
    assert refused.value.status == 400
    assert says in refused.value.message


def test_wav_duration_from_the_header_and_the_bytes_that_came() -> None:
    audio = wav(1.25)
    assert wav_seconds(audio[:4096], len(audio)) == 1.25
    # Cut short: only what arrived plays.
    assert wav_seconds(audio[:4096], 44 + 16_000) == 0.5
    assert wav_seconds(b"ID3\x03not a wav", 1000) is None


def test_the_meter_passes_events_through_and_reads_errors_safely() -> None:
    meter = AudioMeter(None)
    chunk = b'data: {"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    error = b'data: {"error":{"message":"x","type":"E","param":null,"code":"bad"}}\n\n'
    assert meter.feed(chunk, 1.0) == [chunk]
    assert meter.feed(error, 2.0) == [error]
    assert meter.feed(b"data: [DONE]\n\n", 3.0) == [b"data: [DONE]\n\n"]
    result = meter.result()
    assert meter.done
    assert (result.finish_reason, result.token_chunk_times, result.completion_tokens_seen) == (
        "stop",
        [1.0],
        1,
    )
    assert result.failure is not None and result.failure.status == 500


def test_the_meter_reads_the_duration_of_json_and_verbose_bodies() -> None:
    for body, seconds in (
        (b'{"text":"a","usage":{"type":"duration","seconds":3}}', 3.0),
        (b'{"duration":1.5,"language":"en","text":"a","segments":[],"words":null}', 1.5),
        (b"plain text answer", None),
    ):
        meter = AudioMeter(None)
        assert meter.body(body, 200) == body
        assert meter.result().audio_seconds == seconds
