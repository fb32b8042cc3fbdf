"""AudioUpload: a speech-to-text form, its fields read first and its file streamed upstream.

What goes upstream is written anew by the gateway (its own boundary, the fields as read and
confined, the file's bytes as they arrive), so the backend reads exactly what the gateway
read: no part the gateway skipped, no header it parsed differently.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator
from typing import Any

import orjson

from gateway.config import Limits, ModelConfig
from gateway.errors import GatewayError
from gateway.metering.metered import Metered
from gateway.proxy.asgi_io import Receive
from gateway.proxy.audio.form_headers import PartHead, header_parameters
from gateway.proxy.audio.form_stream import FormBounds, FormStream
from gateway.proxy.audio.wav_duration import WAV_HEAD_BYTES, wav_seconds
from gateway.proxy.call_kinds.vllm_only import refuse_litellm
from gateway.proxy.request_upload import RequestUpload
from gateway.upstream.streamed_body import StreamedBody

# RFC 2046: 1 to 70 characters of this set, not ending in a space.
_BOUNDARY = re.compile(r"[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]")


def form_boundary(content_type: str | None) -> bytes:
    """The boundary of a multipart/form-data Content-Type; a 400 for anything else."""
    kind, parameters = header_parameters(content_type or "")
    if kind != "multipart/form-data":
        raise GatewayError(
            400,
            "Request body must be multipart/form-data (the audio as a `file` part, the other "
            f"fields as text parts), not {(content_type or 'nothing')[:80]!r}.",
            "file",
        )
    boundary = parameters.get("boundary", "")
    if not _BOUNDARY.fullmatch(boundary):
        raise GatewayError(
            400, "The multipart Content-Type has no valid `boundary` parameter.", "file"
        )
    return boundary.encode("ascii")


def _quoted(text: str) -> str:
    # As browsers and httpx write form names: a quote and line breaks percent-escaped.
    return text.replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def _field_values(fields: list[tuple[str, str]]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, value in fields:
        if name in values:
            earlier = values[name]
            values[name] = [*earlier, value] if isinstance(earlier, list) else [earlier, value]
        else:
            values[name] = value
    return values


class AudioUpload(RequestUpload):
    """One upload to `/v1/audio/*`: the form's fields, then its audio as it arrives."""

    def __init__(self, form: FormStream, fields: list[tuple[str, str]], file: PartHead) -> None:
        self._form = form
        self.fields = _field_values(fields)
        self.finished = form.finished
        self._file = file
        self._boundary = "plumbline-" + secrets.token_hex(16)
        self.content_type = f"multipart/form-data; boundary={self._boundary}"
        self._payload: dict[str, Any] = self.fields
        self._head = b""

    @classmethod
    async def open(
        cls, receive: Receive, headers: dict[bytes, bytes], limits: Limits
    ) -> AudioUpload:
        """Read a form's fields up to its `file` part."""
        content_type = headers.get(b"content-type", b"").decode("latin-1")
        declared = headers.get(b"content-length")
        limit = limits.max_body_bytes
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise GatewayError(413, f"Request body exceeds the gateway's limit of {limit} bytes.")
        bounds = FormBounds(limit, limits.body_read_timeout_s)
        form = FormStream(receive, form_boundary(content_type), bounds)
        fields, file = await form.read_fields()
        return cls(form, fields, file)

    def stored(self) -> bytes:
        """The fields and the file's name and type: the audio itself is never stored."""
        file = {"filename": self._file.filename, "content_type": self._file.content_type}
        return orjson.dumps({**self.fields, "file": file})

    def upstream(self, payload: dict[str, Any], model: ModelConfig) -> StreamedBody:
        """This upload, to be sent with `payload` as its fields."""
        if model.provider == "litellm":
            refuse_litellm("/v1/audio/*", {"model": model.name})
        self._payload = payload
        return self

    def _part(self, name: str, extra: str = "") -> bytes:
        head = f'--{self._boundary}\r\nContent-Disposition: form-data; name="{_quoted(name)}"'
        return f"{head}{extra}\r\n\r\n".encode()

    async def chunks(self) -> AsyncIterator[bytes]:
        """The fields, then the file part's bytes as the client sends them."""
        self.started = True
        parts: list[bytes] = []
        for name, value in self._payload.items():
            for one in value if isinstance(value, list) else [value]:
                parts.append(self._part(name) + str(one).encode() + b"\r\n")
        file = self._file
        filename = f'; filename="{_quoted(file.filename or "file")}"'
        parts.append(self._part("file", f"{filename}\r\nContent-Type: {file.content_type}"))
        yield b"".join(parts)
        async for data in self._form.file_data():
            if len(self._head) < WAV_HEAD_BYTES:
                self._head += data[: WAV_HEAD_BYTES - len(self._head)]
            yield data
        yield f"\r\n--{self._boundary}--\r\n".encode()

    def completed(self, metered: Metered) -> Metered:
        """Where the response gave no duration, the one a WAV upload's header gives."""
        if metered.audio_seconds is not None or not self._head:
            return metered
        seconds = wav_seconds(self._head, self._form.file_bytes)
        return metered if seconds is None else metered.with_audio_seconds(seconds)
