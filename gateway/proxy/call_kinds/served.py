"""The call kinds the proxy serves, one adapter each."""

from __future__ import annotations

from gateway.proxy.call_kinds.audio import Transcriptions, Translations
from gateway.proxy.call_kinds.base import CallKind
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.call_kinds.completions import Completions
from gateway.proxy.call_kinds.responses import Responses


def served_kinds() -> tuple[CallKind, ...]:
    """A fresh adapter of every kind the proxy serves."""
    return (ChatCompletions(), Completions(), Responses(), Transcriptions(), Translations())
