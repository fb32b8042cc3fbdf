"""Read chat logprob entries straight from vLLM's exact layout, without building JSON objects.

A chat choice's `logprobs.content` items, as the proxy keeps them (one bytes per chunk, the
items of that chunk's array joined by commas), are read into columns: each entry's key (its
token's JSON string content exactly as sent, NUL, its `bytes` value exactly as sent), its
logprob, and per position the alternatives the same way. Anything not laid out exactly as vLLM
writes it (other key order, whitespace, non-finite numbers, extra keys, an entry split across
items, a string that is not well-formed UTF-8 or escapes a lone surrogate) gives None, and the
caller keeps the bytes as they came. `scan_chat` reads with the compiled scanner
(`_logprob_scan.c`) where it was built, else with `scan_chat_reference`: plain Python, exact
spans, the same answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import orjson

_Found = tuple[list[bytes], bytearray, bytearray, list[bytes], bytearray]

# One character of a JSON string's content: ASCII but quote, backslash and controls; a
# well-formed UTF-8 sequence; an escape, surrogates only as a high-low pair (as orjson reads).
_CHARACTER = (
    rb"[\x20\x21\x23-\x5b\x5d-\x7f]"
    rb"|[\xc2-\xdf][\x80-\xbf]"
    rb"|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]"
    rb"|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}"
    rb'|\\["\\/bfnrt]'
    rb"|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4}"
    rb"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_STRING = rb"((?:" + _CHARACTER + rb")*)"
_NUMBER = rb"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
_BYTE = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])(?![0-9])"
_BYTES = rb"(null|\[(?:" + _BYTE + rb"(?:," + _BYTE + rb")*)?\])"
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


class _Columns:
    """The columns gathered so far, numbers still as their spans."""

    def __init__(self) -> None:
        self.keys: list[bytes] = []
        self.numbers: list[bytes] = []
        self.counts: list[int] = []
        self.alt_keys: list[bytes] = []
        self.alt_numbers: list[bytes] = []


def _scan_item(item: bytes, into: _Columns) -> bool:
    at, end, first = 0, len(item), True
    while at < end:
        if not first:
            if item[at : at + 1] != b",":
                return False
            at += 1
        first = False
        sampled = _SAMPLED.match(item, at)
        if sampled is None:
            return False
        into.keys.append(_key(sampled))
        into.numbers.append(sampled[2])
        at, count = sampled.end(), 0
        while item[at : at + 1] != b"]":
            if count:
                if item[at : at + 1] != b",":
                    return False
                at += 1
            alternative = _ALTERNATIVE.match(item, at)
            if alternative is None:
                return False
            into.alt_keys.append(_key(alternative))
            into.alt_numbers.append(alternative[2])
            at, count = alternative.end(), count + 1
        if item[at : at + 2] != b"]}":
            return False
        at += 2
        into.counts.append(count)
    return True


def _floats(numbers: list[bytes]) -> np.ndarray | None:
    """The numbers as float() reads them; None where one is no finite float64."""
    try:
        values = np.array([float(number) for number in numbers], dtype=np.float64)
    except ValueError:
        return None  # a span float() refuses (beyond a billion digits): kept as it came
    return values if np.all(np.isfinite(values)) else None


def scan_chat_reference(items: Sequence[bytes]) -> ScannedChat | None:
    """A choice's entries from its per-chunk content items, in plain Python; None off the layout."""
    into = _Columns()
    if not all(_scan_item(item, into) for item in items if item) or not into.keys:
        return None
    logprobs, alt_logprobs = _floats(into.numbers), _floats(into.alt_numbers)
    if logprobs is None or alt_logprobs is None:
        return None
    counts = np.array(into.counts, dtype=np.int64)
    return ScannedChat(into.keys, logprobs, counts, into.alt_keys, alt_logprobs)


@cache
def _compiled() -> Callable[[list[bytes] | tuple[bytes, ...]], _Found | None] | None:
    try:
        from plumbline._logprob_scan import scan
    except ImportError:  # built without a C compiler (setup.py's extension is optional)
        return None
    return scan


def scan_chat_compiled(items: Sequence[bytes]) -> ScannedChat | None:
    """The same as scan_chat_reference, read by the compiled scanner (ImportError if unbuilt)."""
    scan = _compiled()
    if scan is None:
        raise ImportError("plumbline._logprob_scan was not built (no C compiler at install)")
    found = scan(items if isinstance(items, list | tuple) else list(items))
    if found is None:
        return None
    keys, logprobs, counts, alt_keys, alt_logprobs = found
    return ScannedChat(
        keys,
        np.frombuffer(logprobs, dtype=np.float64),
        np.frombuffer(counts, dtype=np.int64),
        alt_keys,
        np.frombuffer(alt_logprobs, dtype=np.float64),
    )


def compiled_scanner_built() -> bool:
    """Whether scan_chat reads with the compiled scanner (else the reference)."""
    return _compiled() is not None


def scan_chat(items: Sequence[bytes]) -> ScannedChat | None:
    """A choice's entries from its per-chunk content items; None where the layout is not vLLM's."""
    if _compiled() is None:
        return scan_chat_reference(items)
    return scan_chat_compiled(items)


def decode_key(key: bytes) -> tuple[str, list[int] | None]:
    """The token string and `bytes` value a key stands for, as a JSON reader returns them."""
    token, raw_bytes = key.split(SEPARATOR, 1)
    return orjson.loads(b'"' + token + b'"'), orjson.loads(raw_bytes)
