"""The metric names dashboards and alert rules may use, by who exports them.

GATEWAY_SIDE is what `gateway/metrics.py` and `gateway/lifecycle.py` export today; the tests check
it against a live gateway's /metrics after traffic, so this list cannot drift from the code.
WORKER_SIDE are the answer-stability gauges the eval workers' results feed into the gateway's
/metrics (issue 7, workers part); until that work lands they are taken from this list, and the
list is checked against a live gateway once it does. PROMETHEUS_SIDE are series Prometheus makes
itself (scrape health, alert state).
"""

from __future__ import annotations

GATEWAY_SIDE = frozenset(
    {
        "plumbline_calls_total",
        "plumbline_errors_total",
        "plumbline_tokens_total",
        "plumbline_cost_total",
        *(
            f"{histogram}_{suffix}"
            for histogram in (
                "plumbline_ttft_seconds",
                "plumbline_itl_seconds",
                "plumbline_e2e_seconds",
                "plumbline_overhead_seconds",
                "plumbline_decode_seconds",
                "plumbline_engine_queue_seconds",
                "plumbline_engine_prefill_seconds",
                "gen_ai_client_token_usage",
                "gen_ai_server_time_to_first_token",
                "gen_ai_server_time_per_output_token",
            )
            for suffix in ("bucket", "sum", "count")
        ),
        "plumbline_sink_queue_depth",
        "plumbline_sink_database_up",
        "plumbline_sink_records_total",
        "plumbline_sink_quarantined_rows_total",
        "plumbline_logprob_v3_fallbacks_total",
        "plumbline_trace_spans_exported_total",
        "plumbline_trace_spans_dropped_total",
        "plumbline_otlp_metric_exports_total",
        "plumbline_otlp_metric_overflow_total",
        "plumbline_spool_pending_files",
        "plumbline_backend_up",
        "plumbline_backend_in_flight",
        "plumbline_backend_engine",
        # Exported once a budget has been charged (the stack gives team-b one).
        "plumbline_budget_spend",
        "plumbline_budget_limit",
    }
)

WORKER_SIDE = frozenset(
    {
        "plumbline_eval_agreement",
        "plumbline_eval_agreement_lower",
        "plumbline_eval_agreement_upper",
        "plumbline_eval_question_agreement",
        "plumbline_eval_threshold",
        "plumbline_eval_last_run_timestamp_seconds",
        "plumbline_alerts_firing",
        "plumbline_live_agreement",
    }
)

PROMETHEUS_SIDE = frozenset({"up", "ALERTS"})

# Values of plumbline_backend_engine's `gauge` label (vLLM gauges the health monitor scrapes).
ENGINE_GAUGES = frozenset({"running", "waiting", "kv_cache_usage"})
