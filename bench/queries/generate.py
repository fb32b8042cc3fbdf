"""Millions of call rows in Postgres, fast: INSERT ... SELECT generate_series, one day at a time."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import psycopg

from gateway.recording.calls_repository import ensure_day_partitions
from plumbline.db import create_db_engine

TEAMS = tuple(f"team-{c}" for c in "abcdefgh")
FEATURES = (
    *("chat", "search", "contracts", "claims", "summaries", "triage"),
    *("extraction", "translation", "support", "code", "eval:contracts", "resample:chat"),
)
MODELS = ("tiny", "llama-3.1-8b", "llama-3.1-70b", "qwen-2.5-32b")

# Every column the dashboards or the usage endpoint read, with plausible spreads: 1% 429,
# 2% 503, 1% cancelled, half streamed, prompts of 50-2,000 tokens, answers of 20-600. Each
# feature calls one API, as a product feature does: 2 of 12 Responses, 2 completions, 8 chat.
ROWS_SQL = """
INSERT INTO calls (
  id, created_at, retention_days, request_id, team_id, key_id, feature, end_user, source,
  endpoint, model, backend, stream, n, temperature, seed, max_tokens, status_code, cancelled,
  error_type, finish_reason, prompt_tokens, completion_tokens, cached_tokens, usage_source,
  ttft_ms, decode_ms, itl_mean_ms, itl_p50_ms, itl_p95_ms, itl_max_ms, e2e_ms, overhead_ms,
  engine_queue_ms, engine_prefill_ms, engine_decode_ms, engine_itl_ms, input_cost, output_cost,
  flops_estimate, decode_floor_ms, logprob_mode, logprob_mean, logprob_min_margin, near_ties)
SELECT
  md5(g::text), %(start)s::timestamptz + (g - %(first)s::bigint) * %(step)s::interval, 0,
  'req-' || g, r.team, r.team, (%(features)s::text[])[r.feature], 'user-' || (g %% 5000),
  CASE WHEN g %% 50 = 0 THEN 'eval' ELSE 'product' END,
  CASE r.feature %% 6 WHEN 0 THEN '/v1/responses' WHEN 1 THEN '/v1/completions'
    ELSE '/v1/chat/completions' END,
  (%(models)s::text[])[r.model], 'vllm-' || (g %% 4),
  g %% 2 = 0, 1, 0.7, g, 512, s.status, s.cancelled,
  CASE WHEN s.status >= 400 THEN 'upstream_error' END,
  CASE WHEN s.status < 400 THEN 'stop' END,
  p.prompt, p.completion, p.prompt / 3, 'backend',
  40 + random() * 200, p.completion * (8 + random() * 4), 10 + random() * 2, 10 + random(),
  14 + random() * 4, 30 + random() * 40, 60 + p.completion * 11 + random() * 100,
  0.2 + random() * 0.5, random() * 20, 20 + random() * 100, p.completion * 10, 10 + random() * 2,
  p.prompt * 0.5e-6, p.completion * 1.5e-6, 16e9 * (p.prompt + p.completion),
  p.completion * 4.8, 'raw_logprobs', -0.3 - random() * 0.5, random() * 0.4,
  (random() * 3)::int
FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS g
-- Referencing g makes the subquery (and its random()) run once per row.
CROSS JOIN LATERAL (
  SELECT (%(teams)s::int[])[1 + floor(random() * %(team_count)s)::int + 0 * g] AS team,
         1 + floor(random() * %(feature_count)s)::int AS feature,
         1 + floor(random() * %(model_count)s)::int AS model
) r
CROSS JOIN LATERAL (SELECT 50 + (g * 31) %% 1950 AS prompt, 20 + (g * 17) %% 580 AS completion) p
CROSS JOIN LATERAL (
  SELECT CASE WHEN g %% 100 = 1 THEN 429 WHEN g %% 50 = 3 THEN 503 ELSE 200 END AS status,
         g %% 100 = 7 AS cancelled
) s
"""


def _partitions(url: str, start: datetime, days: int) -> None:
    engine = create_db_engine(url)
    try:
        with engine.begin() as connection:
            slots = {((start + timedelta(days=d)).date(), 0) for d in range(days + 2)}
            ensure_day_partitions(connection, slots)
    finally:
        engine.dispose()


def populate(
    url: str, team_ids: list[int], rows: int, days: int = 30, until: datetime | None = None
) -> float:
    """Insert `rows` calls of these teams spread evenly over the `days` up to `until`; seconds."""
    until = until or datetime.now(UTC)
    start = until - timedelta(days=days)
    began = time.perf_counter()
    _partitions(url, start, days)
    per_day = rows / days
    constants = {
        "step": timedelta(days=1) / max(per_day, 1),
        "teams": team_ids,
        "team_count": len(team_ids),
        "features": list(FEATURES),
        "feature_count": len(FEATURES),
        "models": list(MODELS),
        "model_count": len(MODELS),
    }
    with psycopg.connect(url, autocommit=True) as connection:
        for index in range(days):
            first, last = round(index * per_day), round((index + 1) * per_day) - 1
            day = {"start": start + timedelta(days=index), "first": first, "last": last}
            connection.execute(ROWS_SQL, {**constants, **day})
            print(f"day {index + 1} of {days}: rows {first:,}..{last:,}", flush=True)
        connection.execute("VACUUM ANALYZE calls")
    return time.perf_counter() - began
