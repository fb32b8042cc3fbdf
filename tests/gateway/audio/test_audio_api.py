"""Speech to text through the gateway with the openai SDK: as the backend answers, recorded."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import orjson
import pytest

from simulator.process import SimulatorProcess
from tests.gateway.audio.audio_files import wav
from tests.gateway.audio.conftest import AUDIO_PER_MINUTE
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess, issue_key

pytestmark = pytest.mark.xdist_group("gateway-e2e")
VOLATILE = {"id", "created"}
FEATURE = {"X-Plumbline-Feature": "chat"}


def _upload(seconds: float) -> tuple[str, io.BytesIO, str]:
    return ("clip.wav", io.BytesIO(wav(seconds)), "audio/wav")


def _events(text: str) -> list[Any]:
    """The stream's `data:` events, ids and times masked."""
    events: list[Any] = []
    for block in text.split("\n\n"):
        if not block.startswith("data: "):
            continue
        data = block[6:]
        if data == "[DONE]":
            events.append(data)
            continue
        event = orjson.loads(data)
        events.append({k: (None if k in VOLATILE else v) for k, v in event.items()})
    return events


@pytest.fixture(scope="module")
def client(gateway: GatewayProcess, team_key: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url=f"{gateway.url}/v1", api_key=team_key, max_retries=0, default_headers=FEATURE
    ) as c:
        yield c


CASES: list[tuple[str, dict[str, Any]]] = [
    ("transcriptions", {}),
    ("transcriptions", {"response_format": "text"}),
    ("transcriptions", {"response_format": "verbose_json", "language": "fr"}),
    ("transcriptions", {"temperature": 0.0, "prompt": "Contract terms."}),
    ("transcriptions", {"response_format": "srt"}),
    ("translations", {}),
    ("translations", {"response_format": "verbose_json"}),
]


def _create(sdk: openai.OpenAI, route: str, extra: dict[str, Any]) -> tuple[int, bytes, str]:
    """Status, body and content type of one SDK call."""
    api = sdk.audio.transcriptions if route == "transcriptions" else sdk.audio.translations
    try:
        response = api.with_raw_response.create(
            model="tiny", file=_upload(2.2), **extra
        ).http_response
    except openai.APIStatusError as error:
        response = error.response
    return response.status_code, response.content, response.headers["content-type"]


@pytest.mark.parametrize(("route", "extra"), CASES)
def test_sync_sdk_gets_what_the_backend_answers(
    client: openai.OpenAI, direct: openai.OpenAI, route: str, extra: dict[str, Any]
) -> None:
    assert _create(client, route, extra) == _create(direct, route, extra)


@pytest.mark.parametrize(("route", "extra"), CASES[:3] + CASES[5:6])
def test_async_sdk_gets_what_the_backend_answers(
    gateway: GatewayProcess,
    simulator: SimulatorProcess,
    team_key: str,
    route: str,
    extra: dict[str, Any],
) -> None:
    async def body(base: str, key: str) -> bytes:
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0) as sdk:
            api = sdk.audio.transcriptions if route == "transcriptions" else sdk.audio.translations
            raw = await api.with_raw_response.create(model="tiny", file=_upload(1.5), **extra)
            return bytes(raw.http_response.content)

    async def both() -> tuple[bytes, bytes]:
        return await body(gateway.url, team_key), await body(simulator.base_url, "unused")

    through, straight = asyncio.run(both())
    assert through == straight


STREAMS: list[dict[str, Any]] = [
    {},
    {"extra_body": {"stream_include_usage": True}},
    {"extra_body": {"stream_include_usage": True, "stream_continuous_usage_stats": True}},
]


@pytest.mark.parametrize("extra", STREAMS)
def test_sync_stream_matches_the_backend(
    client: openai.OpenAI, direct: openai.OpenAI, extra: dict[str, Any]
) -> None:
    texts: list[str] = []
    for sdk in (client, direct):
        with sdk.audio.transcriptions.with_streaming_response.create(
            model="tiny", file=_upload(1.0), stream=True, **extra
        ) as response:
            assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
            texts.append(response.read().decode())
    assert _events(texts[0]) == _events(texts[1])
    assert _events(texts[0])[-1] == "[DONE]"


