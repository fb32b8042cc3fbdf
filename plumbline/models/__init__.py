"""ORM models, one file per table, shared by gateway, evals, workers and migrations."""

from plumbline.models.alert import Alert
from plumbline.models.alert_evaluation import AlertEvaluation
from plumbline.models.alert_event import AlertEvent
from plumbline.models.alert_notification import AlertNotification
from plumbline.models.alert_state import AlertStateRow
from plumbline.models.api_key import ApiKey
from plumbline.models.audit_entry import AuditEntry
from plumbline.models.call import Call
from plumbline.models.call_body import CallBody
from plumbline.models.call_logprobs import CallLogprobs
from plumbline.models.eval_paraphrase import EvalParaphrase
from plumbline.models.eval_question import EvalQuestion
from plumbline.models.eval_question_result import EvalQuestionResult
from plumbline.models.eval_run import EvalRun
from plumbline.models.eval_run_finalization import EvalRunFinalization
from plumbline.models.eval_sample import EvalSample
from plumbline.models.eval_suite import EvalSuite
from plumbline.models.live_sample import LiveSample
from plumbline.models.logprob_vocab import LogprobVocab
from plumbline.models.response_owner import ResponseOwner
from plumbline.models.team import Team
from plumbline.models.usage_rollup import UsageRollup
from plumbline.models.usage_rollup_period import UsageRollupPeriod

__all__ = [
    "Alert",
    "AlertEvaluation",
    "AlertEvent",
    "AlertNotification",
    "AlertStateRow",
    "ApiKey",
    "AuditEntry",
    "Call",
    "CallBody",
    "CallLogprobs",
    "EvalParaphrase",
    "EvalQuestion",
    "EvalQuestionResult",
    "EvalRun",
    "EvalRunFinalization",
    "EvalSample",
    "EvalSuite",
    "LiveSample",
    "LogprobVocab",
    "ResponseOwner",
    "Team",
    "UsageRollup",
    "UsageRollupPeriod",
]
