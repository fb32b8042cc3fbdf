"""An eval run as one trace: its ids, its spans, and their export over OTLP/HTTP."""

from evals.run_trace.export import RunTracing, run_tracing_from_env
from evals.run_trace.ids import question_span_id
from evals.run_trace.spans import QuestionFacts, RunFacts, run_spans

__all__ = [
    "QuestionFacts",
    "RunFacts",
    "RunTracing",
    "question_span_id",
    "run_spans",
    "run_tracing_from_env",
]
