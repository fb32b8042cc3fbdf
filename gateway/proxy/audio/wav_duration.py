"""How long a WAV upload plays, read from its header and the bytes that arrived."""

from __future__ import annotations

import struct

# A RIFF header with a few extra chunks (LIST, fact) fits well within this.
WAV_HEAD_BYTES = 4096


def wav_seconds(head: bytes, total: int) -> float | None:
    """Seconds of a WAV file from its first bytes and its size; None if it is not one."""
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return None
    byte_rate = 0
    offset = 12
    while offset + 8 <= len(head):
        chunk = head[offset : offset + 4]
        size = int(struct.unpack("<I", head[offset + 4 : offset + 8])[0])
        if chunk == b"fmt " and offset + 20 <= len(head):
            byte_rate = int(struct.unpack("<I", head[offset + 16 : offset + 20])[0])
        if chunk == b"data":
            if not byte_rate:
                return None
            # A streaming writer may leave the size unset (0 or 0xFFFFFFFF): the bytes decide.
            arrived = max(0, total - offset - 8)
            declared = size if 0 < size < 0xFFFFFFFF else arrived
            return min(declared, arrived) / byte_rate
        offset += 8 + size + (size & 1)
    return None
