"""The `live_samples` row of a call picked for resampling (built in the writer thread).

The request is stored re-askable (non-streaming, one choice); the original answer is read from
the response the client received, whole body or SSE stream.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from gateway.metering.record import CallRecord

log = logging.getLogger(__name__)
STREAM_ONLY = ("stream", "stream_options")


def live_sample_row(record: CallRecord) -> dict[str, Any] | None:
    """The pending row for a sampled, successful call; None when there is nothing to re-ask."""
    order = record.live_sample
    if order is None or record.cancelled or record.status_code >= 400:
        return None
    if record.request_body is None or record.response_body is None or record.team_id is None:
        return None
    try:
        request = orjson.loads(record.request_body)
        text = _answer_text(record.response_body, record.stream)
    except (orjson.JSONDecodeError, ValueError, TypeError, KeyError, IndexError) as error:
        log.debug("call %s: not resampled (%s)", record.id, error)
        return None
    if not isinstance(request, dict) or text is None:
        return None
    for name in STREAM_ONLY:
        request.pop(name, None)
    if "n" in request:
        request["n"] = 1
    if not _storable(request):
        log.debug("call %s: not resampled (request too deep to store)", record.id)
        return None
    return {
        "call_id": record.id,
        "created_at": record.created_at,
        "team_id": record.team_id,
        "feature": (record.feature or "none")[:128],
        "model": record.model or "",
        "endpoint": record.endpoint,
        "request": request,
        "original_text": text,
        "keep_texts": record.store_body,
        "answer_spec": order.answer,
        "resamples": order.resamples,
        "priority": 1 if order.priority else None,
        "status": "pending",
        "attempts": 0,
    }


def _storable(request: dict[str, Any]) -> bool:
    # orjson writes 254 levels at most, fewer than it reads: the spool must take the request.
    try:
        orjson.dumps(request)
    except TypeError:
        return False
    return True


def _answer_text(body: bytes, stream: bool) -> str | None:
    if not stream:
        choice = orjson.loads(body)["choices"][0]
        message = choice.get("message")
        text = message.get("content") if message is not None else choice.get("text")
        return text if isinstance(text, str) else None
    parts: list[str] = []
    for event in body.split(b"\n\n"):
        data = event.strip()
        if not data.startswith(b"data:") or data[5:].strip() == b"[DONE]":
            continue
        chunk = orjson.loads(data[5:])
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            piece = delta.get("content") if delta is not None else choice.get("text")
            if isinstance(piece, str):
                parts.append(piece)
    return "".join(parts)
