"""Logprobs shaped like a real chat model's: a 128k vocabulary, float32 values, a wide spread.

Tokens are drawn Zipf-like from a synthetic 128,000-string vocabulary (word pieces with and
without a leading space, punctuation and escapes, accented, Cyrillic, CJK and emoji pieces, and
`bytes:\\xNN` byte tokens whose bytes are not their text); the sampled token is usually the
top alternative with a logprob near 0, the alternatives fall away to about -20.
"""

from __future__ import annotations

import random

import numpy as np
import orjson

VOCAB = 128_000
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PUNCT = ['"', "\\", "\n", "\n\n", "\t", ".", ",", ":", '."', "),", "```", " {", "}\n", " \u2013"]
_WIDE = "éèüßçñøåÆœжзийклмнопрстуфхцчшщыэюя的一是不了人我在有他这中大来上国个到说们为子和你αβγδ"
_EMOJI = "😀😂🙂🚀✨🔥👍🎉"


def _piece(rng: random.Random, kind: int) -> str:
    length = rng.randint(1, 8)
    if kind < 70:
        word = "".join(rng.choices(_LETTERS, k=length))
        return (" " + word) if kind < 45 else word
    if kind < 85:
        return "".join(rng.choices(_WIDE, k=max(1, length // 3)))
    if kind < 90:
        return rng.choice(_EMOJI) + ("" if kind < 88 else " ")
    return rng.choice(_PUNCT) + "".join(rng.choices(_LETTERS, k=length // 4))


def vocabulary(seed: int = 0, size: int = VOCAB) -> tuple[list[str], list[list[int]]]:
    """Distinct token strings and their bytes; the first 256 are byte tokens."""
    rng = random.Random(seed)
    strings = [f"bytes:\\x{b:02x}" for b in range(256)]
    seen = set(strings)
    while len(strings) < size:
        text = _piece(rng, rng.randrange(100))
        if text not in seen:
            seen.add(text)
            strings.append(text)
    # As in a real BPE vocabulary, frequent (low-rank) tokens tend to be short: rank by
    # length with noise, so the Zipf draw below favours short pieces without always taking them.
    ranked = sorted(strings[256:], key=lambda s: len(s.encode()) + 6 * rng.random())
    strings = strings[:256] + ranked
    return strings, [[b] for b in range(256)] + [list(s.encode()) for s in ranked]


class RealisticLogprobs:
    """Answers' per-position logprob items (bytes as a stream's chunks carry them)."""

    def __init__(self, seed: int = 0) -> None:
        self.strings, self.bytes = vocabulary(seed)
        ranks = np.arange(VOCAB, dtype=np.float64)
        weights = 1.0 / (ranks + 2.7) ** 1.07
        # Byte tokens are rare in text; everything else by a Zipf-like rank.
        weights[:256] *= 0.02
        self._cumulative = np.cumsum(weights / weights.sum())
        self._rng = np.random.default_rng(seed + 1)

    def _tokens(self, count: int) -> np.ndarray:
        return np.searchsorted(self._cumulative, self._rng.random(count)).clip(0, VOCAB - 1)

    def _entry(self, token: int, value: float, alternatives: list[tuple[int, float]]) -> bytes:
        top = [
            {"token": self.strings[t], "logprob": v, "bytes": self.bytes[t]}
            for t, v in alternatives
        ]
        return orjson.dumps(
            {
                "token": self.strings[token],
                "logprob": value,
                "bytes": self.bytes[token],
                "top_logprobs": top,
            }
        )

    def answer(self, tokens: int, k: int) -> list[bytes]:
        """One answer: `tokens` positions with `k` alternatives each."""
        rng = self._rng
        items = []
        for _ in range(tokens):
            ids = list(dict.fromkeys(self._tokens(k + 4).tolist()))[: k + 1]
            confident = rng.random() < 0.7
            first = -rng.exponential(0.02 if confident else 0.8)
            gaps = rng.exponential(3.5 if confident else 1.2, k)
            values = np.asarray(first - np.concatenate([[0.0], np.cumsum(gaps)]), np.float32)
            ranked = [(t, float(v)) for t, v in zip(ids, values.tolist(), strict=False)]
            draw = rng.random()
            pick = 0 if draw < 0.88 else (int(rng.integers(1, k)) if draw < 0.98 else k)
            token, value = ranked[min(pick, len(ranked) - 1)]
            items.append(self._entry(token, value, ranked[:k]))
        return items
