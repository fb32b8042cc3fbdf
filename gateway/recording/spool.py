"""A durable local spool: batches the database could not take, replayed when it returns.

Format 3 (a `"format": 3` line) stores each table as groups of rows with the same columns,
column by column, with one kind per column: `v` JSON values as they are (str, int, float,
bool, None), `t` ISO datetimes, `b` base64 bytes, or `x` where a column holds documents or
mixed types, each value then a [tag, payload] pair as format 2 wrote it. A kind comes from the
values' Python types, never from their content, so no client JSON can pass for a datetime or
bytes; and only the few `t`, `b` and `x` values cost a Python call each (format 2's pair per
value took a sixth of a recorder's CPU). Format 2 wraps every value in a pair: `t` an ISO
datetime, `b` base64 bytes, `j` a JSON document as text, `v` any other JSON value as is.
Files without the key are an older release's format, which tagged values in place; they are
decoded only where that release put tags (see `LEGACY_TAGS`). A release refuses (and keeps)
a format newer than it reads.
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

FORMAT = 3
PAIRED = 2  # the format whose every value is a [tag, payload] pair
_PLAIN_TYPES = frozenset({str, int, float, bool})
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


def _kind(column: tuple[Any, ...]) -> str:
    types = set(map(type, column))
    types.discard(type(None))
    if types <= _PLAIN_TYPES:
        return "v"
    if types == {datetime}:
        return "t"
    if types == {bytes}:
        return "b"
    return "x"


def _encode_column(kind: str, column: tuple[Any, ...]) -> list[Any] | tuple[Any, ...]:
    if kind == "v":
        return column
    if kind == "t":
        return [None if v is None else v.isoformat() for v in column]
    if kind == "b":
        return [None if v is None else base64.b64encode(v).decode() for v in column]
    return [_encode_value(v) for v in column]


def _decode_column(kind: str, column: list[Any]) -> list[Any]:
    if kind == "v":
        return column
    if kind == "t":
        return [None if v is None else datetime.fromisoformat(v) for v in column]
    if kind == "b":
        return [None if v is None else base64.b64decode(v) for v in column]
    if kind == "x":
        return [_decode_value(v) for v in column]
    raise ValueError(f"unknown spool column kind {kind!r}")


def _encode_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows grouped by their columns (one group, nearly always), stored column by column."""
    groups: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
    for row in rows:
        groups.setdefault(tuple(row), []).append(tuple(row.values()))
    encoded = []
    for names, values in groups.items():
        columns = list(zip(*values, strict=True))
        kinds = [_kind(column) for column in columns]
        encoded.append(
            {
                "columns": list(names),
                "kinds": "".join(kinds),
                "values": [_encode_column(k, c) for k, c in zip(kinds, columns, strict=True)],
            }
        )
    return encoded


def _decode_rows(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for group in groups:
        names, kinds, values = group["columns"], group["kinds"], group["values"]
        if not (len(names) == len(kinds) == len(values)):
            raise ValueError("a spool group's columns, kinds and values differ in number")
        columns = [_decode_column(k, c) for k, c in zip(kinds, values, strict=True)]
        rows += [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]
    return rows


def encode_batch(batch: RowBatch) -> bytes:
    """One spool line for a batch, in the current format."""
    document: dict[str, Any] = {"format": FORMAT}
    for table in TABLES:
        document[table] = _encode_rows(getattr(batch, table))
    return orjson.dumps(document) + b"\n"


def decode_batch(line: bytes) -> RowBatch:
    """The batch in a spool line of any format; ValueError, KeyError or TypeError if bad."""
    data = orjson.loads(line)
    version = data.get("format")
    tables: dict[str, list[dict[str, Any]]] = {}
    for table in TABLES:
        rows = data.get(table, []) if table == "live_samples" else data[table]
        if version == FORMAT:
            tables[table] = _decode_rows(rows)
        elif version == PAIRED:
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
