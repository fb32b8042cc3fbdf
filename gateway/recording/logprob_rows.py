"""A record's `call_logprobs` values and uncertainty summary, in the configured storage form.

v1 keeps the backend's JSON (zstd) and reads numbers and tokens from the bytes; v2 parses the
JSON once and packs columns (plumbline.logprob_packing): about a third of the bytes, top-k in
its own column so a shorter top-k retention can drop it; v3 (chat only) scans the bytes and
stores token ids from the vocabulary table (gateway.recording.logprob_v3_rows), about half of
v2's bytes. A record v3 cannot take is stored as v2, one v2 cannot take as v1. Each form is
written once `recording.logprob_form` says so (after every replica runs a release reading it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import orjson

from gateway.metering.logprob_summary import (
    LogprobSummary,
    summarize_arrays,
    summarize_chat,
    summarize_parsed,
)
from gateway.metering.record import CallRecord
from gateway.recording.logprob_v3_rows import V3Rows
from gateway.recording.stored_text import RedactionPolicy
from plumbline import logprob_codec, logprob_packing

LogprobForm = Literal["v1", "v2", "v3"]
NO_SUMMARY = LogprobSummary(None, None, 0)
# What a summary of logprobs not shaped as any backend writes them can raise.
_ODD_SHAPES = (ValueError, TypeError, AttributeError, KeyError, IndexError, OverflowError)


def _summary(compute: Callable[[], LogprobSummary]) -> LogprobSummary:
    """The summary, or none where the backend's logprobs have no usable shape."""
    try:
        with np.errstate(all="ignore"):
            return compute()
    except _ODD_SHAPES:
        return NO_SUMMARY


@dataclass(frozen=True, slots=True)
class StoredLogprobs:
    """What the `call_logprobs` row stores, and the summary the `calls` row gets."""

    payload: bytes
    topk: bytes | None
    token_count: int
    summary: LogprobSummary


def _v1(record: CallRecord, policy: RedactionPolicy | None) -> StoredLogprobs:
    if record.logprob_format == logprob_codec.CHAT:
        document = logprob_codec.per_choice_json(logprob_codec.CHAT, record.logprob_chunks)
        positions = document.count(b'"top_logprobs":')
        summary = _summary(lambda: summarize_chat(document, positions=positions))
    else:
        merged = logprob_codec.completion_objects(record.logprob_chunks)
        keyed = {str(k): v for k, v in sorted(merged.items())}
        positions = sum(len(v["tokens"]) for v in merged.values())
        document = orjson.dumps(keyed)
        summary = _summary(lambda: summarize_parsed(keyed))
    stored = policy.logprobs(document) if policy else document
    return StoredLogprobs(logprob_codec.encode(stored), None, positions, summary)


def _logged_tokens(fmt: str, choices: dict[int, Any]) -> int:
    if fmt == logprob_codec.CHAT:
        return sum(len(v) for v in choices.values() if isinstance(v, list))
    return sum(len(v.get("tokens") or []) for v in choices.values() if isinstance(v, dict))


def _v2(record: CallRecord, policy: RedactionPolicy | None) -> StoredLogprobs:
    fmt = record.logprob_format or logprob_codec.CHAT
    choices = logprob_codec.parsed_choices(fmt, record.logprob_chunks)
    if policy is not None:
        policy.logprob_choices(choices)
    packed = logprob_packing.pack(fmt, choices)
    sampled, top = packed.sampled, packed.top
    if sampled is not None:
        summary = _summary(lambda: summarize_arrays(sampled, top))
    else:
        summary = _summary(lambda: summarize_parsed({str(k): v for k, v in choices.items()}))
    return StoredLogprobs(packed.payload, packed.topk, _logged_tokens(fmt, choices), summary)


def stored_logprobs(
    record: CallRecord,
    policy: RedactionPolicy | None,
    form: LogprobForm = "v1",
    v3: V3Rows | None = None,
) -> StoredLogprobs:
    """The stored logprobs of a record that has some, in `form` (v3 needs its `V3Rows`)."""
    if form == "v3" and v3 is not None and record.logprob_format == logprob_codec.CHAT:
        built = v3.build(record.logprob_chunks, policy)
        if built is not None:
            return StoredLogprobs(built.payload, built.topk, built.token_count, built.summary)
    if form in ("v2", "v3"):
        try:
            return _v2(record, policy)
        except _ODD_SHAPES:
            pass  # not JSON as a backend writes it: v1 keeps the bytes as they came
    return _v1(record, policy)
