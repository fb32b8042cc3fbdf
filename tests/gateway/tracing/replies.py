"""What the trace-context tests send and what their backends answer."""

from __future__ import annotations

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"
CHAT_REPLY = (
    b'{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"tiny",'
    b'"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},'
    b'"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,'
    b'"total_tokens":4}}'
)
BODY = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}
