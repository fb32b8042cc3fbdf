"""ORM models, one file per table, shared by gateway, evals, workers and migrations."""

from plumbline.models.api_key import ApiKey
from plumbline.models.call import Call
from plumbline.models.call_body import CallBody
from plumbline.models.call_logprobs import CallLogprobs
from plumbline.models.eval_paraphrase import EvalParaphrase
from plumbline.models.eval_question import EvalQuestion
from plumbline.models.eval_question_result import EvalQuestionResult
from plumbline.models.eval_run import EvalRun
from plumbline.models.eval_sample import EvalSample
from plumbline.models.eval_suite import EvalSuite
from plumbline.models.team import Team

__all__ = [
    "ApiKey",
    "Call",
    "CallBody",
    "CallLogprobs",
    "EvalParaphrase",
    "EvalQuestion",
    "EvalQuestionResult",
    "EvalRun",
    "EvalSample",
    "EvalSuite",
    "Team",
]
