"""Form fields of POST /v1/audio/transcriptions and /v1/audio/translations (vLLM 0.32)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict

from simulator.multipart_form import Upload
from simulator.protocol import OpenAIModel

AudioResponseFormat = Literal["json", "text", "srt", "verbose_json", "vtt", "diarized_json"]
# The formats vLLM answers; srt and vtt pass the schema but are refused.
ANSWERED_FORMATS = ("text", "json", "verbose_json", "diarized_json")


class AudioRequest(OpenAIModel):
    """The fields both audio routes read (form values arrive as strings)."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    file: Upload
    model: str | None = None
    language: str | None = None
    prompt: str = ""
    response_format: AudioResponseFormat = "json"
    temperature: float = 0.0
    stream: bool | None = False
    stream_include_usage: bool | None = False
    stream_continuous_usage_stats: bool | None = False
    max_completion_tokens: int | None = None
    seed: int | None = None
    to_language: str | None = None

    def sampling(self) -> dict[str, Any]:
        """The fields a chat request would carry, for the shared sampling checks."""
        return {
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_completion_tokens,
        }
