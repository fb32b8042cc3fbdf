"""How long uploaded audio plays: from a WAV header, else as 16 kHz 16-bit mono PCM."""

from __future__ import annotations

import struct

# Bytes per second of the assumed format for anything that is not a readable WAV file.
_FALLBACK_BYTE_RATE = 16_000 * 2


def audio_seconds(data: bytes) -> float:
    """Duration in seconds; a WAV file's from its `fmt ` byte rate and `data` chunk size."""
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        byte_rate = 0
        offset = 12
        while offset + 8 <= len(data):
            chunk = data[offset : offset + 4]
            size: int = struct.unpack("<I", data[offset + 4 : offset + 8])[0]
            if chunk == b"fmt " and offset + 20 <= len(data):
                byte_rate = int(struct.unpack("<I", data[offset + 16 : offset + 20])[0])
            if chunk == b"data" and byte_rate:
                return min(size, len(data) - offset - 8) / byte_rate
            offset += 8 + size + (size & 1)
    return len(data) / _FALLBACK_BYTE_RATE
