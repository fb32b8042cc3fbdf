"""Routes: list, generate, approve and reject a suite's paraphrases."""

from __future__ import annotations

from fastapi import APIRouter, Request

from evals.paraphrases.generation import generate_paraphrases
from evals.paraphrases.review import list_paraphrases, review_paraphrases
from gateway.api.deps import EvalsCallerDep, SessionDep, StateDep, team_scope
from gateway.api.eval_calls import eval_client
from gateway.api.eval_errors import gateway_errors
from gateway.api.eval_schemas import (
    GenerateRequest,
    GenerationList,
    IdPath,
    ParaphraseList,
    ReviewOut,
    ReviewRequest,
)
from gateway.governance.model_refusal import require_model

router = APIRouter(prefix="/api/evals", tags=["evals"])


@router.get("/suites/{suite_id}/paraphrases", response_model=ParaphraseList)
def list_suite_paraphrases(
    suite_id: IdPath, caller: EvalsCallerDep, session: SessionDep, status: str | None = None
) -> ParaphraseList:
    """A suite's paraphrases, optionally of one status (pending, approved, rejected, stale)."""
    with gateway_errors():
        views = list_paraphrases(session, suite_id, team_id=team_scope(caller), status=status)
    return ParaphraseList(data=views)


@router.post("/suites/{suite_id}/paraphrases/generate", response_model=GenerationList)
async def generate_suite_paraphrases(
    suite_id: IdPath,
    body: GenerateRequest,
    request: Request,
    caller: EvalsCallerDep,
    state: StateDep,
) -> GenerationList:
    """Ask an LLM through this gateway for paraphrases; they are stored as pending."""
    if body.model is not None:
        require_model(body.model, caller.models, state.config.model_names)
    with gateway_errors():
        async with eval_client(request) as client:
            outcomes = await generate_paraphrases(
                state.sessions,
                client,
                suite_id,
                team_id=team_scope(caller),
                n=body.n,
                question_keys=body.questions,
                model=body.model or state.settings.eval.paraphrase_model,
            )
    return GenerationList(data=outcomes)


@router.post("/paraphrases/approve", response_model=ReviewOut)
def approve(body: ReviewRequest, caller: EvalsCallerDep, session: SessionDep) -> ReviewOut:
    """Approve paraphrases: later runs send them, in order of approval."""
    with gateway_errors():
        ids = review_paraphrases(session, body.ids, "approved", team_id=team_scope(caller))
    return ReviewOut(ids=ids, status="approved")


@router.post("/paraphrases/reject", response_model=ReviewOut)
def reject(body: ReviewRequest, caller: EvalsCallerDep, session: SessionDep) -> ReviewOut:
    """Reject paraphrases: they are never sent."""
    with gateway_errors():
        ids = review_paraphrases(session, body.ids, "rejected", team_id=team_scope(caller))
    return ReviewOut(ids=ids, status="rejected")
