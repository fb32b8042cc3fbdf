"""Chat completion bodies and SSE chunks, key for key as vLLM 0.32 writes them."""

from __future__ import annotations

from typing import Any

import orjson

from simulator.choices import Choice, ResponseJob
from simulator.logprobs_format import chat_content
from simulator.sse import DONE
from simulator.tokenizer import Tokenizer
from simulator.usage import running_usage, without_nulls


class ChatFormatter:
    """Formats one chat request's stream chunks and final body."""

    def __init__(self, job: ResponseJob, tokenizer: Tokenizer) -> None:
        self.job = job
        self.tokenizer = tokenizer
        options = job.options
        head = {
            "id": options.response_id,
            "object": "chat.completion.chunk",
            "created": options.created,
            "model": options.model,
        }
        self._prefix = b"data: " + orjson.dumps(head)[:-1] + b',"choices":['
        self._prompt_len = len(job.prompts[0].token_ids)

    def _logprobs(self, choice: Choice, start: int, end: int) -> dict[str, Any] | None:
        options = self.job.options
        entries = choice.output.logprobs
        if entries is None or options.top_logprobs is None:
            return None
        key = (start, end, options.top_logprobs, options.as_token_ids)
        content = choice.output.rendered.get(key)
        if content is None:
            content = choice.output.rendered[key] = chat_content(
                self.tokenizer, entries[start:end], options.top_logprobs, options.as_token_ids
            )
        return {"content": content}

    def _chunk(self, choice: dict[str, Any], tail: dict[str, Any] | None = None) -> bytes:
        body = self._prefix + orjson.dumps(choice) + b"]"
        if tail:
            body += b"," + orjson.dumps(tail)[1:-1]
        return body + b"}\n\n"

    def head(self) -> bytes:
        """The role chunk of every choice, then the echoed last message if asked."""
        options = self.job.options
        parts = []
        for choice in self.job.choices:
            data = {
                "index": choice.index,
                "delta": {"role": "assistant", "content": ""},
                "logprobs": None,
                "finish_reason": None,
            }
            tail: dict[str, Any] = {}
            if options.continuous_usage:
                tail["usage"] = running_usage(self._prompt_len, 0)
            tail["prompt_token_ids"] = choice.prompt.token_ids if options.return_token_ids else None
            tail["prompt_text"] = None
            parts.append(self._chunk(data, tail))
        if options.echo and options.echo_text:
            for choice in self.job.choices:
                data = {
                    "index": choice.index,
                    "delta": {"content": options.echo_text},
                    "logprobs": None,
                    "finish_reason": None,
                }
                usage = running_usage(self._prompt_len, 0) if options.continuous_usage else None
                parts.append(self._chunk(data, {"usage": usage} if usage else None))
        return b"".join(parts)

    def tokens(self, choice: Choice, start: int, end: int) -> bytes:
        """One chunk carrying tokens [start, end) of a choice; the last one finishes it."""
        options = self.job.options
        output = choice.output
        finished = end >= len(output.token_ids)
        data: dict[str, Any] = {
            "index": choice.index,
            "delta": {"content": choice.delta_text(start, end)},
            "logprobs": self._logprobs(choice, start, end),
            "finish_reason": output.finish_reason if finished else None,
        }
        if finished:
            data["stop_reason"] = output.stop_reason
        data["token_ids"] = output.token_ids[start:end] if options.return_token_ids else None
        tail: dict[str, Any] = {}
        if finished and not options.include_usage:
            tail["system_fingerprint"] = options.fingerprint
        if options.continuous_usage:
            tail["usage"] = running_usage(self._prompt_len, end)
        return self._chunk(data, tail)

    def closing(self) -> bytes:
        """The end of a stream: the usage chunk when asked for, then [DONE]."""
        return (self.usage() if self.job.options.include_usage else b"") + DONE

    def usage(self) -> bytes:
        """The final `choices: []` chunk with usage, fingerprint and per-request metrics."""
        options = self.job.options
        data: dict[str, Any] = {
            "id": options.response_id,
            "object": "chat.completion.chunk",
            "created": options.created,
            "model": options.model,
            "choices": [],
            "usage": self.job.usage(created_cache_tokens=0),
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
            content = output.text
            if options.echo and options.echo_text:
                content = options.echo_text + content
            choices.append(
                {
                    "index": choice.index,
                    "message": {
                        "role": "assistant",
                        "content": content,
                        "refusal": None,
                        "annotations": None,
                        "audio": None,
                        "function_call": None,
                        "reasoning": None,
                    },
                    "logprobs": self._logprobs(choice, 0, len(output.token_ids)),
                    "finish_reason": output.finish_reason,
                    "stop_reason": output.stop_reason,
                    "token_ids": output.token_ids if options.return_token_ids else None,
                    "routed_experts": None,
                }
            )
        prompt = self.job.prompts[0]
        data = {
            "id": options.response_id,
            "object": "chat.completion",
            "created": options.created,
            "model": options.model,
            "choices": choices,
            "service_tier": None,
            "system_fingerprint": options.fingerprint,
            "usage": self.job.usage(created_cache_tokens=0),
            "prompt_logprobs": prompt.logprobs_body,
            "prompt_token_ids": prompt.token_ids if options.return_token_ids else None,
            "prompt_text": None,
            "kv_transfer_params": None,
            "ec_transfer_params": None,
            "metrics": self.job.request_metrics(),
        }
        return orjson.dumps(data)
