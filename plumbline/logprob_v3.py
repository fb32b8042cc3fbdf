"""The v3 logprob form: token ids from the vocabulary table, exact sampled values, quantised top-k.

`payload` (`LPV3`) holds each position's sampled token id and its logprob exactly (float32 when
every value is float32-exact, as vLLM's are, else float64); `topk` (`LPW3`) the alternatives,
so retention can drop it alone. An alternative that is the sampled token with the same logprob
(vLLM's alternative 0, most of the time) is stored as its place only and read back from the
sampled part, exactly. The others: ids, and logprobs on a grid of STEP nats (a read is at most
STEP / 2 = 0.001 nats off), delta-coded along each position's list (vLLM sorts it). Numbers are
stored as byte planes: the near-random low planes as they are, the others zstd-compressed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import orjson
import zstandard

SAMPLED_MAGIC, TOPK_MAGIC = b"LPV3", b"LPW3"
STEP = 0.002
MAX_SECTION = 1 << 30
MAX_MAGNITUDE = 1e6  # nats; an alternative beyond this does not fit the grid (caller: v2)
NONE = 255  # no alternative of the position is the sampled token
# Low byte planes of each type that are close to random: zstd cannot shrink them (measured on
# bench/recording/realistic.py records), so they skip it.
_RAW_PLANES = {"<u2": 1, "<u4": 1, "<f4": 3, "<f8": 6}


@dataclass(slots=True)
class ChoiceIds:
    """One choice's logprobs with token ids: sampled per position, alternatives flattened."""

    index: int
    ids: np.ndarray  # int64
    logprobs: np.ndarray  # float64
    alt_counts: np.ndarray  # int64, alternatives per position
    alt_ids: np.ndarray  # int64
    alt_logprobs: np.ndarray  # float64


def fits(choice: ChoiceIds) -> bool:
    """Whether the choice fits this form: alternatives on the grid, the same count everywhere."""
    alt, counts = choice.alt_logprobs, choice.alt_counts
    if alt.size and not bool(np.abs(alt).max() <= MAX_MAGNITUDE):
        return False
    return not counts.size or int(counts.min()) == int(counts.max()) < NONE


def _uint(values: np.ndarray) -> str:
    return "<u2" if not values.size or int(values.max()) <= 0xFFFF else "<u4"


class _Sections:
    """Sections in order, each raw or compressed on its own (a negative size: compressed)."""

    def __init__(self, zstd: zstandard.ZstdCompressor) -> None:
        self.parts: list[bytes] = []
        self.sizes: list[int] = []
        self._zstd = zstd

    def add(self, data: bytes, compress: bool = True) -> None:
        if compress and data:
            data = self._zstd.compress(data)
            self.sizes.append(-len(data))
        else:
            self.sizes.append(len(data))
        self.parts.append(data)

    def planes(self, array: np.ndarray, dtype: str) -> None:
        """An array as byte planes: raw low planes, the next plane, the planes above it."""
        width = np.dtype(dtype).itemsize
        planes = array.astype(dtype).view(np.uint8).reshape(-1, width).T.tobytes()
        raw, size = _RAW_PLANES[dtype], array.size
        self.add(planes[: raw * size], compress=False)
        self.add(planes[raw * size : (raw + 1) * size])
        self.add(planes[(raw + 1) * size :])

    def blob(self, magic: bytes, header: dict[str, object]) -> bytes:
        header["sizes"] = self.sizes
        head = orjson.dumps(header)
        return magic + len(head).to_bytes(4, "little") + head + b"".join(self.parts)


