"""A durable local spool: batches the database could not take, replayed when it returns."""

from __future__ import annotations

import base64
import itertools
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from gateway.recording.rows import RowBatch


def _encode_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$b": base64.b64encode(value).decode()}
    if isinstance(value, datetime):
        return {"$t": value.isoformat()}
    return value


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict):
        if "$b" in value:
            return base64.b64decode(value["$b"])
        if "$t" in value:
            return datetime.fromisoformat(value["$t"])
    return value


def _encode_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: _encode_value(v) for k, v in row.items()} for row in rows]


def _decode_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: _decode_value(v) for k, v in row.items()} for row in rows]


class Spool:
    """Files of row batches, one per batch, fsynced before `write` returns."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # itertools.count is atomic under the GIL; the sink writes from more than one thread.
        self._sequence = itertools.count(1)

    def write(self, batch: RowBatch) -> Path:
        """Persist a batch and return its file; raises OSError if the disk refuses."""
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        name = f"spool-{stamp}-{os.getpid()}-{next(self._sequence):09d}"
        temporary = self.directory / f"{name}.tmp"
        line = orjson.dumps(
            {
                "calls": _encode_rows(batch.calls),
                "logprobs": _encode_rows(batch.logprobs),
                "bodies": _encode_rows(batch.bodies),
                "live_samples": _encode_rows(batch.live_samples),
            }
        )
        with temporary.open("wb") as handle:
            handle.write(line + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        # The rename makes a batch visible only once it is whole on disk.
        path = self.directory / f"{name}.jsonl"
        temporary.rename(path)
        return path

    def pending_files(self) -> list[Path]:
        """Spooled batches, oldest first."""
        if not self.directory.exists():
            return []
        return sorted(self.directory.glob("spool-*.jsonl"))

    def pending_records(self) -> int:
        """How many call records are waiting in the spool."""
        return sum(len(batch) for _, batch in self.read_all())

    def read(self, path: Path) -> RowBatch:
        """The batch in one spool file; OSError or ValueError if it cannot be read."""
        data = orjson.loads(path.read_bytes())
        return RowBatch(
            calls=_decode_rows(data["calls"]),
            logprobs=_decode_rows(data["logprobs"]),
            bodies=_decode_rows(data["bodies"]),
            live_samples=_decode_rows(data.get("live_samples", [])),
        )

    def set_aside(self, path: Path) -> None:
        """Rename an unreadable file out of the replay, keeping it for a person to look at."""
        path.rename(path.with_suffix(".unreadable"))

    def read_all(self) -> Iterator[tuple[Path, RowBatch]]:
        """Each spooled file with its batch."""
        for path in self.pending_files():
            yield path, self.read(path)
