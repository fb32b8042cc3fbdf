"""Where a v3 record's row CPU goes: scan, redaction check, vocabulary, pack, zstd, summary.

Each stage is timed alone (process CPU) over the same records, in the order the row builder
runs them; "rest of row" is the record's `calls` row without its logprobs (timings, cost).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, cast

import zstandard

from gateway.config import RedactionConfig
from gateway.metering.record import CallRecord
from gateway.recording import logprob_v3_rows
from gateway.recording.logprob_v3_rows import V3Rows
from gateway.recording.rows import call_row
from gateway.recording.stored_text import RedactionPolicy
from plumbline import logprob_v3
from plumbline.logprob_scan import scan_chat

STAGES = ("scan", "redaction check", "vocabulary", "pack", "zstd", "summary", "rest of row")


class _Stored:
    """A stand-in compressor that keeps the bytes: pack's own CPU without zstd's."""

    def compress(self, data: bytes) -> bytes:
        return data


def _per_record(records: list[Any], stage: Callable[[Any], object]) -> float:
    started = time.process_time()
    for record in records:
        stage(record)
    return (time.process_time() - started) / len(records) * 1e6


def v3_breakdown(records: list[CallRecord], v3: V3Rows) -> dict[str, float]:
    """µs of CPU per record for each stage (single-choice chat records, vocabulary warm)."""
    policy = RedactionPolicy(RedactionConfig())
    assert policy.redactor is not None
    redactor = policy.redactor
    items = [[item for _, item in r.logprob_chunks] for r in records]
    found: dict[str, float] = {"scan": _per_record(items, scan_chat)}
    scanned = [s for s in map(scan_chat, items) if s is not None]
    assert len(scanned) == len(items), "records not in vLLM's layout"
    found["redaction check"] = _per_record(
        scanned, lambda s: redactor.spans(logprob_v3_rows.sampled_text(s))
    )
    found["vocabulary"] = _per_record(scanned, lambda s: v3.vocabulary.ids(s.keys + s.alt_keys))
    choices = []
    for s in scanned:
        ids = v3.vocabulary.ids(s.keys + s.alt_keys)
        n = len(s.keys)
        choices.append(
            logprob_v3.ChoiceIds(0, ids[:n], s.logprobs, s.alt_counts, ids[n:], s.alt_logprobs)
        )
    zstd = zstandard.ZstdCompressor(level=logprob_v3_rows.LEVEL)
    stored = cast(zstandard.ZstdCompressor, _Stored())
    packed = _per_record(choices, lambda c: logprob_v3.pack([c], zstd))
    found["pack"] = _per_record(choices, lambda c: logprob_v3.pack([c], stored))
    found["zstd"] = packed - found["pack"]
    found["summary"] = _per_record(choices, lambda c: logprob_v3_rows.summary_of([c]))
    bare = [dataclasses.replace(r, logprob_chunks=[], logprob_format=None) for r in records]
    found["rest of row"] = _per_record(bare, lambda r: call_row(r, policy))
    return found
