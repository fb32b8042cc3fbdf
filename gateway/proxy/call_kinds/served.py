"""The call kinds the proxy serves, one adapter each."""

from __future__ import annotations

from gateway.proxy.call_kinds.audio import Transcriptions, Translations
from gateway.proxy.call_kinds.base import CallKind
from gateway.proxy.call_kinds.batch_chat import BatchChatCompletions
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.call_kinds.completions import Completions
from gateway.proxy.call_kinds.messages import CountTokens, Messages
from gateway.proxy.call_kinds.pooling import pooling_kinds
from gateway.proxy.call_kinds.render import RENDER_PATHS, Render
from gateway.proxy.call_kinds.responses import Responses
from gateway.proxy.call_kinds.tokens_generate import TokensGenerate


def served_kinds() -> tuple[CallKind, ...]:
    """A fresh adapter of every kind the proxy serves."""
    return (
        ChatCompletions(),
        Completions(),
        Responses(),
        Messages(),
        CountTokens(),
        *pooling_kinds(),
        Transcriptions(),
        Translations(),
        BatchChatCompletions(),
        TokensGenerate(),
        *(Render(path) for path in RENDER_PATHS),
    )


def no_logprobs_reason(endpoint: str | None) -> str | None:
    """Why calls to `endpoint` have no logprobs, where the API it serves has none."""
    for kind in served_kinds():
        if kind.path == endpoint:
            return kind.no_logprobs_reason
    return None
