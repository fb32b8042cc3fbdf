"""vLLM's Prometheus metrics (names, types, buckets, labels) fed by the simulated engine."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    generate_latest,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from simulator.metrics_histograms import RequestHistograms

FINISH_REASONS = ("stop", "length", "abort", "error", "repetition")


class EngineMetrics:
    """One registry per app; counters and histograms record the simulator's real traffic."""

    def __init__(
        self,
        model_name: str,
        engine: str,
        cache_labels: dict[str, str],
        running: Callable[[], float],
        waiting: Callable[[], float],
        kv_usage: Callable[[], float],
    ) -> None:
        self.registry = registry = CollectorRegistry()
        for collector in (GCCollector, PlatformCollector, ProcessCollector):
            collector(registry=registry)
        names = ["model_name", "engine"]
        values = (model_name, engine)

        def counter(name: str, doc: str) -> Counter:
            return Counter(name, doc, names, registry=registry)

        for name, doc in (
            (
                "vllm:estimated_flops_per_gpu",
                "Estimated number of floating point operations "
                "per GPU (for Model Flops Utilization calculations).",
            ),
            (
                "vllm:estimated_read_bytes_per_gpu",
                "Estimated number of bytes read from memory "
                "per GPU (for Model Flops Utilization calculations).",
            ),
            (
                "vllm:estimated_write_bytes_per_gpu",
                "Estimated number of bytes written to memory "
                "per GPU (for Model Flops Utilization calculations).",
            ),
        ):
            counter(name, doc).labels(*values)
        gauge = Gauge(
            "vllm:num_requests_running",
            "Number of requests in model execution batches.",
            names,
            registry=registry,
        )
        gauge.labels(*values).set_function(running)
        gauge = Gauge(
            "vllm:num_requests_waiting",
            "Number of requests waiting to be processed.",
            names,
            registry=registry,
        )
        gauge.labels(*values).set_function(waiting)
        by_reason = Gauge(
            "vllm:num_requests_waiting_by_reason",
            "Number of waiting requests by reason.",
            [*names, "reason"],
            registry=registry,
        )
        by_reason.labels(*values, "capacity").set_function(waiting)
        by_reason.labels(*values, "deferred").set(0)
        sleep = Gauge(
            "vllm:engine_sleep_state",
            "Engine sleep state; awake = 0 means engine "
            "is sleeping; awake = 1 means engine is awake.",
            [*names, "sleep_state"],
            registry=registry,
        )
        sleep.labels(*values, "awake").set(1)
        sleep.labels(*values, "weights_offloaded").set(0)
        sleep.labels(*values, "discard_all").set(0)
        gauge = Gauge(
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            names,
            registry=registry,
        )
        gauge.labels(*values).set_function(kv_usage)
        self.prefix_queries = counter(
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
        ).labels(*values)
        self.prefix_hits = counter(
            "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens."
        ).labels(*values)
        for name in (
            "external_prefix_cache_queries",
            "external_prefix_cache_hits",
            "mm_cache_queries",
            "mm_cache_hits",
        ):
            counter(f"vllm:{name}", name.replace("_", " ").capitalize() + ".").labels(*values)
        self.preemptions = counter(
            "vllm:num_preemptions", "Cumulative number of preemption from the engine."
        ).labels(*values)
        self.prompt_tokens = counter(
            "vllm:prompt_tokens", "Number of prefill tokens processed."
        ).labels(*values)
        by_source = Counter(
            "vllm:prompt_tokens_by_source",
            "Number of prompt tokens by source.",
            [*names, "source"],
            registry=registry,
        )
        self.prompt_computed = by_source.labels(*values, "local_compute")
        self.prompt_cache_hit = by_source.labels(*values, "local_cache_hit")
        by_source.labels(*values, "external_kv_transfer")
        self.prompt_cached = counter(
            "vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external)."
        ).labels(*values)
        cached_by_source = Counter(
            "vllm:prompt_tokens_cached_by_source",
            "Prefix-cache hit tokens by the cache tier that supplied them.",
            [*names, "source"],
            registry=registry,
        )
        self.prompt_cached_device = cached_by_source.labels(*values, "device")
        for tier in ("host", "p2p", "disk", "external_unspecified"):
            cached_by_source.labels(*values, tier)
        self.generation_tokens = counter(
            "vllm:generation_tokens", "Number of generation tokens processed."
        ).labels(*values)
        success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            [*names, "finished_reason"],
            registry=registry,
        )
        self.success = {reason: success.labels(*values, reason) for reason in FINISH_REASONS}
        rejections = Counter(
            "vllm:admission_rejections",
            "Number of admission attempts rejected by a queue limit, by reason.",
            ["model_name", "reason"],
            registry=registry,
        )
        for reason in ("max_num_queued_reqs", "max_num_queued_tokens"):
            rejections.labels(model_name, reason)
        self.histograms = RequestHistograms(registry, dict(zip(names, values, strict=True)))
        self.itl = self.histograms.itl
        self.iteration_tokens = self.histograms.iteration_tokens
        info = Gauge(
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            [*sorted(cache_labels), "engine"],
            registry=registry,
        )
        info.labels(*(cache_labels[k] for k in sorted(cache_labels)), engine).set(1)

    def record_scheduled(self, prompt_tokens: int, cached_tokens: int, queried: bool) -> None:
        """A sequence entered the running batch and had its prompt looked up in the cache."""
        self.prompt_tokens.inc(prompt_tokens)
        self.prompt_computed.inc(prompt_tokens - cached_tokens)
        if cached_tokens:
            self.prompt_cache_hit.inc(cached_tokens)
            self.prompt_cached.inc(cached_tokens)
            self.prompt_cached_device.inc(cached_tokens)
        if queried:
            self.prefix_queries.inc(prompt_tokens)
            self.prefix_hits.inc(cached_tokens)
        self.histograms.kv_computed.observe(prompt_tokens - cached_tokens)

    def record_request(self, n: int, max_tokens: int) -> None:
        """A request with `n` choices arrived at the engine."""
        self.histograms.params_n.observe(n)
        self.histograms.params_max_tokens.observe(max_tokens)

    def record_finished(
        self,
        reason: str,
        prompt_tokens: int,
        generated: int,
        max_tokens: int,
        phases: tuple[float, float, float, float, float],
    ) -> None:
        """A sequence ended; `phases` are arrival, scheduled, first and last token, end."""
        self.success[reason].inc()
        self.histograms.record_finished(prompt_tokens, generated, max_tokens, phases)

    def render(self) -> bytes:
        """The Prometheus text exposition of this app's registry."""
        return generate_latest(self.registry)
