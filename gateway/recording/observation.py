"""CallObservation: the few figures of a recorded call that the gateway's metrics count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.metering.record import CallRecord


@dataclass(frozen=True, slots=True)
class CallObservation:
    """Labels and measurements of one call, small enough to cross a process boundary."""

    model: str | None
    backend: str | None
    team: str | None
    feature: str | None
    endpoint: str
    status_code: int
    cancelled: bool
    error_type: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    input_cost: float | None
    output_cost: float | None
    ttft_ms: float | None
    itl_mean_ms: float | None
    decode_ms: float | None
    engine_queue_ms: float | None
    engine_prefill_ms: float | None
    e2e_ms: float | None
    overhead_s: float

    @classmethod
    def of(cls, record: CallRecord, row: dict[str, Any]) -> CallObservation:
        """The observation of a record and the `calls` row built from it."""
        return cls(
            model=record.model,
            backend=record.backend,
            team=record.team_name,
            feature=record.feature,
            endpoint=record.endpoint,
            status_code=record.status_code,
            cancelled=record.cancelled,
            error_type=record.error_type,
            prompt_tokens=row["prompt_tokens"],
            completion_tokens=row["completion_tokens"],
            input_cost=row["input_cost"],
            output_cost=row["output_cost"],
            ttft_ms=row["ttft_ms"],
            itl_mean_ms=row["itl_mean_ms"],
            decode_ms=row["decode_ms"],
            engine_queue_ms=row["engine_queue_ms"],
            engine_prefill_ms=row["engine_prefill_ms"],
            e2e_ms=row["e2e_ms"],
            overhead_s=record.overhead_s,
        )
