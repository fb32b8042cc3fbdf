"""One chat choice's logprobs as columns: a token string table, exact sampled values, top-k.

The sampled part (tokens, logprobs) and the top-k part (alternatives) are separate blobs, so the
top-k can be dropped without touching the sampled part. Sampled logprobs are stored exactly
(float32 when every value is float32-exact, as vLLM's are, else float64); alternatives as
uint16 steps of STEP nats, so a read is at most STEP / 2 = 0.001 nats off. Token strings are
stored once per choice; a token's `bytes` only where it is not the string's UTF-8.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
import orjson
import zstandard

STEP = 0.002
BOUND = STEP / 2
LEVEL = 3
MIN_COMPRESSED = 64  # smaller sections are stored as they are: a frame costs about 10 bytes
MAX_SECTION = 1 << 30
ESCAPE = 0xFFFF  # an alternative outside 0 .. -131 nats: its value is kept exactly
_ENTRY = ("token", "logprob", "bytes", "top_logprobs")
_ALT = ("token", "logprob", "bytes")


class Irregular(Exception):
    """Entries not laid out as vLLM writes them: the caller stores them as JSON."""


@dataclass(slots=True)
class PackedChoice:
    """A choice's two blobs (top-k None when it has none) and its values for the summary."""

    sampled: bytes
    topk: bytes | None
    sampled_logprobs: np.ndarray
    top_logprobs: np.ndarray | None  # (positions, k) when every position has k alternatives


def _planes(array: np.ndarray) -> bytes:
    """An array's bytes grouped by byte position: exponents and high bytes compress well."""
    return array.view(np.uint8).reshape(-1, array.itemsize).T.tobytes()


def _unplanes(data: bytes, dtype: str, count: int) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    raw = np.frombuffer(data, np.uint8, count * width).reshape(width, count).T
    return np.ascontiguousarray(raw).view(dtype).reshape(count)


def _uint(limit: int) -> str:
    return "<u2" if limit <= 0xFFFF else "<u4"


class _Writer:
    """Sections appended in order, each compressed on its own (a negative size: compressed).

    One zstd frame per section: strings, references and values each get entropy tables of
    their own, about a quarter fewer bytes than one frame over all of them.
    """

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.sizes: list[int] = []
        self._zstd = zstandard.ZstdCompressor(level=LEVEL)

    def add(self, data: bytes) -> None:
        if len(data) >= MIN_COMPRESSED:
            data = self._zstd.compress(data)
            self.sizes.append(-len(data))
        else:
            self.sizes.append(len(data))
        self.parts.append(data)


def _strings(writer: _Writer, encoded: list[bytes]) -> str:
    lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
    dtype = "<u1" if not len(encoded) or lengths.max() < 256 else _uint(int(lengths.max()))
    writer.add(lengths.astype(dtype).tobytes())
    writer.add(b"".join(encoded))
    return dtype


def _table(encoded: list[bytes], tokens: Sequence[str], byte_lists: list[Any]) -> list[Any]:
    """[index, bytes] of each table string whose `bytes` differ from its UTF-8 (all agree)."""
    found = dict(zip(tokens, byte_lists, strict=True))
    if list(map(found.__getitem__, tokens)) != byte_lists:
        raise Irregular("one token string with different bytes")
    values = list(found.values())
    try:
        converted = list(map(bytes, values))
    except (TypeError, ValueError):  # `bytes: null`, or something no byte list
        return [
            [i, b] for i, (e, b) in enumerate(zip(encoded, values, strict=True)) if b != list(e)
        ]
    if converted == encoded:
        return []
    same = np.fromiter(map(operator.eq, converted, encoded), bool, len(encoded))
    return [[i, values[i]] for i in np.flatnonzero(~same).tolist()]


def _utf8(strings: list[str]) -> list[bytes]:
    try:
        return list(map(str.encode, strings))
    except (UnicodeEncodeError, TypeError):
        raise Irregular("a token that is no string or not encodable") from None


def _exact(values: list[Any]) -> np.ndarray:
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise Irregular("a logprob that is no number") from None
    if values and set(map(type, values)) != {float}:
        raise Irregular("a logprob that is no float")
    return array


def _columns(rows: list[Any], keys: tuple[str, ...]) -> list[list[Any]]:
    """Each key's values over dicts with exactly these keys (one C-level pass per key)."""
    try:
        columns = [list(map(itemgetter(key), rows)) for key in keys]
    except (KeyError, TypeError, IndexError):
        raise Irregular("an entry without the usual keys") from None
    if rows and set(map(len, rows)) != {len(keys)}:
        raise Irregular("an entry with other keys")
    return columns


