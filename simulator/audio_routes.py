"""POST /v1/audio/transcriptions and /v1/audio/translations, for a speech-to-text model.

vLLM registers these only when the served model transcribes (Whisper and the like), so they
exist here only with `transcription: true`; the tiny generate model answers them 404. The text
is the simulator's pseudo-text; the duration is read from the upload (see audio_duration).
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.responses import Response

from simulator.audio_duration import audio_seconds
from simulator.audio_protocol import ANSWERED_FORMATS, AudioRequest
from simulator.audio_response import AudioFormatter
from simulator.choices import PromptInfo
from simulator.errors import ApiError, engine_dead_error
from simulator.multipart_form import parse_form
from simulator.protocol import ChatCompletionRequest, ChatMessage, StreamOptions
from simulator.request_pipeline import build_job, response_id, response_options, sampling_settings
from simulator.state import SimulatorState
from simulator.streaming import GenerationResponse
from simulator.validation import check_sampling, resolve_max_tokens
from simulator.validation_errors import validation_error


def _parse(content_type: str, raw: bytes) -> AudioRequest:
    fields: dict[str, Any] | None = parse_form(content_type, raw)
    if fields is None:
        fields = {}
    try:
        return AudioRequest.model_validate(fields)
    except ValidationError as exc:
        errors = [dict(e, loc=("body", *e["loc"])) for e in exc.errors(include_url=False)]
        raise validation_error(errors) from None


async def _speech_to_text(request: Request, task: str) -> Response:
    received = time.perf_counter()
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = _parse(request.headers.get("content-type", ""), await request.body())
        return _prepare(state, request, body, task, received)
    except ApiError as error:
        state.stats.rejected += 1
        return error.response()


def _prepare(
    state: SimulatorState, request: Request, body: AudioRequest, task: str, received: float
) -> Response:
    state.check_model(body.model)
    if body.response_format not in ANSWERED_FORMATS:
        raise ApiError(
            "Currently only support response_format: "
            "`text`, `json`, `verbose_json` or `diarized_json`"
        )
    if body.response_format in ("verbose_json", "diarized_json") and body.stream:
        raise ApiError(f"{body.response_format} format doesn't support streaming case")
    plan = state.fault_plan(request.headers)
    if plan.engine_dead:
        raise engine_dead_error()
    seconds = audio_seconds(body.file.data)
    prompt_ids = state.tokenizer.encode(body.prompt)
    max_tokens = resolve_max_tokens(
        body.max_completion_tokens, len(prompt_ids), state.config.max_model_len
    )
    stream_options = StreamOptions(
        include_usage=body.stream_include_usage,
        continuous_usage_stats=body.stream_continuous_usage_stats,
    )
    chat = ChatCompletionRequest(
        messages=[ChatMessage(role="user", content=body.prompt)],
        model=body.model,
        stream=body.stream,
        stream_options=stream_options if body.stream else None,
        **body.sampling(),
    )
    check_sampling(chat, max_tokens)
    settings = sampling_settings(chat, max_tokens, None)
    rid = response_id("trsc" if task == "transcribe" else "trsl", request.headers, chat)
    options = response_options(state, chat, rid, None, received)
    prompt = PromptInfo(prompt_ids, f"<audio:{body.file.filename}>{body.prompt}")
    job = build_job(state, [prompt], settings, 1, options)
    formatter = AudioFormatter(
        job, task, body.response_format, seconds, body.language or "en", body.temperature
    )
    return GenerationResponse(job, formatter, state.engine, state.stats, plan)


async def create_transcription(request: Request) -> Response:
    """Speech to text in the spoken language, with the audio's duration as usage."""
    return await _speech_to_text(request, "transcribe")


async def create_translation(request: Request) -> Response:
    """Speech to English text (vLLM reports no usage for translations)."""
    return await _speech_to_text(request, "translate")


def build_audio_router() -> APIRouter:
    """Router with the speech-to-text endpoints."""
    router = APIRouter()
    router.add_api_route("/v1/audio/transcriptions", create_transcription, methods=["POST"])
    router.add_api_route("/v1/audio/translations", create_translation, methods=["POST"])
    return router
