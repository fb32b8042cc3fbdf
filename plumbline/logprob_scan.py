"""Read chat logprob entries straight from vLLM's exact layout, without building JSON objects.

A chat choice's `logprobs.content` items, as the proxy keeps them (one bytes per chunk, the
items of that chunk's array joined by commas), are read into columns: each entry's key (its
token's JSON string content exactly as sent, NUL, its `bytes` value exactly as sent), its
logprob, and per position the alternatives the same way. Anything not laid out exactly as vLLM
writes it (other key order, whitespace, non-finite numbers, extra keys) gives None, and the
caller keeps the bytes as they came. This is the reference reader: plain Python, exact spans.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import orjson

# A JSON string's content (no raw control characters), a JSON number, a `bytes` value.
_STRING = rb'((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*)'
_NUMBER = rb"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
_BYTES = rb"(null|\[(?:(?:0|[1-9][0-9]*)(?:,(?:0|[1-9][0-9]*))*)?\])"
_FIELDS = rb'"token":"' + _STRING + rb'","logprob":' + _NUMBER + rb',"bytes":' + _BYTES
_SAMPLED = re.compile(rb"\{" + _FIELDS + rb',"top_logprobs":\[')
_ALTERNATIVE = re.compile(rb"\{" + _FIELDS + rb"\}")
SEPARATOR = b"\x00"  # never raw inside a JSON string, so a key splits back unambiguously


@dataclass(frozen=True, slots=True)
class ScannedChat:
    """One choice's entries as columns; keys are token content, NUL, `bytes`, as sent."""

    keys: list[bytes]
    logprobs: np.ndarray  # float64, one per position
    alt_counts: np.ndarray  # int64, alternatives per position
    alt_keys: list[bytes]
    alt_logprobs: np.ndarray  # float64, every position's alternatives in order

    @property
    def positions(self) -> int:
        """Sampled tokens in the choice."""
        return len(self.keys)


def _key(match: re.Match[bytes]) -> bytes:
    return match[1] + SEPARATOR + match[3]


def _scan(document: bytes) -> ScannedChat | None:
    keys: list[bytes] = []
    numbers: list[bytes] = []
    counts: list[int] = []
    alt_keys: list[bytes] = []
    alt_numbers: list[bytes] = []
    at, end = 0, len(document)
    while at < end:
        if keys:
            if document[at : at + 1] != b",":
                return None
            at += 1
        sampled = _SAMPLED.match(document, at)
        if sampled is None:
            return None
        keys.append(_key(sampled))
        numbers.append(sampled[2])
        at, count = sampled.end(), 0
        while document[at : at + 1] != b"]":
            if count:
                if document[at : at + 1] != b",":
                    return None
                at += 1
            alternative = _ALTERNATIVE.match(document, at)
            if alternative is None:
                return None
            alt_keys.append(_key(alternative))
            alt_numbers.append(alternative[2])
            at, count = alternative.end(), count + 1
        if document[at : at + 2] != b"]}":
            return None
        at += 2
        counts.append(count)
    return ScannedChat(
        keys,
        _floats(numbers),
        np.array(counts, dtype=np.int64),
        alt_keys,
        _floats(alt_numbers),
    )


def _floats(numbers: list[bytes]) -> np.ndarray:
    return np.array(orjson.loads(b"[" + b",".join(numbers) + b"]"), dtype=np.float64)


def scan_chat(items: Sequence[bytes]) -> ScannedChat | None:
    """A choice's entries from its per-chunk content items; None where the layout is not vLLM's."""
    document = b",".join(item for item in items if item)
    if not document:
        return None
    try:
        scanned = _scan(document)
    except orjson.JSONDecodeError:
        return None  # a number no float holds (1e999): kept as it came
    if scanned is None or not np.all(np.isfinite(scanned.logprobs)):
        return None
    if not np.all(np.isfinite(scanned.alt_logprobs)):
        return None
    return scanned


def decode_key(key: bytes) -> tuple[str, list[int] | None]:
    """The token string and `bytes` value a key stands for, as a JSON reader returns them."""
    token, raw_bytes = key.split(SEPARATOR, 1)
    return orjson.loads(b'"' + token + b'"'), orjson.loads(raw_bytes)
