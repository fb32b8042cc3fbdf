"""A multipart/form-data body read with the standard library (the audio routes' uploads)."""

from __future__ import annotations

from dataclasses import dataclass
from email import message_from_bytes
from email.message import Message


@dataclass(frozen=True, slots=True)
class Upload:
    """One uploaded file."""

    filename: str
    content_type: str
    data: bytes


def parse_form(content_type: str, body: bytes) -> dict[str, str | Upload] | None:
    """Fields by name (files as Upload); None if the body is not multipart form data."""
    if not content_type.lower().startswith("multipart/form-data"):
        return None
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = message_from_bytes(head + body)
    if not message.is_multipart():
        return None
    fields: dict[str, str | Upload] = {}
    for part in message.get_payload():
        if not isinstance(part, Message):
            continue
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is None:
            fields[name] = data.decode("utf-8", errors="replace")
        else:
            fields[name] = Upload(filename, part.get_content_type(), data)
    return fields
