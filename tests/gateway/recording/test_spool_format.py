"""Spool format 2: client values round-trip as sent, old files still read, renames made durable."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from gateway.recording.rows import RowBatch
from gateway.recording.spool import Spool, SpoolFullError, decode_batch

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
CLIENT = {"$t": "2020-01-01T00:00:00", "$b": "aGk=", "nested": [{"$t": "x"}]}


def _batch() -> RowBatch:
    return RowBatch(
        calls=[{"id": "c1", "created_at": NOW, "model": {"$b": "not bytes"}}],
        logprobs=[{"call_id": "c1", "created_at": NOW, "payload": b"\x00\xff"}],
        live_samples=[{"call_id": "c1", "created_at": NOW, "request": CLIENT}],
    )


def test_values_that_look_like_tags_come_back_as_sent(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    back = spool.read(spool.write(_batch()))
    assert back == _batch()


def test_a_file_of_the_previous_format_reads_with_client_fields_untouched() -> None:
    legacy = {
        "calls": [{"id": "c1", "created_at": {"$t": NOW.isoformat()}}],
        "logprobs": [
            {"call_id": "c1", "created_at": {"$t": NOW.isoformat()}, "payload": {"$b": "AP8="}}
        ],
        "bodies": [],
        "live_samples": [
            {"call_id": "c1", "created_at": {"$t": NOW.isoformat()}, "request": CLIENT}
        ],
    }
    batch = decode_batch(orjson.dumps(legacy))
    assert batch.calls[0]["created_at"] == NOW
    assert batch.logprobs[0]["payload"] == b"\x00\xff"
    assert batch.live_samples[0]["request"] == CLIENT


def test_a_newer_format_is_refused_not_misread() -> None:
    with pytest.raises(ValueError, match="newer"):
        decode_batch(orjson.dumps({"format": 3, "calls": [], "logprobs": [], "bodies": []}))


def test_the_directory_is_fsynced_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[bool] = []
    real_fsync = os.fsync

    def recording_fsync(descriptor: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(descriptor).st_mode))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    Spool(tmp_path).write(_batch())
    # The file's data first, then the directory entry the rename made.
    assert synced == [False, True]


def test_the_cap_refuses_a_batch_that_would_pass_it(tmp_path: Path) -> None:
    spool = Spool(tmp_path, max_bytes=2**20)
    big = RowBatch(calls=[{"id": "c", "created_at": NOW, "error_message": "x" * 400_000}])
    spool.write(big)
    spool.write(big)
    with pytest.raises(SpoolFullError):
        spool.write(big)
    first = spool.pending_files()[0]
    spool.remove(first)
    spool.write(big)
    assert spool.spooled_bytes() <= 2**20
