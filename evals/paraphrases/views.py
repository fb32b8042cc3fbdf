"""Paraphrases as the CLI and the API show them: one declaration, the API's response models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ParaphraseView(BaseModel):
    """A paraphrase in the review queue."""

    model_config = ConfigDict(frozen=True)

    id: int
    question_key: str
    text: str
    status: str
    source: str
    generator_model: str | None
    generator_call_id: str | None


class SkippedParaphrase(BaseModel):
    """A generated candidate that was dropped, and why."""

    model_config = ConfigDict(frozen=True)

    text: str
    reason: str


class GenerationOutcome(BaseModel):
    """What came of one question's generation."""

    question_key: str
    added: list[int]
    skipped: list[SkippedParaphrase]
    error: str | None
    call_id: str | None
