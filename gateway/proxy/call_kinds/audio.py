"""The speech-to-text adapters (`/v1/audio/transcriptions`, `/v1/audio/translations`).

Their requests are multipart uploads, read as they arrive (`gateway/proxy/audio/`): the form's
fields first, to route and meter by, then the audio, streamed upstream and never stored.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from gateway.config import Limits
from gateway.errors import GatewayError
from gateway.proxy.asgi_io import Receive
from gateway.proxy.audio.meter import AudioMeter
from gateway.proxy.audio.upload import AudioUpload
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.lax_values import RequestFields, ResponsesFields
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from gateway.proxy.request_upload import RequestUpload
from plumbline.logprob_codec import CHAT

# The form fields the gateway reads: each must be sent once.
READ_FIELDS = ("model", "stream", "max_completion_tokens")


class SpeechToText(CallKind):
    """One of vLLM's speech-to-text routes: an uploaded file in, text out."""

    fmt = CHAT  # no logprobs are captured; the format is never used
    body_format = "a speech-to-text answer"
    asks_stream_usage = False
    salts_cache = False
    takes_priority = False  # a form upload: its fields pass as the client sent them

    async def open_upload(
        self, receive: Receive, headers: dict[bytes, bytes], limits: Limits
    ) -> RequestUpload | None:
        """Read the form up to its `file` part (the rest streams upstream)."""
        return await AudioUpload.open(receive, headers, limits)

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """`stream` and `max_completion_tokens` as vLLM's form model reads them (lax strings)."""
        for name in READ_FIELDS:
            if isinstance(payload.get(name), list):
                raise GatewayError(400, f"The form sends `{name}` more than once.", name)
        subset = {
            "stream": payload.get("stream"),
            "max_output_tokens": payload.get("max_completion_tokens"),
        }
        try:
            fields = ResponsesFields.model_validate(
                {k: v for k, v in subset.items() if v is not None}
            )
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            name = "stream" if first["loc"][0] == "stream" else "max_completion_tokens"
            raise GatewayError(
                400, f"`{name}`: {first['msg']} (got {str(first.get('input'))[:100]!r}).", name
            ) from None
        # One answer, no logprobs: what a Responses request without `include` reads as.
        return RequestFields(fields)

    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Nothing: vLLM's speech-to-text routes return no logprobs."""
        return LogprobPlan()

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A speech-to-text answer's meter."""
        return AudioMeter(fingerprint)

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Never reached: the upload refuses litellm models first."""
        raise GatewayError(404, f"`{self.path}` needs a vLLM backend.", "model")

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Never reached: the upload refuses litellm models first."""
        raise GatewayError(404, f"`{self.path}` needs a vLLM backend.", "model")


class Transcriptions(SpeechToText):
    """Speech to text in the language spoken."""

    path = "/v1/audio/transcriptions"


class Translations(SpeechToText):
    """Speech to English text."""

    path = "/v1/audio/translations"
