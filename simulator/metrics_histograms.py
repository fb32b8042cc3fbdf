"""vLLM's per-request and per-step histograms, with its bucket boundaries."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Histogram

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


class RequestHistograms:
    """Histograms observed when requests arrive, are scheduled, step and finish."""

    def __init__(self, registry: CollectorRegistry, labels: dict[str, str]) -> None:
        names, values = list(labels), list(labels.values())

        def make(name: str, doc: str, buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, doc, names, registry=registry, buckets=buckets).labels(*values)

        self.request_prompt_tokens = make(
            "vllm:request_prompt_tokens", "Number of prefill tokens processed.", _TOKENS
        )
        self.request_generation_tokens = make(
            "vllm:request_generation_tokens", "Number of generation tokens processed.", _TOKENS
        )
        self.iteration_tokens = make(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            _ITERATION_TOKENS,
        )
        self.max_generation_tokens = make(
            "vllm:request_max_num_generation_tokens",
            "Histogram of maximum number of requested generation tokens.",
            _TOKENS,
        )
        self.params_n = make("vllm:request_params_n", "Histogram of the n request parameter.", _N)
        self.params_max_tokens = make(
            "vllm:request_params_max_tokens",
            "Histogram of the max_tokens request parameter.",
            _TOKENS,
        )
        self.ttft = make(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            _TTFT_ALL,
        )
        self.itl = StepHistogram(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            labels,
            _ITL_ALL,
            registry,
        )
        self.tpot = make(
            "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            _ITL_ALL,
        )
        self.e2e = make(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            _PHASE_ALL,
        )
        self.queue = make(
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            _PHASE_ALL,
        )
        self.inference = make(
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            _PHASE_ALL,
        )
        self.prefill = make(
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            _PHASE_ALL,
        )
        self.decode = make(
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            _PHASE_ALL,
        )
        self.request_preemptions = make(
            "vllm:request_num_preemptions",
            "Histogram of the number of times a request was preempted.",
            _PREEMPTIONS,
        )
        self.kv_computed = make(
            "vllm:request_prefill_kv_computed_tokens",
            "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
            _TOKENS,
        )

    def record_finished(
        self,
        prompt_tokens: int,
        generated: int,
        max_tokens: int,
        phases: tuple[float, float, float, float, float],
    ) -> None:
        """A sequence ended; `phases` are arrival, scheduled, first and last token, end."""
        arrival, scheduled, first, last, end = phases
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
