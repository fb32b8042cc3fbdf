"""A durable local spool: batches the database could not take, replayed when it returns.

Format 2 (a `"format": 2` line) wraps every column value in a [tag, payload] pair, so no
client JSON can pass for a datetime or bytes: `t` an ISO datetime, `b` base64 bytes, `j` a
JSON document as text, `v` any other JSON value as is. Files without the key are the previous
release's format, which tagged values in place; they are decoded only where that release put
tags (see `LEGACY_TAGS`).
"""

from __future__ import annotations

import base64
import itertools
import os
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from gateway.recording.rows import RowBatch

FORMAT = 2
TABLES = ("calls", "logprobs", "bodies", "live_samples")
# The only columns the previous release wrote tags into, and the tag each one had.
LEGACY_TAGS = {"created_at": "$t", "payload": "$b"}
QUARANTINE_DIR = "quarantine"


class SpoolFullError(OSError):
    """The spool holds its configured maximum; the batch was not written."""


def _encode_value(value: Any) -> list[Any]:
    if isinstance(value, bytes):
        return ["b", base64.b64encode(value).decode()]
    if isinstance(value, datetime):
        return ["t", value.isoformat()]
    if isinstance(value, dict | list):
        # As text, so a document as deep as the database takes does not deepen the file's line
        # past what orjson writes (254 levels).
        return ["j", orjson.dumps(value).decode()]
    return ["v", value]


def _decode_value(value: Any) -> Any:
    tag, payload = value
    if tag == "b":
        return base64.b64decode(payload)
    if tag == "t":
        return datetime.fromisoformat(payload)
    if tag == "v":
        return payload
    if tag == "j":
        return orjson.loads(payload)
    raise ValueError(f"unknown spool tag {tag!r}")


def _decode_legacy(name: str, value: Any) -> Any:
    tag = LEGACY_TAGS.get(name)
    if tag is None or not isinstance(value, dict) or tag not in value:
        return value
    payload = value[tag]
    return base64.b64decode(payload) if tag == "$b" else datetime.fromisoformat(payload)


def encode_batch(batch: RowBatch) -> bytes:
    """One spool line for a batch, in the current format."""
    document: dict[str, Any] = {"format": FORMAT}
    for table in TABLES:
        rows = getattr(batch, table)
        document[table] = [{k: _encode_value(v) for k, v in row.items()} for row in rows]
    return orjson.dumps(document) + b"\n"


def decode_batch(line: bytes) -> RowBatch:
    """The batch in a spool line of either format; ValueError, KeyError or TypeError if bad."""
    data = orjson.loads(line)
    version = data.get("format")
    tables: dict[str, list[dict[str, Any]]] = {}
    for table in TABLES:
        rows = data.get(table, []) if table == "live_samples" else data[table]
        if version == FORMAT:
            tables[table] = [{k: _decode_value(v) for k, v in row.items()} for row in rows]
        elif version is None:
            tables[table] = [{k: _decode_legacy(k, v) for k, v in row.items()} for row in rows]
        else:
            raise ValueError(f"spool format {version!r} is newer than this release reads")
    return RowBatch(**tables)


def _fsync_directory(directory: Path) -> None:
    # A rename is durable only once the directory entry itself reaches the disk.
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class Spool:
    """Files of row batches, one per batch, fsynced (file and directory) before `write` returns."""

    def __init__(self, directory: Path, max_bytes: int | None = None) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        # itertools.count is atomic under the GIL; the sink writes from more than one thread.
        self._sequence = itertools.count(1)
        self._size_lock = threading.Lock()
        self._bytes: int | None = None

    def _name(self, prefix: str) -> str:
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        return f"{prefix}-{stamp}-{os.getpid()}-{next(self._sequence):09d}"

    def _durable_write(self, directory: Path, name: str, line: bytes) -> Path:
        # Prompts and bodies are in these files: only the gateway's user may read them.
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = directory / f"{name}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        # The rename makes a batch visible only once it is whole on disk.
        path = directory / f"{name}.jsonl"
        temporary.rename(path)
        _fsync_directory(directory)
        return path

    def spooled_bytes(self) -> int:
        """Bytes the pending files take (counted from disk once, then kept up to date)."""
        with self._size_lock:
            if self._bytes is None:
                self._bytes = sum(_size(p) for p in self.pending_files())
            return self._bytes

    def _account(self, change: int) -> None:
        with self._size_lock:
            if self._bytes is not None:
                self._bytes = max(0, self._bytes + change)

    def write(self, batch: RowBatch) -> Path:
        """Persist a batch and return its file; OSError (SpoolFullError) if it cannot."""
        line = encode_batch(batch)
        if self.max_bytes is not None and self.spooled_bytes() + len(line) > self.max_bytes:
            raise SpoolFullError(f"the spool holds its maximum of {self.max_bytes} bytes")
        path = self._durable_write(self.directory, self._name("spool"), line)
        self._account(len(line))
        return path

    def recount(self) -> None:
        """Count the pending bytes from disk again (files were moved in from another spool)."""
        with self._size_lock:
            self._bytes = None

    def remove(self, path: Path) -> None:
        """Delete a batch the database now has."""
        size = _size(path)
        path.unlink(missing_ok=True)
        self._account(-size)

    def quarantine(self, batch: RowBatch) -> Path:
        """Keep rows the database refused, out of the replay, for a person to look at."""
        return self._durable_write(
            self.directory / QUARANTINE_DIR, self._name("quarantine"), encode_batch(batch)
        )

    def pending_files(self) -> list[Path]:
        """Spooled batches, oldest first."""
        if not self.directory.exists():
            return []
        return sorted(self.directory.glob("spool-*.jsonl"))

    def pending_records(self) -> int:
        """How many call records are waiting in the spool."""
        return sum(len(batch) for _, batch in self.read_all())

    def read(self, path: Path) -> RowBatch:
        """The batch in one spool file; OSError, ValueError, KeyError or TypeError if bad."""
        return decode_batch(path.read_bytes())

    def set_aside(self, path: Path) -> None:
        """Rename an unreadable file out of the replay, keeping it for a person to look at."""
        size = _size(path)
        path.rename(path.with_suffix(".unreadable"))
        self._account(-size)

    def read_all(self) -> Iterator[tuple[Path, RowBatch]]:
        """Each spooled file with its batch."""
        for path in self.pending_files():
            yield path, self.read(path)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
