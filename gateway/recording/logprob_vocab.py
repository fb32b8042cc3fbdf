"""A recorder's view of the logprob vocabulary: token keys to ids, cached, assigned in the database.

Ids come from the `logprob_vocab` table (insert, conflicts left alone, then select), so every
recorder of every gateway process and replica gives a key the same id; they are committed
before any row that refers to them is built. Each recorder keeps the keys it has seen in a
bounded dict. A record whose keys pass a bound (key length, new keys per record, rows in all)
or that needs the database while it is away raises Fallback: the caller stores it as v2.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import orjson
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from gateway.config import LogprobVocabConfig
from plumbline.repositories import logprob_vocab as repository

RETRY_INTERVAL_S = 1.0  # after a failed round trip, records needing new ids skip the database
# Keys unknown to this recorder that one record may look up, per key it may add: bounds the
# queries a record costs (a fresh cache misses every key of a record, most already in the table).
LOOKUPS_PER_NEW_KEY = 8


class Fallback(Exception):
    """This record's keys cannot get ids now; `reason` is one of LOGPROB_FALLBACK_REASONS."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _readable(keys: set[bytes]) -> bool:
    """Whether every key splits into a JSON string's content and a JSON value, as reads need."""
    try:
        parts = b"\x00".join(keys).split(b"\x00")
        if len(parts) != 2 * len(keys):
            return False
        orjson.loads(b'["' + b'","'.join(parts[::2]) + b'"]')
        orjson.loads(b"[" + b",".join(parts[1::2]) + b"]")
    except orjson.JSONDecodeError:
        return False
    return True


class Vocabulary:
    """Key -> id, from a bounded cache or through the database."""

    def __init__(self, engine: Engine, config: LogprobVocabConfig) -> None:
        self._engine = engine
        self._config = config
        self._ids: dict[bytes, int] = {}
        # Rows are built in the journal thread, and in the caller's when the queue is full.
        self._lock = threading.Lock()
        self._retry_at = 0.0

    @property
    def cached(self) -> int:
        """Keys in this recorder's cache."""
        return len(self._ids)

    def ids(self, keys: Sequence[bytes]) -> np.ndarray:
        """The id of each key (int64), or Fallback."""
        cache = self._ids
        try:
            return np.fromiter(map(cache.__getitem__, keys), np.int64, len(keys))
        except KeyError:
            pass  # some key is new to this recorder
        with self._lock:
            missing = {key for key in keys if key not in cache}
            found = self._assign(missing)
            ids = np.fromiter(
                (found[k] if k in found else cache[k] for k in keys), np.int64, len(keys)
            )
            if len(cache) + len(found) > self._config.cache_keys:
                cache.clear()  # cheaper than tracking use; the next records fill it again
            cache.update(found)
        return ids

    def _assign(self, missing: set[bytes]) -> dict[bytes, int]:
        bounds = self._config
        if any(len(key) > bounds.max_key_bytes for key in missing):
            raise Fallback("key_length")
        if len(missing) > LOOKUPS_PER_NEW_KEY * bounds.max_new_keys_per_record:
            raise Fallback("new_keys")
        if not _readable(missing):
            raise Fallback("layout")  # a key no read could turn back into a token
        if time.monotonic() < self._retry_at:
            raise Fallback("database")
        try:
            with self._engine.begin() as connection:
                found = repository.ids_of(connection, missing)
                new = missing - found.keys()
                if len(new) > bounds.max_new_keys_per_record:
                    raise Fallback("new_keys")
                if new:
                    # Several recorders may pass this check at once: the table can exceed
                    # max_rows by at most max_new_keys_per_record per other recorder.
                    if repository.highest_id(connection) + len(new) > bounds.max_rows:
                        raise Fallback("vocab_full")
                    repository.add_keys(connection, new)
                    found.update(repository.ids_of(connection, new))
        except (SQLAlchemyError, OSError):
            self._retry_at = time.monotonic() + RETRY_INTERVAL_S
            raise Fallback("database") from None
        if found.keys() != missing:
            raise Fallback("database")  # a key inserted but not found: never seen, but not v3
        return found
