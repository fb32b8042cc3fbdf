"""Vocabulary ids read straight from vLLM's chat logprob layout, with no Python object per key.

`scan_ids(items, table)` reads what `logprob_scan.scan_chat` reads and turns each key into its
id from `table` on the way. Keys the table does not hold come back in `missing`, each once,
their places marked -(1 + j) for `missing[j]`; `ScannedIds.with_missing` fills them in. The
compiled `KeyTable` (`_logprob_keys.c`) hashes under a random seed, so a backend cannot choose
colliding tokens. Where the extension was not built, `ReferenceKeyTable` and
`scan_ids_reference` do the same in plain Python, with the same answers.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from plumbline.logprob_scan import SEPARATOR, compiled_scanner_built, scan_chat_reference


@dataclass(frozen=True, slots=True)
class ScannedIds:
    """One choice's entries as id and value columns, and its sampled text as sent."""

    ids: np.ndarray  # int64 per position; -(1 + j) where the key is missing[j]
    logprobs: np.ndarray  # float64 per position
    alt_counts: np.ndarray  # int64, alternatives per position
    alt_ids: np.ndarray  # int64, like ids
    alt_logprobs: np.ndarray  # float64
    missing: list[bytes]  # keys the table did not hold
    text: bytes  # the sampled tokens' JSON string contents, joined
    escaped: bool  # whether any of them holds an escape

    @property
    def positions(self) -> int:
        """Sampled tokens in the choice."""
        return int(self.ids.size)

    def with_missing(self, found: np.ndarray) -> ScannedIds:
        """The same columns with `found[j]` (int64) in each place of missing[j]."""
        ids, alt_ids = self.ids.copy(), self.alt_ids.copy()
        for column in (ids, alt_ids):
            unknown = column < 0
            column[unknown] = found[-column[unknown] - 1]
        return replace(self, ids=ids, alt_ids=alt_ids, missing=[])


class KeyTable(Protocol):
    """Key -> id for at most `capacity` keys (the compiled one, or the reference)."""

    def __len__(self) -> int: ...

    def get(self, key: bytes, /) -> int | None:
        """The key's id, or None."""

    def add(self, keys: list[bytes], ids: list[int], /) -> None:
        """Hold these keys with these ids (ValueError past capacity or for a bad key)."""

    def clear(self) -> None:
        """Hold nothing."""

    def lookup(self, keys: list[bytes], /) -> tuple[bytearray, list[bytes]]:
        """Int64 ids of the keys (-(1 + j) for missing[j], not deduplicated) and those missing."""


class ReferenceKeyTable:
    """The compiled KeyTable's behaviour on a dict."""

    def __init__(self, capacity: int, max_key_bytes: int) -> None:
        self.capacity, self.max_key_bytes = capacity, max_key_bytes
        self._ids: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def get(self, key: bytes, /) -> int | None:
        """The key's id, or None."""
        return self._ids.get(key)

    def _storable(self, key: bytes) -> bool:
        return len(key) <= self.max_key_bytes and SEPARATOR in key

    def add(self, keys: list[bytes], ids: list[int], /) -> None:
        """Hold these keys with these ids (ValueError past capacity or for a bad key)."""
        if len(keys) != len(ids):
            raise ValueError("add needs as many ids as keys")
        for key, id_ in zip(keys, ids, strict=True):
            if not self._storable(key) or id_ < 0:
                raise ValueError("a key is not bytes with a NUL, or is too long; or an id < 0")
            if key not in self._ids and len(self._ids) >= self.capacity:
                raise ValueError("the key table is full")
            self._ids[key] = id_

    def clear(self) -> None:
        """Hold nothing."""
        self._ids.clear()

    def lookup(self, keys: list[bytes], /) -> tuple[bytearray, list[bytes]]:
        """Int64 ids of the keys (-(1 + j) for missing[j], not deduplicated) and those missing."""
        ids, missing = [], []
        for key in keys:
            found = self._ids.get(key)
            if found is None:
                missing.append(key)
                found = -len(missing)
            ids.append(found)
        return bytearray(np.array(ids, dtype=np.int64).tobytes()), missing


def key_table(capacity: int, max_key_bytes: int) -> KeyTable:
    """The compiled table where the extension was built, else the reference."""
    if not compiled_scanner_built():
        return ReferenceKeyTable(capacity, max_key_bytes)
    from plumbline._logprob_scan import KeyTable as Compiled

    return Compiled(capacity, max_key_bytes, os.urandom(16))


class _Places:
    """Ids of keys in scan order, each missing key given its place once (too long: each time)."""

    def __init__(self, table: ReferenceKeyTable) -> None:
        self.table = table
        self.missing: list[bytes] = []
        self._places: dict[bytes, int] = {}

    def id_of(self, key: bytes) -> int:
        found = self.table.get(key) if len(key) <= self.table.max_key_bytes else None
        if found is not None:
            return found
        place = self._places.get(key) if len(key) <= self.table.max_key_bytes else None
        if place is None:
            place = len(self.missing)
            self.missing.append(key)
            if len(key) <= self.table.max_key_bytes:
                self._places[key] = place
        return -(1 + place)


def scan_ids_reference(items: Sequence[bytes], table: ReferenceKeyTable) -> ScannedIds | None:
    """What the compiled scan_ids gives, from the reference scanner and a ReferenceKeyTable."""
    scanned = scan_chat_reference(items)
    if scanned is None:
        return None
    places = _Places(table)
    ids, alt_ids, alternatives = [], [], iter(scanned.alt_keys)
    for key, count in zip(scanned.keys, scanned.alt_counts.tolist(), strict=True):
        ids.append(places.id_of(key))
        for _ in range(count):
            other = next(alternatives)
            alt_ids.append(ids[-1] if other == key else places.id_of(other))
    tokens = [key.split(SEPARATOR, 1)[0] for key in scanned.keys]
    return ScannedIds(
        np.array(ids, dtype=np.int64),
        scanned.logprobs,
        scanned.alt_counts,
        np.array(alt_ids, dtype=np.int64),
        scanned.alt_logprobs,
        places.missing,
        b"".join(tokens),
        any(b"\\" in token for token in tokens),
    )


def scan_ids(items: Sequence[bytes], table: KeyTable) -> ScannedIds | None:
    """A choice's entries with the table's ids; None where the layout is not vLLM's."""
    if isinstance(table, ReferenceKeyTable):
        return scan_ids_reference(items, table)
    from plumbline._logprob_scan import KeyTable as Compiled
    from plumbline._logprob_scan import scan_ids as compiled

    assert isinstance(table, Compiled)

    found = compiled(items if isinstance(items, list | tuple) else list(items), table)
    if found is None:
        return None
    ids, logprobs, counts, alt_ids, alt_logprobs, missing, text, escaped = found
    return ScannedIds(
        np.frombuffer(ids, dtype=np.int64),
        np.frombuffer(logprobs, dtype=np.float64),
        np.frombuffer(counts, dtype=np.int64),
        np.frombuffer(alt_ids, dtype=np.int64),
        np.frombuffer(alt_logprobs, dtype=np.float64),
        missing,
        text,
        escaped,
    )
