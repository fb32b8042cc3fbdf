"""Request bodies, path ids and list envelopes of /api/evals; the views are evals' own."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import BaseModel, Field

from evals.paraphrases.views import GenerationOutcome, ParaphraseView
from evals.runs.views import RunView
from evals.suites.views import SuiteView

INT32_MAX = 2**31 - 1
RowId = Annotated[int, Field(ge=1, le=INT32_MAX)]
IdPath = Annotated[int, Path(ge=1, le=INT32_MAX)]
IdQuery = Annotated[int | None, Query(ge=1, le=INT32_MAX)]


class SuiteList(BaseModel):
    """Suites visible to the caller."""

    data: list[SuiteView]


class SuiteImportOut(BaseModel):
    """The suite after an import, and what the import changed."""

    suite: SuiteView
    created: bool
    added: list[str]
    changed: list[str]
    retired: list[str]
    stale_paraphrases: int


class ParaphraseList(BaseModel):
    """Paraphrases of a suite."""

    data: list[ParaphraseView]


class GenerateRequest(BaseModel):
    """Paraphrases to ask the LLM for."""

    n: int | None = Field(default=None, ge=1, le=100, description="Per question; default: suite's")
    questions: list[str] | None = Field(default=None, description="Question ids; default: all")
    model: str | None = Field(
        default=None, max_length=256, description="Model that writes them; default: suite's"
    )


class GenerationList(BaseModel):
    """Generation outcomes per question."""

    data: list[GenerationOutcome]


class ReviewRequest(BaseModel):
    """Paraphrase ids to approve or reject."""

    ids: list[RowId] = Field(min_length=1, max_length=10_000)


class ReviewOut(BaseModel):
    """The ids whose status changed, and to what."""

    ids: list[int]
    status: str


class RunList(BaseModel):
    """Runs, newest first."""

    data: list[RunView]
