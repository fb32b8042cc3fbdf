"""GatewayMetrics: the gateway's Prometheus metrics, in a registry owned by one app."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from gateway.recording.observation import CallObservation

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
ITL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 1.0)
OVERHEAD_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144)
CALL_LABELS = ("model", "backend", "team", "feature", "endpoint")
# Calls recorded under a path that is not one of the gateway's own routes.
OTHER_ENDPOINT = "other"
# Error types a backend or provider may name: anything else is counted as "Error".
ERROR_TYPES = frozenset(
    {
        *(f"{name}Error" for name in ("BadRequest", "Authentication", "PermissionDenied")),
        *(f"{name}Error" for name in ("NotFound", "RequestTimeout", "RequestTooLarge")),
        *(f"{name}Error" for name in ("UnprocessableEntity", "RateLimit", "InternalServer")),
        *(f"{name}Error" for name in ("BadGateway", "ServiceUnavailable", "GatewayTimeout")),
        "ClientClosedRequest",
        "invalid_request_error",
        "Error",
    }
)


class GatewayMetrics:
    """Call, token, cost and latency metrics labelled by bounded sets of values."""

    def __init__(
        self, features: Iterable[str], models: Iterable[str] = (), endpoints: Iterable[str] = ()
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._features = frozenset(features)
        # Clients name any model they like; only configured ones become label values.
        self._models = frozenset(models)
        # The routes the gateway serves: a fixed set, whatever path a client asked for.
        self._endpoints = frozenset(endpoints)
        r = self.registry
        self.calls = Counter(
            "plumbline_calls", "Calls through the gateway", [*CALL_LABELS, "status"], registry=r
        )
        self.errors = Counter(
            "plumbline_errors", "Failed calls", [*CALL_LABELS, "error_type"], registry=r
        )
        self.tokens = Counter(
            "plumbline_tokens", "Tokens billed", [*CALL_LABELS, "direction"], registry=r
        )
        self.cost = Counter(
            "plumbline_cost",
            "Cost in the configured currency",
            [*CALL_LABELS, "direction"],
            registry=r,
        )
        self.ttft = Histogram(
            "plumbline_ttft_seconds",
            "Client-side time to first token",
            CALL_LABELS,
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.itl = Histogram(
            "plumbline_itl_seconds",
            "Mean inter-token latency per call",
            CALL_LABELS,
            buckets=ITL_BUCKETS,
            registry=r,
        )
        self.e2e = Histogram(
            "plumbline_e2e_seconds",
            "End-to-end call time",
            CALL_LABELS,
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.decode = Histogram(
            "plumbline_decode_seconds",
            "Client-side decode time: first to last token chunk",
            CALL_LABELS,
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.engine_queue = Histogram(
            "plumbline_engine_queue_seconds",
            "Time the backend engine queued the request (vLLM metrics)",
            ["model", "backend"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.engine_prefill = Histogram(
            "plumbline_engine_prefill_seconds",
            "Backend engine prefill time, scheduled to first token (vLLM metrics)",
            ["model", "backend"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.overhead = Histogram(
            "plumbline_overhead_seconds",
            "Time the gateway itself added",
            ["model", "backend", "endpoint"],
            buckets=OVERHEAD_BUCKETS,
            registry=r,
        )
        self.genai_tokens = Histogram(
            "gen_ai_client_token_usage",
            "OpenTelemetry GenAI: tokens per call",
            ["gen_ai_request_model", "gen_ai_token_type"],
            buckets=TOKEN_BUCKETS,
            registry=r,
        )
        self.genai_ttft = Histogram(
            "gen_ai_server_time_to_first_token",
            "OpenTelemetry GenAI: TTFT in seconds",
            ["gen_ai_request_model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.genai_tpot = Histogram(
            "gen_ai_server_time_per_output_token",
            "OpenTelemetry GenAI: decode time per token",
            ["gen_ai_request_model"],
            buckets=ITL_BUCKETS,
            registry=r,
        )

    def feature_label(self, feature: str | None) -> str:
        """Known features keep their name; everything else folds into a few buckets."""
        if not feature:
            return "none"
        if feature in self._features:
            return feature
        if feature.startswith("eval:"):
            return "eval"
        return "other"

    def model_label(self, model: str | None) -> str:
        """Configured models keep their name; anything a client made up is `unknown`."""
        return model if model in self._models else "unknown"

    def endpoint_label(self, endpoint: str | None) -> str:
        """The call kind's route (`/v1/chat/completions`); any other path is `other`."""
        return endpoint if endpoint in self._endpoints else OTHER_ENDPOINT

    def observe(self, call: CallObservation) -> None:
        """Count one finished call (called from the thread that hears from the recorder)."""
        labels = (
            self.model_label(call.model),
            call.backend or "none",
            call.team or "none",
            self.feature_label(call.feature),
            self.endpoint_label(call.endpoint),
        )
        status = "cancelled" if call.cancelled else str(call.status_code)
        self.calls.labels(*labels, status).inc()
        if call.status_code >= 400:
            error_type = call.error_type if call.error_type in ERROR_TYPES else "Error"
            self.errors.labels(*labels, error_type).inc()
        for direction, tokens, cost in (
            ("input", call.prompt_tokens, call.input_cost),
            ("output", call.completion_tokens, call.output_cost),
        ):
            if tokens is not None:
                self.tokens.labels(*labels, direction).inc(tokens)
                self.genai_tokens.labels(labels[0], direction).observe(tokens)
            if cost:
                self.cost.labels(*labels, direction).inc(cost)
        if call.ttft_ms is not None:
            self.ttft.labels(*labels).observe(call.ttft_ms / 1000)
            self.genai_ttft.labels(labels[0]).observe(call.ttft_ms / 1000)
        if call.itl_mean_ms is not None:
            self.itl.labels(*labels).observe(call.itl_mean_ms / 1000)
            self.genai_tpot.labels(labels[0]).observe(call.itl_mean_ms / 1000)
        if call.decode_ms is not None:
            self.decode.labels(*labels).observe(call.decode_ms / 1000)
        if call.engine_queue_ms is not None:
            self.engine_queue.labels(labels[0], labels[1]).observe(call.engine_queue_ms / 1000)
        if call.engine_prefill_ms is not None:
            self.engine_prefill.labels(labels[0], labels[1]).observe(call.engine_prefill_ms / 1000)
        if call.e2e_ms is not None:
            self.e2e.labels(*labels).observe(call.e2e_ms / 1000)
        self.overhead.labels(labels[0], labels[1], labels[4]).observe(call.overhead_s)

    def add_collector(self, collector: Collector) -> None:
        """Register a collector that reads live state at scrape time."""
        self.registry.register(collector)


class CallbackCollector(Collector):
    """Builds metric families (gauges and counters of live state) from a callback at each scrape."""

    def __init__(self, read: Any) -> None:
        self._read = read

    def collect(self) -> Iterable[Metric]:
        """Yield the current families."""
        yield from self._read()
