"""A durable local spool: batches the database could not take, replayed when it returns."""

from __future__ import annotations

import base64
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
    """Append-only files of row batches, one line per batch, fsynced before returning."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._sequence = 0

    def write(self, batch: RowBatch) -> None:
        """Persist a batch; raises OSError if the disk refuses."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._sequence += 1
        name = f"spool-{datetime.now().strftime('%Y%m%dT%H%M%S%f')}-{os.getpid()}-{self._sequence}"
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
        temporary.rename(self.directory / f"{name}.jsonl")

    def pending_files(self) -> list[Path]:
        """Spooled batches, oldest first."""
        if not self.directory.exists():
            return []
        return sorted(self.directory.glob("spool-*.jsonl"))

    def pending_records(self) -> int:
        """How many call records are waiting in the spool."""
        return sum(len(batch) for _, batch in self.read_all())

    def read_all(self) -> Iterator[tuple[Path, RowBatch]]:
        """Each spooled file with its batch."""
        for path in self.pending_files():
            data = orjson.loads(path.read_bytes())
            yield (
                path,
                RowBatch(
                    calls=_decode_rows(data["calls"]),
                    logprobs=_decode_rows(data["logprobs"]),
                    bodies=_decode_rows(data["bodies"]),
                    live_samples=_decode_rows(data.get("live_samples", [])),
                ),
            )
