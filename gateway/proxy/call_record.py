"""Assemble a call's record, once, from the parts each stage of the call produced."""

from __future__ import annotations

from gateway.metering.metered import Metered
from gateway.metering.record import CallRecord
from gateway.proxy.call_facts import Arrival, Attribution, Delivery, Kept, Outcome, Planned
from gateway.proxy.request_fields import RequestParams


def assemble_record(
    arrival: Arrival,
    attribution: Attribution,
    params: RequestParams,
    planned: Planned | None,
    kept: Kept,
    metered: Metered,
    delivery: Delivery,
    outcome: Outcome,
) -> CallRecord:
    """The record of a finished call; `planned` once the call got that far.

    The gateway's failure outranks the one the backend answered.
    """
    failure = outcome.failure or metered.failure
    model = planned.model if planned is not None else None
    plan = planned.plan if planned is not None else None
    capture = plan is not None and plan.capture_logprobs
    return CallRecord(
        id=arrival.id,
        created_at=arrival.created_at,
        request_id=arrival.request_id,
        endpoint=arrival.endpoint,
        status_code=failure.status if failure is not None else 200,
        team_id=attribution.team_id,
        team_name=attribution.team_name,
        key_id=attribution.key_id,
        retention_days=attribution.retention_days,
        feature=arrival.feature,
        end_user=arrival.end_user,
        source=attribution.source,
        model=params.model,
        backend=delivery.backend,
        stream=params.stream,
        n=params.n,
        temperature=params.temperature,
        top_p=params.top_p,
        seed=params.seed,
        max_tokens=params.max_tokens,
        items=params.items,
        cancelled=outcome.cancelled,
        error_type=failure.error_type if failure is not None else None,
        error_message=failure.message if failure is not None else None,
        finish_reason=metered.finish_reason,
        response_id=metered.response_id,
        response_model=metered.response_model,
        usage=metered.usage,
        engine_metrics=metered.engine_metrics,
        t_arrival=arrival.t_arrival,
        t_done=outcome.t_done,
        token_chunk_times=metered.token_chunk_times,
        completion_tokens_seen=metered.completion_tokens_seen,
        overhead_s=delivery.overhead_s,
        logprob_format=planned.kind.fmt if capture and planned is not None else None,
        logprob_k=plan.captured_k if plan is not None else 0,
        logprob_mode=model.logprobs.backend_mode if capture and model is not None else None,
        logprob_chunks=metered.logprob_chunks,
        price_in=model.price.input_per_million if model is not None else 0.0,
        price_out=model.price.output_per_million if model is not None else 0.0,
        audio_seconds=metered.audio_seconds,
        price_audio_minute=model.price.audio_per_minute if model is not None else 0.0,
        parameters=model.parameters if model is not None else None,
        weight_bytes=model.weight_bytes if model is not None else None,
        memory_bandwidth=model.memory_bandwidth if model is not None else None,
        store_body=kept.store_body,
        request_body=kept.request_body,
        response_body=delivery.response_body,
        live_sample=kept.live_sample,
        trace_id=arrival.trace.trace_id,
        span_id=arrival.trace.span_id,
        parent_span_id=arrival.trace.parent_span_id,
        trace_sampled=arrival.trace.sampled,
        tracestate=arrival.trace.tracestate,
        trace_link=arrival.trace.link,
        shed_reason=outcome.shed,
    )
