"""Audio uploads for the speech-to-text tests: silent WAV files and hand-written forms."""

from __future__ import annotations

import struct


def wav(seconds: float, rate: int = 16_000) -> bytes:
    """A silent mono 16-bit WAV file of the given length."""
    data = b"\0\0" * int(seconds * rate)
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data))
    return b"RIFF" + struct.pack("<I", 4 + len(chunks) + len(data)) + b"WAVE" + chunks + data


BOUNDARY = "test-boundary-7f3a"
FORM_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


def field(name: str, value: str | bytes) -> bytes:
    """One text part."""
    raw = value.encode() if isinstance(value, str) else value
    head = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
    return head.encode() + raw + b"\r\n"


def file_part(data: bytes, filename: str = "clip.wav", name: str = "file") -> bytes:
    """The uploaded file's part."""
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"'
        "\r\nContent-Type: audio/wav\r\n\r\n"
    )
    return head.encode() + data + b"\r\n"


CLOSE = f"--{BOUNDARY}--\r\n".encode()


def form(*parts: bytes) -> bytes:
    """A whole multipart body of these parts."""
    return b"".join(parts) + CLOSE
