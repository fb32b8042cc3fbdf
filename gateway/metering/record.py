"""CallRecord: everything measured about one call, assembled once and handed to the log sink."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any

from plumbline.otlp.trace_context import ParentContext


@dataclass(frozen=True, slots=True)
class LiveSampleOrder:
    """What the worker needs besides the request: answer type, resamples, priority support."""

    answer: dict[str, Any] | None
    resamples: int
    priority: bool


@dataclass(frozen=True, slots=True)
class CallRecord:
    """Raw measurements of one call; summaries are computed later, off the hot path.

    The proxy builds it once, when the call ends (`gateway.proxy.call_record`), from the small
    parts each stage of the call produced; nothing changes it afterwards.
    """

    id: str
    created_at: datetime
    request_id: str
    endpoint: str
    status_code: int = 200
    team_id: int | None = None
    team_name: str | None = None
    key_id: int | None = None
    # The team's retention class, copied onto the call's rows (see gateway.retention).
    retention_days: int = 0
    feature: str | None = None
    end_user: str | None = None
    source: str = "product"
    model: str | None = None
    backend: str | None = None
    stream: bool = False
    n: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    # Inputs, documents or pairs of a pooling call; None for generating calls.
    items: int | None = None
    cancelled: bool = False
    error_type: str | None = None
    error_message: str | None = None
    finish_reason: str | None = None
    # The backend's response `id` (`chatcmpl-...`, `resp_...`) and the model it says answered.
    response_id: str | None = None
    response_model: str | None = None
    usage: dict[str, Any] | None = None
    engine_metrics: dict[str, Any] | None = None
    # Gateway clock (perf_counter seconds) of arrival, token chunks and completion.
    t_arrival: float = 0.0
    t_done: float | None = None
    token_chunk_times: list[float] = field(default_factory=list)
    completion_tokens_seen: int = 0
    overhead_s: float = 0.0
    logprob_format: str | None = None
    logprob_k: int = 0
    logprob_mode: str | None = None
    logprob_chunks: list[tuple[int, Any]] = field(default_factory=list)
    price_in: float = 0.0
    price_out: float = 0.0
    # Speech-to-text: the audio's duration and its price per minute.
    audio_seconds: float | None = None
    price_audio_minute: float = 0.0
    parameters: float | None = None
    weight_bytes: float | None = None
    memory_bandwidth: float | None = None
    store_body: bool = False
    request_body: bytes | None = None
    response_body: bytes | None = None
    # Set when the call was picked for live resampling (see gateway.live_sampling).
    live_sample: LiveSampleOrder | None = None
    # W3C trace context: the gateway span's trace and id, the client's span (its parent), the
    # sampling decision and the tracestate sent upstream; all None/False when tracing is off.
    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    trace_sampled: bool = False
    tracestate: str | None = None
    # The span the gateway span links to: an eval question's (X-Plumbline-Trace-Link, admin only).
    trace_link: ParentContext | None = None
    # Why load shedding refused the call (eval, live_sample, over_fair_share); None: it did not.
    shed_reason: str | None = None

    # Records are pickled to the recorder process by the gateway's hand-off thread, which holds
    # the GIL meanwhile: their state is the bare values in slot order, gathered in C.
    def __getstate__(self) -> tuple[Any, ...]:
        state: tuple[Any, ...] = attrgetter(*self.__slots__)(self)
        return state

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            object.__setattr__(self, name, value)
