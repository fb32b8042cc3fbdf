"""Transcription and translation answers in vLLM 0.32's shapes: JSON bodies or `*.chunk` SSE."""

from __future__ import annotations

import math
from typing import Any

import orjson

from simulator.choices import Choice, ResponseJob
from simulator.sse import DONE


class AudioFormatter:
    """One speech-to-text answer; `task` is `transcribe` or `translate`."""

    def __init__(
        self,
        job: ResponseJob,
        task: str,
        response_format: str,
        seconds: float,
        language: str,
        temperature: float,
    ) -> None:
        self.job = job
        self.task = task
        self.response_format = response_format
        self.seconds = seconds
        self.language = language
        self.temperature = temperature
        self.object = "transcription.chunk" if task == "transcribe" else "translation.chunk"

    def _usage(self, completion: int) -> dict[str, int]:
        prompt = len(self.job.prompts[0].token_ids)
        return {
            "prompt_tokens": prompt,
            "total_tokens": prompt + completion,
            "completion_tokens": completion,
        }

    def _chunk(self, choices: list[dict[str, Any]], usage: dict[str, int] | None) -> bytes:
        options = self.job.options
        data: dict[str, Any] = {
            "id": options.response_id,
            "object": self.object,
            "created": options.created,
            "model": options.model,
            "choices": choices,
        }
        if usage is not None:
            data["usage"] = usage
        return b"data: " + orjson.dumps(data) + b"\n\n"

    def head(self) -> bytes:
        """Nothing precedes the first text chunk."""
        return b""

    def tokens(self, choice: Choice, start: int, end: int) -> bytes:
        """A text delta (empty ones are skipped until the last, which carries the finish)."""
        output = choice.output
        finished = end >= len(output.token_ids)
        text = choice.delta_text(start, end)
        if not text and not finished:
            return b""
        delta: dict[str, Any] = {"delta": {"content": text}}
        if finished:
            delta.update(finish_reason=output.finish_reason, stop_reason=output.stop_reason)
        continuous = self.job.options.continuous_usage
        return self._chunk([delta], self._usage(end) if continuous else None)

    def closing(self) -> bytes:
        """The usage chunk when asked for, then [DONE]."""
        if not self.job.options.include_usage:
            return DONE
        completion = self.job.choices[0].sequence.emitted
        return self._chunk([], self._usage(completion)) + DONE

    def body(self) -> bytes:
        """`{"text", "usage"}` (transcriptions; usage is the audio's seconds, rounded up),
        `{"text"}` (translations), or the verbose form with one segment."""
        output = self.job.choices[0].output
        text = output.text
        if self.response_format == "verbose_json":
            return orjson.dumps(self._verbose(text, output.token_ids))
        if self.task != "transcribe":
            return orjson.dumps({"text": text})
        usage = {"type": "duration", "seconds": math.ceil(self.seconds)}
        return orjson.dumps({"text": text, "usage": usage})

    def _verbose(self, text: str, token_ids: list[int]) -> dict[str, Any]:
        segment = {
            "id": 0,
            "avg_logprob": 0.0,
            "compression_ratio": 1.0,
            "end": self.seconds,
            "no_speech_prob": None,
            "seek": 0,
            "start": 0.0,
            "temperature": self.temperature,
            "text": text,
            "tokens": token_ids,
        }
        return {
            "duration": self.seconds,
            "language": self.language,
            "text": text,
            "segments": [segment],
            "words": None,
        }
