"""Request and response models of the eval API under /api/evals."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import BaseModel, Field

INT32_MAX = 2**31 - 1
RowId = Annotated[int, Field(ge=1, le=INT32_MAX)]
IdPath = Annotated[int, Path(ge=1, le=INT32_MAX)]
IdQuery = Annotated[int | None, Query(ge=1, le=INT32_MAX)]


class QuestionOut(BaseModel):
    """A suite question and its paraphrases per review status."""

    id: int
    key: str
    text: str
    answer_type: str | None
    paraphrases: dict[str, int]


class SuiteOut(BaseModel):
    """A suite: settings, questions, paraphrase review state."""

    id: int
    name: str
    team: str
    model: str
    revision: int
    settings: dict[str, Any]
    questions: list[QuestionOut]
    paraphrases: dict[str, int]


class SuiteList(BaseModel):
    """Suites visible to the caller."""

    data: list[SuiteOut]


class SuiteImportOut(BaseModel):
    """The suite after an import, and what the import changed."""

    suite: SuiteOut
    created: bool
    added: list[str]
    changed: list[str]
    retired: list[str]
    stale_paraphrases: int


class ParaphraseOut(BaseModel):
    """A paraphrase in the review queue."""

    id: int
    question_key: str
    text: str
    status: str
    source: str
    generator_model: str | None
    generator_call_id: str | None


class ParaphraseList(BaseModel):
    """Paraphrases of a suite."""

    data: list[ParaphraseOut]


class GenerateRequest(BaseModel):
    """Paraphrases to ask the LLM for."""

    n: int | None = Field(default=None, ge=1, le=100, description="Per question; default: suite's")
    questions: list[str] | None = Field(default=None, description="Question ids; default: all")
    model: str | None = Field(
        default=None, max_length=256, description="Model that writes them; default: suite's"
    )


class SkippedParaphrase(BaseModel):
    """A generated candidate that was dropped, and why."""

    text: str
    reason: str


class GenerationOut(BaseModel):
    """What came of one question's generation."""

    question_key: str
    added: list[int]
    skipped: list[SkippedParaphrase]
    error: str | None
    call_id: str | None


class GenerationList(BaseModel):
    """Generation outcomes per question."""

    data: list[GenerationOut]


class ReviewRequest(BaseModel):
    """Paraphrase ids to approve or reject."""

    ids: list[RowId] = Field(min_length=1, max_length=10_000)


class ReviewOut(BaseModel):
    """The ids whose status changed, and to what."""

    ids: list[int]
    status: str


class RunOut(BaseModel):
    """A run: status, sample counts and, once scored, its summary."""

    id: int
    suite_id: int
    suite: str
    status: str
    trigger: str
    model: str
    n_samples: int
    samples: dict[str, int]
    created_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    scheduled_for: datetime | None
    baseline_run_id: int | None
    summary: dict[str, Any] | None
    error: str | None


class RunList(BaseModel):
    """Runs, newest first."""

    data: list[RunOut]


class RunDetail(RunOut):
    """A run with its per-question results and first-divergent-token reports."""

    questions: list[dict[str, Any]]
