"""vLLM's own request fields that reach across teams: set per team, refused, or passed.

One vLLM serves every team, so a field that acts on the engine's shared state (prefix cache,
queue, KV transfer, extensions) or makes the GPU host fetch a URL is decided here, before a
request goes upstream. docs/security.md lists each decision and its test.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from gateway.errors import GatewayError
from gateway.proxy.lax_values import RequestFields
from gateway.proxy.media_sources import source_urls

# Fields refused from every key, with the reason given to the client.
REFUSED_FIELDS = (
    (
        "kv_transfer_params",
        "it steers vLLM's KV-cache transfer between engines (remote hosts and block ids)",
    ),
    (
        "ec_transfer_params",
        "it steers vLLM's encoder-cache transfer between engines",
    ),
    (
        "vllm_xargs",
        "it passes arbitrary arguments to the engine's custom extensions",
    ),
    (
        "request_id",
        "the gateway names each request upstream; send an `X-Request-Id` header instead",
    ),
)
# Content-part keys whose values vLLM loads as media (renderers/chat_utils.py MM_PARSER_MAP
# and the untyped shorthand parts); `file` is OpenAI's, which vLLM refuses, checked anyway.
MEDIA_KEYS = ("image_url", "audio_url", "video_url", "input_image", "file")
MEDIA_URL_KEYS = ("url", "image_url", "file_data", "file_url")
# Responses input items whose `output` list of parts vLLM renders as a tool message.
TOOL_OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output")
# vLLM refuses longer salts and these characters (generate/base/protocol.py).
MAX_CACHE_SALT = 128
FORBIDDEN_SALT_CHARS = frozenset("@/\\\x00")
SALT_PREFIX = "plumbline-"


def team_cache_salt(pepper: str, team_id: int | None, client_salt: str | None) -> str:
    """The prefix-cache salt of a team: no other team can compute it, so no cache is shared.

    A client's own salt is mixed in, so a team can still keep its users apart.
    """
    message = f"cache-salt\x00{team_id}\x00{client_salt or ''}".encode()
    return SALT_PREFIX + hmac.new(pepper.encode(), message, hashlib.sha256).hexdigest()


def _client_salt(payload: dict[str, Any]) -> str | None:
    salt = payload.get("cache_salt")
    if salt is None:
        return None
    if (
        not isinstance(salt, str)
        or not salt
        or len(salt) > MAX_CACHE_SALT
        or any(char in FORBIDDEN_SALT_CHARS for char in salt)
    ):
        raise GatewayError(
            400,
            "Parameter 'cache_salt' must be a non-empty string of at most 128 characters "
            "without '@', '/', '\\' or NUL (the gateway also salts per team).",
            "cache_salt",
        )
    return salt


def _media_urls(messages: Any, field: str = "messages") -> list[tuple[str, str]]:
    """Every string in the messages (or Responses input items) that vLLM would load as media."""
    found: list[tuple[str, str]] = []
    if not isinstance(messages, list):
        return found
    for m, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        # A Responses tool output's `output` list becomes a tool message's content in vLLM,
        # whose parts (an `input_image` too) it loads like a user's.
        parts_key = "output" if message.get("type") in TOOL_OUTPUT_ITEMS else "content"
        content = message.get(parts_key)
        if not isinstance(content, list):
            continue
        for c, part in enumerate(content):
            if not isinstance(part, dict):
                continue
            for key in MEDIA_KEYS:
                value = part.get(key)
                place = f"{field}[{m}].{parts_key}[{c}].{key}"
                if isinstance(value, str):
                    found.append((place, value))
                elif isinstance(value, dict):
                    found.extend(
                        (f"{place}.{k}", v)
                        for k in MEDIA_URL_KEYS
                        if isinstance(v := value.get(k), str)
                    )
    return found


def _media_url_allowed(url: str, domains: tuple[str, ...]) -> bool:
    # Read as vLLM's MediaConnector reads it: a `data:` prefix is inline, anything else is
    # parsed by urllib3 and fetched (http) or opened (file) from the GPU host.
    if url[:5].lower() == "data:":
        return True
    try:
        spec = parse_url(url)
    except LocationParseError:
        return False
    # No user info and no backslash: URL parsers disagree on where such a host ends.
    plain = spec.auth is None and "\\" not in url
    return plain and spec.scheme in ("http", "https") and spec.hostname in domains


def check_media_urls(payload: dict[str, Any], domains: tuple[str, ...]) -> None:
    """Refuse media the GPU hosts would fetch from a place the model's config did not allow."""
    # Chat's `messages`, and the Responses API's `input` items, whose parts name media alike.
    sources = [("messages", payload.get("messages")), ("input", payload.get("input"))]
    # Anthropic Messages content blocks name media by a URL `source`.
    check_media_in(sources, domains, source_urls(payload))


def check_media_in(
    sources: list[tuple[str, Any]],
    domains: tuple[str, ...],
    named: list[tuple[str, str]] | None = None,
) -> None:
    """`check_media_urls` for message-like lists found elsewhere, each named by its field."""
    places = [place for field, messages in sources for place in _media_urls(messages, field)]
    places += named or []
    for place, url in places:
        if not _media_url_allowed(url, domains):
            allowed = ", ".join(domains) or "none configured"
            raise GatewayError(
                400,
                f"`{place}`: media URL {url[:100]!r} is not allowed: the backend would fetch it "
                "from inside the serving network. Send the media inline as a `data:` URL "
                f"(allowed http(s) hosts for this model: {allowed}).",
                place,
            )


def confine_tenant_fields(
    payload: dict[str, Any],
    fields: RequestFields,
    *,
    team_id: int | None,
    is_admin: bool,
    pepper: str,
    media_domains: tuple[str, ...],
    salted: bool,
) -> None:
    """Refuse, clamp or overwrite (in `payload`) the fields one team could use on another."""
    for name, why in REFUSED_FIELDS:
        if payload.get(name) is not None:
            raise GatewayError(400, f"`{name}` is not accepted by this gateway: {why}.", name)
    if fields.priority < 0 and not is_admin:
        raise GatewayError(
            400,
            "`priority` below 0 would put this call ahead of other teams' queued calls; "
            "send 0 or more (higher runs later).",
            "priority",
        )
    check_media_urls(payload, media_domains)
    client_salt = _client_salt(payload)
    if salted:
        payload["cache_salt"] = team_cache_salt(pepper, team_id, client_salt)
