"""Eval services: suites, paraphrase review, runs (create, execute, resume, score) and reports.

The in-process runner (`execute_run`) is: `begin_run` (ids of unfinished samples) ->
`record_max_model_len` -> `execute_samples(ids)` -> `score_and_store(run_id)`. Celery tasks
(next issue) run the same steps, fanning `execute_samples` out over chunks of ids; every step
opens its own sessions and is safe to repeat.
"""

from evals.service.errors import (
    ConflictError,
    EvalServiceError,
    ForbiddenError,
    NotFoundError,
)
from evals.service.execution import (
    ExecutionPolicy,
    ExecutionReport,
    SampleOutcome,
    execute_samples,
)
from evals.service.limits import ConcurrencyLimits, SampleLimits
from evals.service.paraphrase_generation import GenerationOutcome, generate_paraphrases
from evals.service.paraphrase_review import (
    ParaphraseView,
    list_paraphrases,
    review_paraphrases,
)
from evals.service.run_creation import CreatedRun, create_run
from evals.service.run_report import load_run_score
from evals.service.run_scoring import score_and_store
from evals.service.run_start import begin_run, record_max_model_len
from evals.service.runner import RunnerOptions, RunOutcome, execute_run
from evals.service.suite_import import SuiteImport, import_suite, parse_suite, suite_definition
from evals.service.suite_lookup import find_suite

__all__ = [
    "ConcurrencyLimits",
    "ConflictError",
    "CreatedRun",
    "EvalServiceError",
    "ExecutionPolicy",
    "ExecutionReport",
    "ForbiddenError",
    "GenerationOutcome",
    "NotFoundError",
    "ParaphraseView",
    "RunOutcome",
    "RunnerOptions",
    "SampleLimits",
    "SampleOutcome",
    "SuiteImport",
    "begin_run",
    "create_run",
    "execute_run",
    "execute_samples",
    "find_suite",
    "generate_paraphrases",
    "import_suite",
    "list_paraphrases",
    "load_run_score",
    "parse_suite",
    "record_max_model_len",
    "review_paraphrases",
    "score_and_store",
    "suite_definition",
]
