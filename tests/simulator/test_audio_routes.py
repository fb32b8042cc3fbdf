"""The simulated speech-to-text routes, driven by the official openai SDK and raw multipart.

No real vLLM here serves a speech model, so these check the shapes of vLLM 0.32's protocol
models (see simulator/audio_routes.py), not a capture.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator

import httpx
import openai
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.conftest import CAPTURE_LIKE
from tests.simulator.route_records import parse_events


def wav(seconds: float, rate: int = 16_000) -> bytes:
    """A silent mono 16-bit WAV file of the given length."""
    data = b"\0\0" * int(seconds * rate)
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data))
    return b"RIFF" + struct.pack("<I", 4 + len(chunks) + len(data)) + b"WAVE" + chunks + data


@pytest.fixture(scope="module")
def speech_sim() -> Iterator[SimulatorProcess]:
    """A simulator serving a speech-to-text model."""
    with SimulatorProcess({**CAPTURE_LIKE, "transcription": True}) as process:
        yield process


@pytest.fixture
def speech_sdk(speech_sim: SimulatorProcess) -> Iterator[openai.OpenAI]:
    """The openai SDK pointed at the speech simulator."""
    base = f"{speech_sim.base_url}/v1"
    with openai.OpenAI(base_url=base, api_key="sim", max_retries=0) as sdk:
        yield sdk


def _upload(seconds: float) -> tuple[str, io.BytesIO, str]:
    return ("clip.wav", io.BytesIO(wav(seconds)), "audio/wav")


def test_transcription_reports_the_duration_rounded_up(speech_sdk: openai.OpenAI) -> None:
    call = speech_sdk.audio.transcriptions.with_raw_response.create(model="tiny", file=_upload(2.2))
    raw = call.http_response.json()
    assert list(raw) == ["text", "usage"]
    assert call.parse().text == raw["text"]
    assert raw["usage"] == {"type": "duration", "seconds": 3}
    assert isinstance(raw["text"], str)


def test_translation_has_no_usage(speech_sim: SimulatorProcess) -> None:
    files = {"file": ("clip.wav", wav(1.0), "audio/wav")}
    resp = httpx.post(
        f"{speech_sim.base_url}/v1/audio/translations", files=files, data={"model": "tiny"}
    )
    assert resp.status_code == 200
    assert list(resp.json()) == ["text"]


def test_verbose_json_has_one_segment_and_the_duration(speech_sim: SimulatorProcess) -> None:
    files = {"file": ("clip.wav", wav(1.5), "audio/wav")}
    data = {"model": "tiny", "response_format": "verbose_json", "language": "fr"}
    body = httpx.post(
        f"{speech_sim.base_url}/v1/audio/transcriptions", files=files, data=data
    ).json()
    assert list(body) == ["duration", "language", "text", "segments", "words"]
    assert body["duration"] == 1.5
    assert body["language"] == "fr"
    assert list(body["segments"][0]) == [
        "id",
        "avg_logprob",
        "compression_ratio",
        "end",
        "no_speech_prob",
        "seek",
        "start",
        "temperature",
        "text",
        "tokens",
    ]


def test_stream_sends_chunks_then_usage_then_done(speech_sim: SimulatorProcess) -> None:
    files = {"file": ("clip.wav", wav(1.0), "audio/wav")}
    data = {"model": "tiny", "stream": "true", "stream_include_usage": "true"}
    resp = httpx.post(f"{speech_sim.base_url}/v1/audio/transcriptions", files=files, data=data)
    assert resp.headers["content-type"] == "text/event-stream; charset=utf-8"
    events = [event["data"] for event in parse_events(resp.text)]
    assert events[-1] == "[DONE]"
    usage, chunks = events[-2], events[:-2]
    assert usage["choices"] == [] and set(usage["usage"]) == {
        "prompt_tokens",
        "total_tokens",
        "completion_tokens",
    }
    assert {chunk["object"] for chunk in chunks} == {"transcription.chunk"}
    assert chunks[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    assert all(chunk["id"].startswith("trsc-") for chunk in chunks)


def test_srt_is_refused_as_vllm_does(speech_sim: SimulatorProcess) -> None:
    files = {"file": ("clip.wav", wav(1.0), "audio/wav")}
    resp = httpx.post(
        f"{speech_sim.base_url}/v1/audio/transcriptions",
        files=files,
        data={"model": "tiny", "response_format": "srt"},
    )
    assert resp.status_code == 400
    assert resp.json()["error"] == {
        "message": "Currently only support response_format: "
        "`text`, `json`, `verbose_json` or `diarized_json`",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


def test_missing_file_is_a_schema_error(speech_sim: SimulatorProcess) -> None:
    resp = httpx.post(
        f"{speech_sim.base_url}/v1/audio/transcriptions",
        files={"model": (None, b"tiny")},
    )
    assert resp.status_code == 400
    assert resp.json()["error"]["param"] == "body.file"


def test_without_a_speech_model_the_routes_are_404(http: httpx.Client) -> None:
    files = {"file": ("clip.wav", wav(1.0), "audio/wav")}
    resp = http.post("/v1/audio/transcriptions", files=files, data={"model": "tiny"})
    assert resp.status_code == 404
    assert resp.json() == {"detail": "Not Found"}
