"""Serve a model through litellm, for hosted providers that do not speak OpenAI's protocol.

litellm is imported only here, on the first call to such a model. Its responses are turned back
into OpenAI JSON and SSE events so the same metering applies as for vLLM backends.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from time import perf_counter
from typing import Any
from urllib.parse import urlsplit

import orjson

from gateway.config import ModelConfig
from gateway.errors import GatewayError
from gateway.proxy.call_kinds.base import CallKind
from gateway.proxy.call_kinds.choices_meter import encode_event
from gateway.proxy.relay import Relay
from gateway.proxy.request_plan import MeasurementPlan
from plumbline.litellm_offline import keep_litellm_offline


def _provider_error(error: Exception, model: ModelConfig) -> GatewayError:
    status = getattr(error, "status_code", None)
    if type(status) is not int or not 400 <= status < 600:
        status = 502
    message = str(getattr(error, "message", None) or error)
    # A provider (or litellm) may echo the request's key or address; neither is the client's.
    address = urlsplit(model.api_base).netloc if model.api_base else None
    for secret in (model.api_key, model.api_base, address):
        if secret:
            message = message.replace(secret, "[configured]")
    return GatewayError(status, f"Provider error: {message}")


# At DEBUG these print whole requests (prompts, and litellm a curl line): never below INFO.
CHATTY_LOGGERS = ("LiteLLM", "LiteLLM Proxy", "LiteLLM Router", "openai")


def _quiet_provider_logs() -> None:
    for name in CHATTY_LOGGERS:
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < logging.INFO:
            logger.setLevel(logging.INFO)


async def _call(model: ModelConfig, payload: dict[str, Any], kind: CallKind) -> Any:
    keep_litellm_offline()  # before the first import, whichever entry started this process
    import litellm

    _quiet_provider_logs()

    arguments = {k: v for k, v in payload.items() if k != "model"}
    arguments.update(
        model=model.litellm_model,
        api_base=model.api_base,
        api_key=model.api_key or "unused",
        drop_params=True,
    )
    return await kind.call_litellm(litellm, arguments)


async def _events(response: Any) -> AsyncIterator[bytes]:
    async for chunk in response:
        yield encode_event(chunk.model_dump(exclude_none=True))
    yield b"data: [DONE]\n\n"


async def relay_through_litellm(
    relay: Relay, model: ModelConfig, body: bytes, plan: MeasurementPlan
) -> None:
    """Serve one call through litellm, metered like any other (its reply is not kept)."""
    kind = relay.kind
    payload = orjson.loads(body)
    # Before litellm sees the body: its keyword arguments also choose hosts and credentials.
    kind.check_litellm_params(payload)
    relay.upstream_started = perf_counter()
    try:
        response = await _call(model, payload, kind)
    except Exception as error:
        raise _provider_error(error, model) from None
    meter = relay.new_meter(plan, None)
    if not plan.stream:
        t = perf_counter()
        out = meter.body(orjson.dumps(response.model_dump()), 200)
        relay.processing_s += perf_counter() - t
        relay.finished = True
        await relay.send_reply(200, out, "application/json")
        return
    await relay.send_stream_start("text/event-stream; charset=utf-8")
    try:
        async for event in _events(response):
            t = perf_counter()
            out = b"".join(meter.feed(event, t))
            relay.processing_s += perf_counter() - t
            if out:
                await relay.send_chunk(out)
    except Exception as error:
        raise _provider_error(error, model) from None
    relay.finished = True
    await relay.send_chunk(b"".join(meter.flush()), last=True)
