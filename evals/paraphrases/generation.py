"""Generate paraphrases through the gateway, check and deduplicate them, store them pending."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from evals.errors import NotFoundError
from evals.gateway_client import ChatRequest, GatewayCallError, GatewayClient, eval_feature
from evals.paraphrases import repository as paraphrase_repo
from evals.paraphrases.prompt import paraphrase_messages, parse_paraphrase_list
from evals.paraphrases.text import rejection_reason, text_hash
from evals.paraphrases.views import GenerationOutcome, SkippedParaphrase
from evals.suite import Question
from evals.suites import repository as suite_repo
from evals.transaction import in_thread_transaction
from plumbline.models import EvalParaphrase

GENERATION_TEMPERATURE = 0.9
DEFAULT_COUNT = 20  # the suite schema's default paraphrases_per_question


@dataclass(frozen=True, slots=True)
class GenerationPlan:
    """Which questions to paraphrase, for which suite, with which model and team."""

    suite: str
    team: str
    team_id: int
    model: str
    default_count: int
    questions: tuple[tuple[int, Question], ...]


async def generate_paraphrases(
    sessions: sessionmaker[Session],
    client: GatewayClient,
    suite_id: int,
    *,
    team_id: int | None,
    n: int | None = None,
    question_keys: list[str] | None = None,
    model: str | None = None,
    concurrency: int = 4,
) -> list[GenerationOutcome]:
    """Ask the LLM for `n` paraphrases per question (default: the suite's count); store pending."""
    plan = await in_thread_transaction(sessions, _plan, suite_id, team_id, question_keys, model)
    gate = asyncio.Semaphore(concurrency)

    async def one(question_id: int, question: Question, count: int) -> GenerationOutcome:
        async with gate:
            return await _generate_one(sessions, client, plan, question_id, question, count)

    count = n if n is not None else plan.default_count
    return list(await asyncio.gather(*(one(qid, q, count) for qid, q in plan.questions)))


def _plan(
    session: Session,
    suite_id: int,
    team_id: int | None,
    keys: list[str] | None,
    model: str | None,
) -> GenerationPlan:
    suite = suite_repo.suite_by_id(session, suite_id, team_id)
    if suite is None:
        raise NotFoundError(f"No suite with id {suite_id} is visible to this key.", "suite")
    rows = suite_repo.questions_of(session, suite.id)
    if keys:
        unknown = sorted(set(keys) - {q.key for q in rows})
        if unknown:
            raise NotFoundError(
                f"Suite {suite.name} has no question {', '.join(unknown)}.", "questions"
            )
        rows = [q for q in rows if q.key in keys]
    return GenerationPlan(
        suite=suite.name,
        team=suite_repo.team_name(session, suite.team_id),
        team_id=suite.team_id,
        model=model or suite.model,
        default_count=int(suite.settings.get("paraphrases_per_question", DEFAULT_COUNT)),
        questions=tuple((q.id, Question.model_validate(q.spec)) for q in rows),
    )


async def _generate_one(
    sessions: sessionmaker[Session],
    client: GatewayClient,
    plan: GenerationPlan,
    question_id: int,
    question: Question,
    n: int,
) -> GenerationOutcome:
    outcome = GenerationOutcome(
        question_key=question.id, added=[], skipped=[], error=None, call_id=None
    )
    request = ChatRequest(
        model=plan.model,
        messages=paraphrase_messages(question, n),
        feature=f"{eval_feature(plan.suite)}:paraphrases",
        team=plan.team,
        temperature=GENERATION_TEMPERATURE,
        max_tokens=max(256, 80 * n),
    )
    try:
        completion = await client.chat(request)
        candidates = parse_paraphrase_list(completion.text)
    except (GatewayCallError, ValueError) as error:
        outcome.error = str(error)
        return outcome
    outcome.call_id = completion.call_id
    await in_thread_transaction(sessions, _store, plan, question_id, question, candidates, outcome)
    return outcome


def _store(
    session: Session,
    plan: GenerationPlan,
    question_id: int,
    question: Question,
    candidates: list[str],
    outcome: GenerationOutcome,
) -> None:
    known = {p.text_hash for p in paraphrase_repo.paraphrases_of_question(session, question_id)}
    for text in candidates:
        reason = rejection_reason(text, question.text)
        digest = text_hash(text)
        if reason is None and digest in known:
            reason = "duplicate of a stored paraphrase"
        if reason is not None:
            outcome.skipped.append(SkippedParaphrase(text=text, reason=reason))
            continue
        known.add(digest)
        row = paraphrase_repo.add_paraphrase(
            session,
            EvalParaphrase(
                question_id=question_id,
                team_id=plan.team_id,
                text=text,
                text_hash=digest,
                source="generated",
                status="pending",
                generator_call_id=outcome.call_id,
                generator_model=plan.model,
            ),
        )
        outcome.added.append(row.id)
