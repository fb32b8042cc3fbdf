"""vLLM's Prometheus metrics (names, types, buckets, labels) fed by the simulated engine."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from simulator.config import PrefixCacheConfig
from simulator.step_histogram import StepHistogram

_TOKENS = (1, 2, 5, 10, 20, 50, 100, 200, 500)
_ITERATION_TOKENS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
_N = (1, 2, 5, 10, 20)
_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0)
_TTFT_ALL = (*_TTFT, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
_ITL_ALL = (*_ITL, 20.0, 40.0, 80.0)
_PHASE = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0)
_PHASE_ALL = (*_PHASE, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
_PREEMPTIONS = (1, 2, 3, 4, 5, 10, 20)
FINISH_REASONS = ("stop", "length", "abort", "error", "repetition")
_NONE_LABELS = (
    "cache_hit_alignment_tokens",
    "hash_block_size",
    "kv_cache_layout",
    "kv_offloading_size",
    "mamba_block_size",
    "mamba_page_size_padded",
    "num_cpu_blocks",
    "num_gpu_blocks_override",
    "prefix_match_unit",
    "skip_page_size_padded",
    "sliding_window",
)


def cache_config_labels(cache: PrefixCacheConfig, max_model_len: int) -> dict[str, str]:
    """Labels of `vllm:cache_config_info`, as vLLM 0.32 sets them, for this cache."""
    tokens = cache.block_size * cache.num_blocks
    labels = dict.fromkeys(_NONE_LABELS, "None")
    labels.update(
        {
            "_block_size_resolved": "True",
            "block_size": str(cache.block_size),
            "cache_dtype": "auto",
            "effective_attention_block_size": str(cache.block_size),
            "enable_mamba_shared_prefix_checkpoint": "False",
            "enable_prefix_caching": str(cache.enabled),
            "gpu_memory_utilization": "0.9",
            "is_attention_free": "False",
            "kv_sharing_fast_prefill": "False",
            "kv_cache_dtype_skip_layers": "[]",
            "kv_cache_max_concurrency": str(tokens / max_model_len),
            "kv_cache_memory_bytes": str(tokens * 131072),
            "kv_cache_size_tokens": str(tokens),
            "kv_offloading_backend": "native",
            "mamba_cache_dtype": "auto",
            "mamba_cache_mode": "none",
            "mamba_ssm_cache_dtype": "float32",
            "num_gpu_blocks": str(cache.num_blocks),
            "prefix_cache_retention_interval": "0",
            "prefix_caching_hash_algo": "sha256",
            "replayssm_buffer_len": "16",
            "swa_bounded_replay": "True",
            "use_kda_recoverssm": "False",
            "use_replayssm": "False",
            "user_specified_block_size": "False",
        }
    )
    return labels


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

        def histogram(name: str, doc: str, buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, doc, names, registry=registry, buckets=buckets)

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
        self.request_prompt_tokens = histogram(
            "vllm:request_prompt_tokens", "Number of prefill tokens processed.", _TOKENS
        ).labels(*values)
        self.request_generation_tokens = histogram(
            "vllm:request_generation_tokens", "Number of generation tokens processed.", _TOKENS
        ).labels(*values)
        self.iteration_tokens = histogram(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            _ITERATION_TOKENS,
        ).labels(*values)
        self.max_generation_tokens = histogram(
            "vllm:request_max_num_generation_tokens",
            "Histogram of maximum number of requested generation tokens.",
            _TOKENS,
        ).labels(*values)
        self.params_n = histogram(
            "vllm:request_params_n", "Histogram of the n request parameter.", _N
        ).labels(*values)
        self.params_max_tokens = histogram(
            "vllm:request_params_max_tokens",
            "Histogram of the max_tokens request parameter.",
            _TOKENS,
        ).labels(*values)
        self.ttft = histogram(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            _TTFT_ALL,
        ).labels(*values)
        self.itl = StepHistogram(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            dict(zip(names, values, strict=True)),
            _ITL_ALL,
            registry,
        )
        self.tpot = histogram(
            "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            _ITL_ALL,
        ).labels(*values)
        self.e2e = histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            _PHASE_ALL,
        ).labels(*values)
        self.queue = histogram(
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            _PHASE_ALL,
        ).labels(*values)
        self.inference = histogram(
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            _PHASE_ALL,
        ).labels(*values)
        self.prefill = histogram(
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            _PHASE_ALL,
        ).labels(*values)
        self.decode = histogram(
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            _PHASE_ALL,
        ).labels(*values)
        self.request_preemptions = histogram(
            "vllm:request_num_preemptions",
            "Histogram of the number of times a request was preempted.",
            _PREEMPTIONS,
        ).labels(*values)
        self.kv_computed = histogram(
            "vllm:request_prefill_kv_computed_tokens",
            "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
            _TOKENS,
        ).labels(*values)
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
        self.kv_computed.observe(prompt_tokens - cached_tokens)

    def record_request(self, n: int, max_tokens: int) -> None:
        """A request with `n` choices arrived at the engine."""
        self.params_n.observe(n)
        self.params_max_tokens.observe(max_tokens)

    def record_finished(
        self,
        reason: str,
        prompt_tokens: int,
        generated: int,
        max_tokens: int,
        phases: tuple[float, float, float, float, float],
    ) -> None:
        """A sequence ended; `phases` are arrival, scheduled, first and last token, end."""
        arrival, scheduled, first, last, end = phases
        self.success[reason].inc()
        self.request_prompt_tokens.observe(prompt_tokens)
        self.request_generation_tokens.observe(generated)
        self.max_generation_tokens.observe(max_tokens)
        self.request_preemptions.observe(0)
        self.e2e.observe(end - arrival)
        self.queue.observe(max(scheduled, arrival) - arrival)
        if generated:
            self.ttft.observe(first - arrival)
            self.prefill.observe(first - scheduled)
            self.decode.observe(last - first)
            self.inference.observe(last - scheduled)
            self.tpot.observe((last - first) / (generated - 1) if generated > 1 else 0.0)

    def render(self) -> bytes:
        """The Prometheus text exposition of this app's registry."""
        return generate_latest(self.registry)
