"""ORM models, one file per table, shared by gateway, evals, workers and migrations."""

from plumbline.models.api_key import ApiKey
from plumbline.models.call import Call
from plumbline.models.call_body import CallBody
from plumbline.models.call_logprobs import CallLogprobs
from plumbline.models.team import Team

__all__ = ["ApiKey", "Call", "CallBody", "CallLogprobs", "Team"]
