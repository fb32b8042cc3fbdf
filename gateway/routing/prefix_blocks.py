"""A prompt prefix as chained block hashes: equal leading blocks, equal hashes."""

from __future__ import annotations

from hashlib import blake2b

# Eight bytes a block: collisions between the few thousand prefixes a fleet holds are
# negligible, and the table stays small.
DIGEST_BYTES = 8


def prefix_blocks(text: str, salt: str, block_chars: int) -> tuple[bytes, ...]:
    """One hash per block of `text` (the last may be partial), each covering all before it.

    `salt` enters the first block, as vLLM's per-team `cache_salt` does: teams never share
    prefix-cache blocks, so their calls need not meet either.
    """
    hashes: list[bytes] = []
    previous = salt.encode("utf-8", "surrogatepass")
    for start in range(0, len(text), block_chars):
        block = text[start : start + block_chars].encode("utf-8", "surrogatepass")
        previous = blake2b(previous + b"\x00" + block, digest_size=DIGEST_BYTES).digest()
        hashes.append(previous)
    return tuple(hashes)


def rendezvous_score(key: bytes, backend_url: str) -> bytes:
    """Highest-random-weight score of a backend for a key: the highest score wins."""
    return blake2b(key + backend_url.encode(), digest_size=DIGEST_BYTES).digest()
