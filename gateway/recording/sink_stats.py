"""SinkStats: a log sink's counters, apart from the sink so the proxy reads them without the ORM."""

from __future__ import annotations

from dataclasses import dataclass

# Why a record meant for the v3 logprob form was stored as v2 (one counter each, below).
LOGPROB_FALLBACK_REASONS = (
    "layout",
    "redacted",
    "key_length",
    "new_keys",
    "vocab_full",
    "database",
)
LOGPROB_FALLBACK_COUNTERS = tuple(f"logprob_v3_fallback_{r}" for r in LOGPROB_FALLBACK_REASONS)


@dataclass(slots=True)
class SinkStats:
    """Counters the sink exposes in /metrics and /health."""

    submitted: int = 0
    # Records the journal step has finished with (journaled, spooled or dropped).
    journaled: int = 0
    written: int = 0
    spooled: int = 0
    replayed: int = 0
    dropped: int = 0
    failed_batches: int = 0
    # Rows the database refused for their content, kept in the spool's quarantine directory.
    quarantined: int = 0
    # Spans of sampled calls sent to the OTLP collector, and those dropped (see gateway.tracing).
    trace_exported: int = 0
    trace_dropped_queue_full: int = 0
    trace_dropped_export_failed: int = 0
    trace_dropped_unbuildable: int = 0
    # OTLP metric export requests accepted and failed, and measurements past the attribute-set
    # limit (see gateway.otlp_metrics).
    metric_exported: int = 0
    metric_export_failed: int = 0
    metric_overflowed: int = 0
    # Records meant for the v3 logprob form stored as v2, by reason (LOGPROB_FALLBACK_REASONS).
    logprob_v3_fallback_layout: int = 0
    logprob_v3_fallback_redacted: int = 0
    logprob_v3_fallback_key_length: int = 0
    logprob_v3_fallback_new_keys: int = 0
    logprob_v3_fallback_vocab_full: int = 0
    logprob_v3_fallback_database: int = 0
    database_up: bool = True
    last_batch_seconds: float = 0.0
