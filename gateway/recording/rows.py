"""Turn CallRecords into table rows (off the hot path, in the writer thread)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.config import RedactionConfig
from gateway.metering.cost import call_cost
from gateway.metering.record import CallRecord
from gateway.metering.timings import phase_timings
from gateway.metering.usage_counts import usage_counts
from gateway.recording.live_rows import live_sample_row
from gateway.recording.logprob_rows import LogprobForm, stored_logprobs
from gateway.recording.logprob_v3_rows import V3Rows
from gateway.recording.stored_text import RedactionPolicy


@dataclass(slots=True)
class RowBatch:
    """Rows for the three call tables, written in one transaction."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    logprobs: list[dict[str, Any]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    live_samples: list[dict[str, Any]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.calls)

    def extend(self, other: RowBatch) -> None:
        """Append another batch's rows."""
        self.calls.extend(other.calls)
        self.logprobs.extend(other.logprobs)
        self.bodies.extend(other.bodies)
        self.live_samples.extend(other.live_samples)


def _engine_times(metrics: dict[str, Any] | None) -> dict[str, float | None]:
    metrics = metrics or {}
    return {
        "engine_queue_ms": metrics.get("queue_time_ms"),
        "engine_prefill_ms": metrics.get("time_to_first_token_ms"),
        "engine_decode_ms": metrics.get("generation_time_ms"),
        "engine_itl_ms": metrics.get("mean_itl_ms"),
    }


def call_row(
    record: CallRecord,
    policy: RedactionPolicy | None = None,
    form: LogprobForm = "v1",
    v3: V3Rows | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The `calls` row of a record, plus its `call_logprobs` row when it has logprobs."""
    prompt, completion, cached, usage_source = usage_counts(record)
    timings = phase_timings(record.t_arrival, record.token_chunk_times, record.t_done)
    cost = call_cost(
        prompt,
        completion,
        price_in=record.price_in,
        price_out=record.price_out,
        parameters=record.parameters,
        weight_bytes=record.weight_bytes,
        memory_bandwidth=record.memory_bandwidth,
    )
    input_cost = cost.input_cost
    if record.audio_seconds is not None:
        audio_cost = record.audio_seconds / 60 * record.price_audio_minute
        input_cost = audio_cost + (input_cost or 0.0)
    row: dict[str, Any] = {
        "id": record.id,
        "created_at": record.created_at,
        "retention_days": record.retention_days,
        "request_id": record.request_id,
        "trace_id": record.trace_id,
        "span_id": record.span_id,
        "team_id": record.team_id,
        "key_id": record.key_id,
        "feature": record.feature,
        "end_user": record.end_user,
        "source": record.source,
        "endpoint": record.endpoint,
        "model": record.model,
        "backend": record.backend,
        "stream": record.stream,
        "n": record.n,
        "temperature": record.temperature,
        "top_p": record.top_p,
        "seed": record.seed,
        "max_tokens": record.max_tokens,
        "items": record.items,
        "status_code": record.status_code,
        "cancelled": record.cancelled,
        "error_type": record.error_type,
        "shed_reason": record.shed_reason,
        "error_message": policy.message(record.error_message) if policy else record.error_message,
        "finish_reason": record.finish_reason,
        "response_id": record.response_id,
        "response_model": record.response_model,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cached_tokens": cached,
        "usage_source": usage_source,
        "ttft_ms": timings.ttft_ms,
        "decode_ms": timings.decode_ms,
        "itl_mean_ms": timings.itl_mean_ms,
        "itl_p50_ms": timings.itl_p50_ms,
        "itl_p95_ms": timings.itl_p95_ms,
        "itl_max_ms": timings.itl_max_ms,
        "e2e_ms": timings.e2e_ms,
        "overhead_ms": record.overhead_s * 1000,
        **_engine_times(record.engine_metrics),
        "input_cost": input_cost,
        "audio_seconds": record.audio_seconds,
        "output_cost": cost.output_cost,
        "flops_estimate": cost.flops_estimate,
        "decode_floor_ms": cost.decode_floor_ms,
        "logprob_mode": record.logprob_mode,
        "logprob_mean": None,
        "logprob_min_margin": None,
        "near_ties": None,
    }
    if not record.logprob_chunks or record.logprob_format is None:
        return row, None
    stored = stored_logprobs(record, policy, form, v3)
    row["logprob_mean"] = stored.summary.mean_logprob
    row["logprob_min_margin"] = stored.summary.min_margin
    row["near_ties"] = stored.summary.near_ties
    logprobs_row = {
        "call_id": record.id,
        "created_at": record.created_at,
        "retention_days": record.retention_days,
        "team_id": record.team_id,
        "format": record.logprob_format,
        "token_count": stored.token_count,
        "top_k": record.logprob_k,
        "payload": stored.payload,
    }
    if stored.topk is not None:
        logprobs_row["topk"] = stored.topk
    return row, logprobs_row


def body_row(record: CallRecord, policy: RedactionPolicy) -> dict[str, Any] | None:
    """The `call_bodies` row of a record whose team opted in to body storage, redacted."""
    if not record.store_body or record.request_body is None:
        return None
    response = record.response_body
    return {
        "call_id": record.id,
        "created_at": record.created_at,
        "retention_days": record.retention_days,
        "team_id": record.team_id,
        "end_user": record.end_user,
        "request_body": policy.request(record.request_body),
        "response_body": policy.response(response, record.stream) if response else None,
    }


RowObserver = Callable[[CallRecord, dict[str, Any]], None]


def build_rows(
    records: list[CallRecord],
    policy: RedactionPolicy | None = None,
    form: LogprobForm = "v1",
    v3: V3Rows | None = None,
) -> RowBatch:
    """Rows for a batch of records (redacted as the policy says; default: the defaults).

    Form v3 needs `v3` (the vocabulary); without it records are stored as v2.
    """
    policy = policy or RedactionPolicy(RedactionConfig())
    batch = RowBatch()
    for record in records:
        row, logprobs_row = call_row(record, policy, form, v3)
        batch.calls.append(row)
        if logprobs_row is not None:
            batch.logprobs.append(logprobs_row)
        body = body_row(record, policy)
        if body is not None:
            batch.bodies.append(body)
        live = live_sample_row(record)
        if live is not None:
            batch.live_samples.append(live)
    return batch
