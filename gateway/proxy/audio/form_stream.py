"""FormStream: a multipart/form-data body read from ASGI as it arrives, within explicit bounds.

The gateway routes an upload by its small fields (`model`, `stream`...) before the file has
arrived, so it reads the parts in order: the fields are held (each bounded), the file part is
handed on as its bytes arrive and never held whole. Anything the bounds or the grammar refuse
is a GatewayError with a 4xx status, the body's end or its deadline included.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from gateway.errors import GatewayError
from gateway.proxy.asgi_io import Receive
from gateway.proxy.audio.form_headers import PartHead, read_part_head

# How much may precede the first boundary, and follow a delimiter on its line.
MAX_PREAMBLE_BYTES = 1024
MAX_DELIMITER_LINE_BYTES = 128


@dataclass(frozen=True, slots=True)
class FormBounds:
    """What one form may hold: parts, one part's head, one field's value, the whole body."""

    max_body_bytes: int
    timeout_s: float
    max_parts: int = 64
    max_head_bytes: int = 4096
    max_field_bytes: int = 64 * 1024


class FormStream:
    """The parts of one multipart body: fields up to the file part, then the file's bytes."""

    def __init__(self, receive: Receive, boundary: bytes, bounds: FormBounds) -> None:
        self._receive = receive
        self._bounds = bounds
        self._delimiter = b"\r\n--" + boundary
        # The body is read as if a line break came first, so the first delimiter is alike.
        self._buffer = bytearray(b"\r\n")
        self._ended = False
        self._size = 0
        self._deadline = asyncio.get_running_loop().time() + bounds.timeout_s
        # Set once the body was read to its last byte: only then may others call `receive`.
        self.finished = asyncio.Event()
        # The file's byte count so far.
        self.file_bytes = 0

    async def _more(self) -> None:
        if self._ended:
            raise GatewayError(400, "The multipart body ended before its closing boundary.", "file")
        timeout = self._bounds.timeout_s
        try:
            async with asyncio.timeout_at(self._deadline):
                message = await self._receive()
        except TimeoutError:
            raise GatewayError(
                408, f"The request body did not arrive within {timeout:g} s."
            ) from None
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError("client went away while sending the body")
        chunk = message.get("body", b"")
        self._size += len(chunk)
        limit = self._bounds.max_body_bytes
        if self._size > limit:
            raise GatewayError(413, f"Request body exceeds the gateway's limit of {limit} bytes.")
        self._buffer += chunk
        if not message.get("more_body", False):
            self._ended = True
            self.finished.set()

    async def _until(self, marker: bytes, bound: int, what: str) -> bytes:
        """The bytes before `marker` (consumed with it), refusing more than `bound` of them."""
        # Each search starts where the last one could not have missed the marker: a client
        # that sends a field a byte at a time costs linear time, not quadratic.
        start = 0
        while (end := self._buffer.find(marker, start)) < 0:
            if len(self._buffer) > bound + len(marker):
                raise GatewayError(400, f"The form's {what} is over {bound} bytes.", "file")
            start = max(0, len(self._buffer) - len(marker) + 1)
            await self._more()
        if end > bound:
            raise GatewayError(400, f"The form's {what} is over {bound} bytes.", "file")
        found = bytes(self._buffer[:end])
        del self._buffer[: end + len(marker)]
        return found

    async def _after_delimiter(self) -> bool:
        """Read the rest of a delimiter's line; True when it closes the form (`--`)."""
        line = await self._until(b"\r\n", MAX_DELIMITER_LINE_BYTES, "boundary line")
        if line.startswith(b"--"):
            return True
        if line.strip(b" \t"):
            raise GatewayError(400, "The form's boundary is followed by other text.", "file")
        return False

    async def read_fields(self) -> tuple[list[tuple[str, str]], PartHead]:
        """The fields before the part named `file`, in order, and that part's head."""
        await self._until(self._delimiter, MAX_PREAMBLE_BYTES, "preamble")
        fields: list[tuple[str, str]] = []
        bounds = self._bounds
        while not await self._after_delimiter():
            if len(fields) >= bounds.max_parts:
                raise GatewayError(400, f"The form has over {bounds.max_parts} parts.", "file")
            head_bytes = await self._until(b"\r\n\r\n", bounds.max_head_bytes, "part head")
            head = read_part_head(head_bytes)
            if head.name == "file":
                if head.filename is None:
                    raise GatewayError(
                        400,
                        "`file` must be an uploaded file (a part with a filename), "
                        "not a text field: the gateway fetches nothing.",
                        "file",
                    )
                return fields, head
            value = await self._until(self._delimiter, bounds.max_field_bytes, f"`{head.name}`")
            fields.append((head.name, value.decode("utf-8", "replace")))
        raise GatewayError(400, "The form has no `file` part: upload the audio as `file`.", "file")

    async def file_data(self) -> AsyncIterator[bytes]:
        """The file's bytes as they arrive; then the form must close (no part may follow)."""
        keep = len(self._delimiter) - 1
        while True:
            end = self._buffer.find(self._delimiter)
            if end >= 0:
                data = bytes(self._buffer[:end])
                del self._buffer[: end + len(self._delimiter)]
                self.file_bytes += len(data)
                yield data
                break
            if len(self._buffer) > keep:
                data = bytes(self._buffer[:-keep])
                del self._buffer[:-keep]
                self.file_bytes += len(data)
                yield data
            await self._more()
        if not await self._after_delimiter():
            raise GatewayError(
                400,
                "The form has parts after `file`: send every field before the file "
                "(the gateway routes the call by them before the upload has arrived).",
                "file",
            )
        # The epilogue is ignored, within the body's bound and deadline.
        while not self._ended:
            self._buffer.clear()
            await self._more()
        self._buffer.clear()
