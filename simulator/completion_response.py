"""Text completion bodies and SSE chunks, key for key as vLLM 0.32 writes them."""

from __future__ import annotations

from typing import Any

import orjson

from simulator.choices import Choice, ResponseJob
from simulator.generation import TokenLogprob
from simulator.logprobs_format import completion_logprobs
from simulator.sse import DONE
from simulator.tokenizer import Tokenizer
from simulator.usage import running_usage, without_nulls


class CompletionFormatter:
    """Formats one completion request's stream chunks and final body."""

    def __init__(self, job: ResponseJob, tokenizer: Tokenizer) -> None:
        self.job = job
        self.tokenizer = tokenizer
        options = job.options
        head = {
            "id": options.response_id,
            "object": "text_completion",
            "created": options.created,
            "model": options.model,
        }
        self._prefix = b"data: " + orjson.dumps(head)[:-1] + b',"choices":['

    def _logprobs(self, choice: Choice, start: int, end: int) -> dict[str, Any] | None:
        options = self.job.options
        generated = choice.output.logprobs
        if generated is None or options.top_logprobs is None:
            return None
        entries: list[TokenLogprob] = []
        echoed = options.echo and start == 0 and choice.prompt.logprobs is not None
        if echoed and choice.prompt.logprobs is not None:
            entries.extend(entry for entry, _ in choice.prompt.logprobs)
        entries.extend(generated[start:end])
        result = completion_logprobs(
            self.tokenizer,
            entries,
            options.top_logprobs,
            choice.text_offset,
            options.as_token_ids,
            null_first=echoed,
        )
        offsets = result["text_offset"]
        if offsets:
            last = result["tokens"][-1]
            choice.text_offset = offsets[-1] + len(last)
        return result

    def head(self) -> bytes:
        """Completions streams start directly with tokens."""
        return b""

    def tokens(self, choice: Choice, start: int, end: int) -> bytes:
        """One chunk carrying tokens [start, end) of a choice; the last one finishes it."""
        options = self.job.options
        output = choice.output
        finished = end >= len(output.token_ids)
        text = choice.delta_text(start, end)
        if options.echo and start == 0:
            text = choice.prompt.text + text
        data = {
            "index": choice.index,
            "text": text,
            "logprobs": self._logprobs(choice, start, end),
            "finish_reason": output.finish_reason if finished else None,
            "stop_reason": output.stop_reason if finished else None,
            # The chunk that echoes the prompt names its token ids, asked for or not.
            "prompt_token_ids": (
                choice.prompt.token_ids
                if start == 0 and (options.return_token_ids or options.echo)
                else None
            ),
            "token_ids": output.token_ids[start:end] if options.return_token_ids else None,
        }
        body = self._prefix + orjson.dumps(data) + b"]"
        if options.continuous_usage:
            usage = running_usage(len(choice.prompt.token_ids), end, chat=False)
            body += b',"usage":' + orjson.dumps(usage)
        elif finished and not options.include_usage:
            body += b',"system_fingerprint":' + orjson.dumps(options.fingerprint)
        return body + b"}\n\n"

    def closing(self) -> bytes:
        """The end of a stream: the usage chunk when asked for, then [DONE]."""
        return (self.usage() if self.job.options.include_usage else b"") + DONE

    def usage(self) -> bytes:
        """The final `choices: []` chunk with usage, fingerprint and per-request metrics."""
        options = self.job.options
        data: dict[str, Any] = {
            "id": options.response_id,
            "object": "text_completion",
            "created": options.created,
            "model": options.model,
            "choices": [],
            "usage": self.job.usage(created_cache_tokens=None),
            "system_fingerprint": options.fingerprint,
            "metrics": self.job.request_metrics(),
        }
        return b"data: " + orjson.dumps(without_nulls(data)) + b"\n\n"

    def body(self) -> bytes:
        """The non-streaming response, every key present."""
        options = self.job.options
        choices = []
        for choice in self.job.choices:
            output = choice.output
            text = choice.prompt.text + output.text if options.echo else output.text
            choices.append(
                {
                    "index": choice.index,
                    "text": text,
                    "logprobs": self._logprobs(choice, 0, len(output.token_ids)),
                    "finish_reason": output.finish_reason,
                    "stop_reason": output.stop_reason,
                    "token_ids": output.token_ids if options.return_token_ids else None,
                    "prompt_logprobs": choice.prompt.logprobs_body,
                    "prompt_token_ids": (
                        choice.prompt.token_ids if options.return_token_ids else None
                    ),
                    "routed_experts": None,
                }
            )
        data = {
            "id": options.response_id,
            "object": "text_completion",
            "created": options.created,
            "model": options.model,
            "choices": choices,
            "service_tier": None,
            "system_fingerprint": options.fingerprint,
            "usage": self.job.usage(created_cache_tokens=None),
            "kv_transfer_params": None,
            "ec_transfer_params": None,
            "metrics": self.job.request_metrics(),
        }
        return orjson.dumps(data)
