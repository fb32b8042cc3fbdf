"""The call kinds the proxy serves, one adapter each."""

from __future__ import annotations

from gateway.proxy.call_kinds.base import CallKind
from gateway.proxy.call_kinds.batch_chat import BatchChatCompletions
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.call_kinds.completions import Completions
from gateway.proxy.call_kinds.render import RENDER_PATHS, Render
from gateway.proxy.call_kinds.responses import Responses
from gateway.proxy.call_kinds.tokens_generate import TokensGenerate


def served_kinds() -> tuple[CallKind, ...]:
    """A fresh adapter of every kind the proxy serves."""
    return (
        ChatCompletions(),
        Completions(),
        Responses(),
        BatchChatCompletions(),
        TokensGenerate(),
        *(Render(path) for path in RENDER_PATHS),
    )
