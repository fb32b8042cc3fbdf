"""A random-logit language model for unscripted prompts: cheap, deterministic per context."""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from math import gcd

from simulator.sampling import mix64
from simulator.tokenizer import Tokenizer
from simulator.vocabulary import space_words

CANDIDATES = 20
TAIL_MASS = 0.01
_LEVELS = 8
_LEAD_BYTE = 0xC3  # Latin-1 supplement: its continuation byte always follows


@dataclass(frozen=True, slots=True)
class RankProfile:
    """Probabilities of the ranked candidates at one position (most likely first)."""

    probs: tuple[float, ...]
    logprobs: tuple[float, ...]


def _profile(top: float, ratio: float = 0.6) -> RankProfile:
    rest = 1.0 - top - TAIL_MASS
    weights = [ratio**r for r in range(CANDIDATES - 1)]
    scale = rest / sum(weights)
    probs = (top, *(w * scale for w in weights))
    return RankProfile(probs, tuple(math.log(p) for p in probs))


class PseudoModel:
    """Each context state hashes to a sharpness level and a ranked list of candidate tokens."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        ids = tokenizer.encode
        pool: list[int] = []
        for text in space_words():
            encoded = ids(text)
            if len(encoded) == 1 and encoded[0] not in pool:
                pool.append(encoded[0])
        for text in (".", ",", "!", "?", "\n", "ing", "ed", "er", "ly", "s"):
            token = ids(text)[0]
            if token not in pool:
                pool.append(token)
        self.lead_byte = tokenizer.byte_ids[_LEAD_BYTE]
        pool.append(self.lead_byte)
        self.pool = pool
        self._stride = _coprime_stride(len(pool))
        self.continuations = [tokenizer.byte_ids[b] for b in range(0x80, 0xC0)]
        self.eos_id = tokenizer.eos_id
        self.vocab_size = tokenizer.vocab_size
        self.profiles = [_profile(0.35 + 0.08 * level) for level in range(_LEVELS)]
        self.forced = _profile(0.9)

    def prompt_key(self, prompt_ids: Sequence[int]) -> int:
        """A stable 64-bit key of a prompt, the model's initial state."""
        digest = hashlib.blake2b(array("q", prompt_ids).tobytes(), digest_size=8).digest()
        return int.from_bytes(digest, "little")

    def advance(self, state: int, token: int) -> int:
        """State after `token` follows `state`."""
        return mix64(state ^ (token * 0x9E3779B1))

    def profile(self, state: int) -> RankProfile:
        """Rank probabilities at a free position."""
        return self.profiles[(state >> 7) % _LEVELS]

    def candidates(self, state: int, count: int) -> list[int]:
        """The `count` most likely tokens at a free position, distinct, most likely first."""
        size = len(self.pool)
        start = mix64(state) % size
        return [self.pool[(start + r * self._stride) % size] for r in range(count)]

    def continuation_candidates(self, state: int, count: int) -> list[int]:
        """Ranked continuation bytes after a lead byte."""
        size = len(self.continuations)
        start = mix64(state) % size
        return [self.continuations[(start + r * 37) % size] for r in range(count)]

    def eos_candidates(self, state: int, count: int) -> list[int]:
        """Ranked tokens where the model ends: EOS first."""
        return [self.eos_id, *self.candidates(state, count - 1)] if count else []

    def off_list_logprob(self, state: int, token: int) -> tuple[float, int]:
        """(logprob, rank) of a token outside the ranked candidates, e.g. a prompt token."""
        spread = self.vocab_size - CANDIDATES
        jitter = (mix64(state ^ token) % 1000) / 1000.0
        rank = CANDIDATES + 1 + int(jitter * spread)
        return math.log(TAIL_MASS / spread) - jitter, rank


def _coprime_stride(size: int) -> int:
    stride = max(size // 7, 1)
    while gcd(stride, size) != 1:
        stride += 1
    return stride
