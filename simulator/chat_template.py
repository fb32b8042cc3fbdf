"""The simulated model's chat template: `<s><|role|>content\n...<|assistant|>`."""

from __future__ import annotations

from collections.abc import Sequence

from simulator.protocol import ChatMessage


def render_chat(messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
    """Prompt text for `messages`, ending with the assistant header when asked."""
    parts = ["<s>"]
    parts.extend(f"<|{message.role}|>{message.text()}\n" for message in messages)
    if add_generation_prompt:
        parts.append("<|assistant|>")
    return "".join(parts)