def test_async_stream_matches_the_backend(
    gateway: GatewayProcess, simulator: SimulatorProcess, team_key: str
) -> None:
    async def events(base: str, key: str) -> list[Any]:
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0) as sdk:
            stream = await sdk.audio.transcriptions.create(
                model="tiny",
                file=_upload(1.0),
                stream=True,
                extra_body={"stream_include_usage": True},
            )
            return [
                {k: v for k, v in e.to_dict().items() if k not in VOLATILE} async for e in stream
            ]

    async def both() -> tuple[list[Any], list[Any]]:
        return await events(gateway.url, team_key), await events(simulator.base_url, "unused")

    through, straight = asyncio.run(both())
    assert through == straight
    assert through


def test_transcription_is_recorded_with_its_audio_minutes(
    client: openai.OpenAI, calls: CallReader
) -> None:
    raw = client.audio.transcriptions.with_raw_response.create(model="tiny", file=_upload(2.2))
    seconds = raw.http_response.json()["usage"]["seconds"]
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert (row.endpoint, row.model, row.feature, row.status_code) == (
        "/v1/audio/transcriptions",
        "tiny",
        "chat",
        200,
    )
    assert row.team_id is not None
    assert row.audio_seconds == seconds == 3  # vLLM's usage: the duration, rounded up
    assert row.input_cost == pytest.approx(3 / 60 * AUDIO_PER_MINUTE)
    assert row.prompt_tokens is None and row.completion_tokens is None
    assert row.e2e_ms is not None and row.e2e_ms > 0


def test_translation_takes_its_duration_from_the_wav_header(
    client: openai.OpenAI, calls: CallReader
) -> None:
    raw = client.audio.translations.with_raw_response.create(model="tiny", file=_upload(1.5))
    assert list(raw.http_response.json()) == ["text"]  # vLLM gives translations no usage
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert row.endpoint == "/v1/audio/translations"
    assert row.audio_seconds == 1.5
    assert row.input_cost == pytest.approx(1.5 / 60 * AUDIO_PER_MINUTE)


def test_stream_is_recorded_with_tokens_and_first_text_time(
    client: openai.OpenAI, calls: CallReader
) -> None:
    with client.audio.transcriptions.with_streaming_response.create(
        model="tiny", file=_upload(1.0), stream=True, extra_body={"stream_include_usage": True}
    ) as response:
        events = _events(response.read().decode())
        call_id = response.headers["x-plumbline-call-id"]
    usage = events[-2]["usage"]
    row = calls.wait(call_id)
    assert row.stream is True
    assert (row.prompt_tokens, row.completion_tokens) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
    assert row.usage_source == "backend"
    assert row.ttft_ms is not None and row.e2e_ms is not None
    assert row.ttft_ms <= row.e2e_ms
    assert row.audio_seconds == 1.0  # a stream's usage has no duration: the WAV header's


def test_a_team_that_stores_bodies_keeps_the_fields_never_the_audio(
    gateway: GatewayProcess, database: str, calls: CallReader
) -> None:
    key = issue_key(database, "team-keeps", store_bodies=True)
    audio = wav(0.5)[:44] + b"SECRET-AUDIO-BYTES" * 100
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as sdk:
        raw = sdk.audio.transcriptions.with_raw_response.create(
            model="tiny", file=("memo.wav", audio, "audio/wav"), language="en"
        )
    call_id = raw.headers["x-plumbline-call-id"]
    calls.wait(call_id)
    with httpx.Client(base_url=gateway.url) as http:
        admin = issue_key(database, "ops-audio", admin=True)
        detail = http.get(f"/api/calls/{call_id}", headers={"Authorization": f"Bearer {admin}"})
    assert detail.status_code == 200, detail.text
    stored = detail.json()["body"]
    request = orjson.loads(stored["request"])
    assert request == {
        "model": "tiny",
        "language": "en",
        "file": {"filename": "memo.wav", "content_type": "audio/wav"},
    }
    assert b"SECRET-AUDIO-BYTES" not in orjson.dumps(stored)
