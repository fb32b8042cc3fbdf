"""The head of one multipart part: its Content-Disposition (name, filename) and Content-Type."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from gateway.errors import GatewayError

# A media type the gateway passes on as given (RFC 6838 names); anything else is replaced.
_MEDIA_TYPE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
)
DEFAULT_FILE_TYPE = "application/octet-stream"


@dataclass(frozen=True, slots=True)
class PartHead:
    """What a part's head says: its field name, its filename (files only), its media type."""

    name: str
    filename: str | None
    content_type: str


def _refuse(why: str) -> GatewayError:
    return GatewayError(400, f"A part of the multipart form {why}.", "file")


def header_parameters(value: str) -> tuple[str, dict[str, str]]:
    """A header value's first token and its `key=value` parameters (quoted or not)."""
    items: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in value:
        if escaped:
            current.append(char)
            escaped = False
        elif quoted and char == "\\":
            current.append(char)
            escaped = True
        elif char == '"':
            current.append(char)
            quoted = not quoted
        elif char == ";" and not quoted:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if quoted:
        raise _refuse("has an unclosed quote in its Content-Disposition")
    items.append("".join(current))
    parameters: dict[str, str] = {}
    for item in items[1:]:
        key, sep, raw = item.partition("=")
        key, raw = key.strip().lower(), raw.strip()
        if not sep or not key:
            continue
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        if key in parameters:
            raise _refuse(f"names `{key}` twice in its Content-Disposition")
        parameters[key] = raw
    return items[0].strip().lower(), parameters


def read_part_head(raw: bytes) -> PartHead:
    """Read a part's header lines; a 400 unless it is a named form-data part."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse("has a head that is not UTF-8") from None
    headers: dict[str, str] = {}
    for line in text.split("\r\n"):
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or line[0] in " \t":
            raise _refuse(f"has a malformed header line {line[:60]!r}")
        if any(ord(char) < 32 and char != "\t" for char in value):
            raise _refuse("has a control character in a header")
        headers[name.lower()] = value.strip()
    disposition = headers.get("content-disposition")
    if disposition is None:
        raise _refuse("has no Content-Disposition")
    kind, parameters = header_parameters(disposition)
    field = parameters.get("name")
    if kind != "form-data" or not field:
        raise _refuse("is not a named `form-data` part")
    filename = parameters.get("filename")
    extended = parameters.get("filename*")
    if extended is not None:
        # RFC 5987: charset'language'percent-encoded (browsers send UTF-8).
        filename = unquote(extended.rpartition("'")[2], errors="replace")
    media_type = headers.get("content-type", DEFAULT_FILE_TYPE).split(";", 1)[0].strip()
    if not _MEDIA_TYPE.fullmatch(media_type):
        media_type = DEFAULT_FILE_TYPE
    return PartHead(field, filename, media_type)
