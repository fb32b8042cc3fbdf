"""The only request fields a client may send to a litellm model: OpenAI sampling and messages.

litellm reads routing, credentials, headers, mocks and callbacks from the same keyword
arguments as sampling parameters (`base_url`, `api_key`, `extra_headers`, `mock_response`,
`success_callback`...), so every field is checked against an allowlist before the call, and
anything else is refused with a 400 naming it. Nested fields are checked too: a tool of type
`mcp` makes litellm connect to its `server_url`, and for some providers litellm downloads a
media part's URL itself, from the gateway's network.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import GatewayError

# Fields that only shape sampling or the answer; each is forwarded to the provider as data.
# Left out on purpose: `metadata` and `store` (kept by the provider, and litellm reads
# `metadata` for its callbacks), `service_tier` (bills the operator's provider account at another
# tier), `audio`/`modalities`/`prediction`/`web_search_options` (provider-side features that
# cost or fetch beyond a chat answer), and every litellm option.
COMMON_FIELDS = frozenset(
    {
        "model",  # replaced by the configured litellm model before the call
        "temperature",
        "top_p",
        "n",
        "stop",
        "max_tokens",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "seed",
        "user",
        "stream",
        "stream_options",
    }
)
CHAT_FIELDS = COMMON_FIELDS | {
    "messages",
    "max_completion_tokens",
    "top_logprobs",
    "response_format",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "functions",  # the deprecated form of `tools`: names and JSON schemas only
    "function_call",
    "reasoning_effort",
}
COMPLETION_FIELDS = COMMON_FIELDS | {"prompt", "suffix", "echo", "best_of"}

MESSAGE_FIELDS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call", "refusal"}
)
STREAM_OPTION_FIELDS = frozenset({"include_usage", "continuous_usage_stats"})
TOOL_FIELDS = frozenset({"type", "function"})
FUNCTION_FIELDS = frozenset({"name", "description", "parameters", "strict"})
# Content parts whose data travels inline; a part that names a URL is refused unless data:.
PART_TYPES = frozenset({"text", "image_url", "input_audio", "file"})


def _refuse(param: str, why: str) -> GatewayError:
    return GatewayError(400, f"`{param}` is not accepted for this model: {why}", param)


def _only(value: dict[str, Any], allowed: frozenset[str], where: str, why: str) -> None:
    for name in value:
        if name not in allowed:
            raise _refuse(f"{where}{name}"[:200], why)


def _check_part(part: Any, where: str) -> None:
    if not isinstance(part, dict):
        return  # the provider answers malformed content with its own 400
    kind = part.get("type")
    if kind not in PART_TYPES:
        raise _refuse(f"{where}.type", "content parts may be text, image_url, input_audio, file.")
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str) or not url.startswith("data:"):
            raise _refuse(
                f"{where}.image_url.url", "send the image inline as a `data:` URL, not a link."
            )
    if kind == "file":
        file = part.get("file")
        if not isinstance(file, dict) or set(file) - {"file_data", "filename"}:
            raise _refuse(f"{where}.file", "send the file inline in `file_data` (base64).")
        if not _inline(file.get("file_data")):
            raise _refuse(f"{where}.file.file_data", "send base64 or a `data:` URL, not a link.")
    if kind == "input_audio":
        audio = part.get("input_audio")
        if isinstance(audio, dict) and not _inline(audio.get("data")):
            raise _refuse(f"{where}.input_audio.data", "send base64 audio, not a link.")


def _inline(value: Any) -> bool:
    """Base64 (which has no `:`) or a data: URL; litellm fetches anything else it can."""
    return not isinstance(value, str) or value.startswith("data:") or ":" not in value


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list):
        return
    why = "messages carry role, content, name, tool_calls, tool_call_id, function_call, refusal."
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        _only(message, MESSAGE_FIELDS, f"messages[{i}].", why)
        content = message.get("content")
        if isinstance(content, list):
            for j, part in enumerate(content):
                _check_part(part, f"messages[{i}].content[{j}]")


def _check_tools(tools: Any) -> None:
    if not isinstance(tools, list):
        return
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        if tool.get("type") != "function":
            raise _refuse(f"tools[{i}].type", "only tools of type `function` are accepted.")
        _only(tool, TOOL_FIELDS, f"tools[{i}].", "a tool has `type` and `function`.")
        function = tool.get("function")
        if isinstance(function, dict):
            why = "a function has name, description, parameters, strict."
            _only(function, FUNCTION_FIELDS, f"tools[{i}].function.", why)


def _check_tool_choice(choice: Any) -> None:
    # {"type": "allowed_tools", ...} can name hosted tools (mcp, web_search) litellm acts on.
    if isinstance(choice, dict) and choice.get("type") != "function":
        raise _refuse("tool_choice.type", "pick a tool of type `function`, or none/auto/required.")
    if isinstance(choice, dict):
        _only(choice, TOOL_FIELDS, "tool_choice.", "a tool choice has `type` and `function`.")


def check_litellm_params(payload: dict[str, Any], allowed: frozenset[str]) -> None:
    """Raise a 400 naming the first field that is not an OpenAI sampling or message parameter.

    `allowed` are the call kind's own fields (`CHAT_FIELDS`, `COMPLETION_FIELDS`).
    """
    why = "only OpenAI sampling and message parameters reach this model's provider."
    _only(payload, allowed, "", why)
    options = payload.get("stream_options")
    if isinstance(options, dict):
        _only(options, STREAM_OPTION_FIELDS, "stream_options.", "it takes `include_usage`.")
    _check_messages(payload.get("messages"))
    _check_tools(payload.get("tools"))
    _check_tool_choice(payload.get("tool_choice"))