class _Reader:
    """A blob's header and its sections, read in order."""

    def __init__(self, magic: bytes, blob: bytes) -> None:
        if blob[:4] != magic:
            raise ValueError("not a v3 Plumbline logprob payload")
        size = int.from_bytes(blob[4:8], "little")
        try:
            self.header = orjson.loads(blob[8 : 8 + size])
            self._sizes = list(self.header["sizes"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise ValueError("not a v3 Plumbline logprob payload: its header is corrupt") from None
        self._blob, self._at = blob, 8 + size
        self._unzstd = zstandard.ZstdDecompressor()

    def next(self) -> bytes:
        length = self._sizes.pop(0)
        part = self._blob[self._at : self._at + abs(length)]
        self._at += abs(length)
        if length >= 0:
            return part
        return self._unzstd.decompress(part, max_output_size=MAX_SECTION)

    def planes(self, dtype: str, count: int) -> np.ndarray:
        width = np.dtype(dtype).itemsize
        data = self.next() + self.next() + self.next()
        raw = np.frombuffer(data, np.uint8, count * width).reshape(width, count).T
        return np.ascontiguousarray(raw).view(dtype).reshape(count)


def pack(
    choices: Sequence[ChoiceIds], zstd: zstandard.ZstdCompressor
) -> tuple[bytes, bytes | None]:
    """The `payload` and `topk` of a call's choices (each `fits`; top-k None when k is 0)."""
    one = len(choices) == 1
    ids = choices[0].ids if one else np.concatenate([c.ids for c in choices])
    lps = choices[0].logprobs if one else np.concatenate([c.logprobs for c in choices])
    with np.errstate(over="ignore"):  # past float32's range: kept as float64
        f32 = lps.astype(np.float32)
    exact32 = bool((f32.astype(np.float64) == lps).all())
    k = int(choices[0].alt_counts[0]) if ids.size else 0
    sampled = _Sections(zstd)
    id_type = _uint(ids)
    sampled.planes(ids, id_type)
    sampled.planes(f32 if exact32 else lps, "<f4" if exact32 else "<f8")
    header: dict[str, object] = {
        "choices": [[c.index, int(c.ids.size)] for c in choices],
        "id": id_type,
        "lp": "<f4" if exact32 else "<f8",
        "topk": k > 0,
    }
    payload = sampled.blob(SAMPLED_MAGIC, header)
    if not k:
        return payload, None
    alt_ids = choices[0].alt_ids if one else np.concatenate([c.alt_ids for c in choices])
    alt_lps = choices[0].alt_logprobs if one else np.concatenate([c.alt_logprobs for c in choices])
    alt_ids, alt_lps = alt_ids.reshape(ids.size, k), alt_lps.reshape(ids.size, k)
    return payload, _pack_top(ids, lps, alt_ids, alt_lps, zstd)


def _pack_top(
    ids: np.ndarray,
    lps: np.ndarray,
    alt_ids: np.ndarray,
    alt_lps: np.ndarray,
    zstd: zstandard.ZstdCompressor,
) -> bytes:
    k = alt_ids.shape[1]
    same = (alt_ids == ids[:, None]) & (alt_lps == lps[:, None])
    found = same.any(axis=1)
    place = np.where(found, same.argmax(axis=1), NONE)
    steps = np.rint(alt_lps / -STEP).astype(np.int64)
    # The sampled alternative's step is left out; its neighbour's delta skips over it.
    rows = np.flatnonzero(found)
    at = place[rows]
    steps[rows, at] = np.where(at > 0, steps[rows, np.maximum(at - 1, 0)], 0)
    deltas = steps.copy()
    deltas[:, 1:] -= steps[:, :-1]
    kept = np.arange(k)[None, :] != place[:, None]
    stored = deltas[kept]
    zigzag = (stored << 1) ^ (stored >> 63)
    stored_ids = alt_ids[kept]
    id_type, delta_type = _uint(stored_ids), _uint(zigzag)
    top = _Sections(zstd)
    top.add(place.astype("<u1").tobytes())
    top.planes(stored_ids, id_type)
    top.planes(zigzag, delta_type)
    return top.blob(TOPK_MAGIC, {"k": k, "id": id_type, "d": delta_type})


@dataclass(slots=True)
class Unpacked:
    """A v3 row's arrays; `alt_*` None when its top-k is absent (dropped by retention)."""

    choices: list[tuple[int, int]]  # (choice index, positions)
    ids: np.ndarray
    logprobs: np.ndarray
    alt_ids: np.ndarray | None = None  # (positions, k)
    alt_logprobs: np.ndarray | None = None  # (positions, k)

    def token_ids(self) -> set[int]:
        """Every id the row refers to."""
        found = set(self.ids.tolist())
        if self.alt_ids is not None:
            found.update(self.alt_ids.ravel().tolist())
        return found


def had_topk(payload: bytes) -> bool:
    """Whether the call had alternatives (kept in `topk` until retention drops it)."""
    return bool(_Reader(SAMPLED_MAGIC, payload).header["topk"])


def unpack(payload: bytes, topk: bytes | None) -> Unpacked:
    """The arrays of a v3 row."""
    reader = _Reader(SAMPLED_MAGIC, payload)
    header = reader.header
    try:
        choices = [(int(i), int(n)) for i, n in header["choices"]]
        n = sum(count for _, count in choices)
        ids = reader.planes(str(header["id"]), n).astype(np.int64)
        values = reader.planes(str(header["lp"]), n)
    except (ValueError, IndexError, TypeError, KeyError, zstandard.ZstdError):
        raise ValueError("not a v3 Plumbline logprob payload: a section is corrupt") from None
    found = Unpacked(choices, ids, values.astype(np.float64))
    if topk is not None:
        try:
            found.alt_ids, found.alt_logprobs = _unpack_top(topk, found)
        except (ValueError, IndexError, TypeError, KeyError, zstandard.ZstdError):
            raise ValueError("not a v3 Plumbline top-k payload: a section is corrupt") from None
    return found


def _unpack_top(topk: bytes, found: Unpacked) -> tuple[np.ndarray, np.ndarray]:
    reader = _Reader(TOPK_MAGIC, topk)
    header, n = reader.header, found.ids.size
    k = int(header["k"])
    place = np.frombuffer(reader.next(), np.uint8, n).astype(np.int64)
    exact = np.arange(k)[None, :] == place[:, None]
    total = n * k - int((place != NONE).sum())
    stored_ids = reader.planes(str(header["id"]), total).astype(np.int64)
    zigzag = reader.planes(str(header["d"]), total).astype(np.int64)
    deltas = np.zeros((n, k), np.int64)
    deltas[~exact] = (zigzag >> 1) ^ -(zigzag & 1)
    steps = np.cumsum(deltas, axis=1)
    values = np.round(steps * -STEP, 3) + 0.0  # + 0.0: no -0.0
    ids = np.repeat(found.ids[:, None], k, axis=1)
    ids[~exact] = stored_ids
    values[exact] = np.repeat(found.logprobs[:, None], k, axis=1)[exact]
    return ids, values
