"""Deterministic unit vectors for token sequences: the pooling runner's stand-in for a model."""

from __future__ import annotations

import math
import random
import struct
from base64 import b64encode


class PseudoEmbedder:
    """Mean of per-token pseudo-random vectors, L2-normalised (like vLLM's embed pooler output)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._token_vectors: dict[int, list[float]] = {}

    def _vector(self, token_id: int) -> list[float]:
        vector = self._token_vectors.get(token_id)
        if vector is None:
            rng = random.Random(token_id)
            vector = self._token_vectors[token_id] = [rng.gauss(0.0, 1.0) for _ in range(self.size)]
        return vector

    def embed(self, token_ids: list[int]) -> list[float]:
        """The sequence's embedding (every component 0 for an empty sequence)."""
        total = [0.0] * self.size
        for token_id in token_ids:
            for i, value in enumerate(self._vector(token_id)):
                total[i] += value
        norm = math.sqrt(sum(value * value for value in total)) or 1.0
        return [value / norm for value in total]


def cosine(left: list[float], right: list[float]) -> float:
    """Cosine similarity of two unit vectors."""
    return sum(a * b for a, b in zip(left, right, strict=True))


def as_base64(vector: list[float]) -> str:
    """`encoding_format: base64`: little-endian float32, base64-encoded."""
    return b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
