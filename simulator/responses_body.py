"""The Responses API objects as vLLM 0.32 writes them: response, output message, usage, logprobs."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from simulator.choices import Choice, ResponseJob
from simulator.logprobs_format import chat_content
from simulator.responses_protocol import ResponsesRequest
from simulator.sampling import SamplingSettings
from simulator.tokenizer import Tokenizer


@dataclass(slots=True)
class ResponseHead:
    """The parts of a response object fixed when the request is accepted."""

    response_id: str
    message_id: str
    fields: dict[str, Any]

    def response(
        self,
        status: str,
        output: list[dict[str, Any]],
        usage: dict[str, Any] | None = None,
        metrics: dict[str, Any] | None = None,
        *,
        finished: bool = False,
    ) -> dict[str, Any]:
        """The response object; only a finished one has the `metrics` key."""
        fields = self.fields
        data: dict[str, Any] = {
            "id": self.response_id,
            "created_at": fields["created_at"],
            "incomplete_details": {"reason": "max_output_tokens"}
            if status == "incomplete"
            else None,
        }
        for key in ("instructions", "metadata"):
            data[key] = fields[key]
        data.update(model=fields["model"], object="response", output=output)
        for key in (
            "parallel_tool_calls",
            "temperature",
            "tool_choice",
            "tools",
            "top_p",
            "background",
            "max_output_tokens",
            "max_tool_calls",
            "previous_response_id",
        ):
            data[key] = fields[key]
        data.update(prompt=None, reasoning=None, service_tier=fields["service_tier"])
        data.update(status=status, text=None, top_logprobs=fields["top_logprobs"])
        data.update(truncation=fields["truncation"], usage=usage, user=fields["user"])
        if finished:
            data["metrics"] = metrics
        data.update(
            presence_penalty=fields["presence_penalty"],
            frequency_penalty=fields["frequency_penalty"],
            kv_transfer_params=None,
            ec_transfer_params=None,
            input_messages=None,
            output_messages=None,
        )
        return data


def response_head(
    request: ResponsesRequest, settings: SamplingSettings, model: str, response_id: str
) -> ResponseHead:
    """What every event and body of one response repeats."""
    fields = {
        "created_at": int(time.time()),
        "instructions": request.instructions,
        "metadata": request.metadata,
        "model": model,
        "parallel_tool_calls": request.parallel_tool_calls,
        "temperature": float(settings.temperature),
        "tool_choice": request.tool_choice,
        "tools": request.tools,
        "top_p": float(settings.top_p),
        "background": request.background,
        "max_output_tokens": request.max_output_tokens,
        "max_tool_calls": request.max_tool_calls,
        "previous_response_id": request.previous_response_id,
        "service_tier": request.service_tier,
        "top_logprobs": settings.top_logprobs,
        "truncation": request.truncation,
        "user": request.user,
        "presence_penalty": request.presence_penalty or 0.0,
        "frequency_penalty": request.frequency_penalty or 0.0,
    }
    return ResponseHead(response_id, f"msg_{secrets.token_hex(8)}", fields)


def message_item(
    head: ResponseHead, text: str, logprobs: list[dict[str, Any]] | None, status: str
) -> dict[str, Any]:
    """The assistant message output item (no content yet while it is `in_progress`)."""
    content = [] if status == "in_progress" else [text_part(text, logprobs)]
    return {
        "id": head.message_id,
        "content": content,
        "role": "assistant",
        "status": status,
        "type": "message",
        "phase": None,
    }


def text_part(text: str, logprobs: list[dict[str, Any]] | None) -> dict[str, Any]:
    """An `output_text` content part."""
    return {"annotations": [], "text": text, "type": "output_text", "logprobs": logprobs}


def response_usage(job: ResponseJob) -> dict[str, Any]:
    """Usage in the Responses API's names, with its per-turn lists (empty outside tool loops)."""
    usage = job.usage(created_cache_tokens=0)
    details = usage["prompt_tokens_details"] or {}
    return {
        "input_tokens": usage["prompt_tokens"],
        "input_tokens_details": {
            "cached_tokens": details.get("cached_tokens", 0),
            "cache_write_tokens": 0,
            "input_tokens_per_turn": [],
            "cached_tokens_per_turn": [],
        },
        "output_tokens": usage["completion_tokens"],
        "output_tokens_details": {
            "reasoning_tokens": 0,
            "tool_output_tokens": 0,
            "output_tokens_per_turn": [],
            "tool_output_tokens_per_turn": [],
        },
        "total_tokens": usage["total_tokens"],
    }


def output_logprobs(
    tokenizer: Tokenizer, choice: Choice, start: int, end: int, top: int, with_bytes: bool
) -> list[dict[str, Any]]:
    """Logprobs of tokens [start, end): with bytes in bodies and parts, without in deltas."""
    entries = choice.output.logprobs or []
    content = chat_content(tokenizer, entries[start:end], top, as_token_ids=False)
    return [_entry(item, with_bytes) for item in content]


def _entry(item: dict[str, Any], with_bytes: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"token": item["token"]}
    if with_bytes:
        entry["bytes"] = item["bytes"]
    entry["logprob"] = item["logprob"]
    if "top_logprobs" in item:
        entry["top_logprobs"] = [_entry(alt, with_bytes) for alt in item["top_logprobs"]]
    return entry


def final_status(job: ResponseJob) -> str:
    """`incomplete` when max_output_tokens cut the answer, else `completed`."""
    return "incomplete" if job.choices[0].output.finish_reason == "length" else "completed"