def pack_chat(entries: list[Any]) -> PackedChoice:
    """Columns of one choice's chat logprob entries, or Irregular."""
    tokens, lps, byte_lists, tops = _columns(entries, _ENTRY)
    sampled_lp = _exact(lps)
    if tops and set(map(type, tops)) != {list}:
        raise Irregular("top_logprobs that is no list")
    alts = list(chain.from_iterable(tops))
    alt_tokens, alt_lps, alt_bytes = _columns(alts, _ALT)
    table = dict.fromkeys(tokens)
    own = len(table)
    table.update(dict.fromkeys(alt_tokens))
    strings = list(table)
    encoded = _utf8(strings)
    exceptions = _table(encoded, tokens + alt_tokens, byte_lists + alt_bytes)
    index = {t: i for i, t in enumerate(strings)}
    ref = _uint(len(strings))
    sampled = _Writer()
    with np.errstate(over="ignore"):  # a float64 past float32's range: kept as float64
        f32 = sampled_lp.astype(np.float32)
    exact32 = bool((f32.astype(np.float64) == sampled_lp).all())
    header: dict[str, Any] = {
        "n": len(entries),
        "strings": own,
        "len": _strings(sampled, encoded[:own]),
        "ref": ref,
        "lp": "<f4" if exact32 else "<f8",
        "bytes": [x for x in exceptions if x[0] < own],
    }
    sampled.add(_planes(np.fromiter(map(index.__getitem__, tokens), ref, len(tokens))))
    sampled.add(_planes(f32 if exact32 else sampled_lp))
    if not alts:
        return PackedChoice(_blob(header, sampled), None, sampled_lp, None)
    top = _Writer()
    counts = list(map(len, tops))
    uniform = len(set(counts)) == 1
    alt_lp = _exact(alt_lps)
    steps = np.rint(alt_lp / -STEP)
    escaped = ~((steps >= 0) & (steps < ESCAPE))
    steps[escaped] = ESCAPE
    top_header: dict[str, Any] = {
        "k": counts[0] if uniform else None,
        "strings": len(strings) - own,
        "len": _strings(top, encoded[own:]),
        "bytes": [x for x in exceptions if x[0] >= own],
        "escaped": int(escaped.sum()),
    }
    if not uniform:
        top.add(np.array(counts, dtype="<u4").tobytes())
    top.add(_planes(np.fromiter(map(index.__getitem__, alt_tokens), ref, len(alt_tokens))))
    top.add(_planes(steps.astype("<u2")))
    top.add(alt_lp[escaped].astype("<f8").tobytes())
    matrix = alt_lp.reshape(len(entries), counts[0]) if uniform else None
    return PackedChoice(_blob(header, sampled), _blob(top_header, top), sampled_lp, matrix)


def _blob(header: dict[str, Any], writer: _Writer) -> bytes:
    header["sizes"] = writer.sizes
    head = orjson.dumps(header)
    return len(head).to_bytes(4, "little") + head + b"".join(writer.parts)


def _sections(blob: bytes) -> tuple[dict[str, Any], list[bytes]]:
    size = int.from_bytes(blob[:4], "little")
    header: dict[str, Any] = orjson.loads(blob[4 : 4 + size])
    parts, at = [], 4 + size
    unzstd = zstandard.ZstdDecompressor()
    for length in header["sizes"]:
        part = blob[at : at + abs(length)]
        at += abs(length)
        parts.append(unzstd.decompress(part, max_output_size=MAX_SECTION) if length < 0 else part)
    return header, parts


def _unstrings(dtype: str, lengths: bytes, joined: bytes) -> list[str]:
    ends = np.cumsum(np.frombuffer(lengths, dtype)).tolist()
    starts = [0, *ends][: len(ends)]
    return [joined[a:b].decode() for a, b in zip(starts, ends, strict=True)]


def _byte_lists(strings: list[str], exceptions: list[Any], offset: int) -> list[Any]:
    lists: list[Any] = [list(s.encode()) for s in strings]
    for index, value in exceptions:
        lists[index - offset] = value
    return lists


def _as_sent(value: Any) -> list[int] | None:
    """A `bytes` value as the backend sent it: a byte list, or null."""
    return None if value is None else list(value)


def unpack_chat(sampled: bytes, topk: bytes | None) -> list[dict[str, Any]]:
    """The entries of one choice (alternatives `[]` when top-k is None)."""
    header, parts = _sections(sampled)
    n = header["n"]
    strings = _unstrings(header["len"], parts[0], parts[1])
    lists = _byte_lists(strings, header["bytes"], 0)
    refs = _unplanes(parts[2], header["ref"], n).tolist()
    values = _unplanes(parts[3], header["lp"], n).astype(np.float64).tolist()
    tops: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    if topk is not None:
        tops = _unpack_top(topk, strings, lists, header["ref"], n)
    return [
        {"token": strings[r], "logprob": v, "bytes": _as_sent(lists[r]), "top_logprobs": t}
        for r, v, t in zip(refs, values, tops, strict=True)
    ]


def _unpack_top(
    blob: bytes, strings: list[str], lists: list[Any], ref: str, n: int
) -> list[list[dict[str, Any]]]:
    header, parts = _sections(blob)
    extra = _unstrings(header["len"], parts[0], parts[1])
    strings = strings + extra
    lists = lists + _byte_lists(extra, header["bytes"], len(lists))
    if header["k"] is None:
        counts = np.frombuffer(parts[2], "<u4").tolist()
        parts = parts[:2] + parts[3:]
    else:
        counts = [header["k"]] * n
    total = sum(counts)
    refs = _unplanes(parts[2], ref, total).tolist()
    steps = _unplanes(parts[3], "<u2", total)
    values = np.round(steps * -STEP, 3) + 0.0  # + 0.0: no -0.0
    escaped = steps == ESCAPE
    values[escaped] = np.frombuffer(parts[4], "<f8", int(header["escaped"]))
    flat = [
        {"token": strings[r], "logprob": v, "bytes": _as_sent(lists[r])}
        for r, v in zip(refs, values.tolist(), strict=True)
    ]
    out, at = [], 0
    for count in counts:
        out.append(flat[at : at + count])
        at += count
    return out
