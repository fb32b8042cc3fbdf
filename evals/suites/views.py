"""Suites as the CLI and the API show them: one declaration, the API's response models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class QuestionView(BaseModel):
    """A suite question and its paraphrases per review status."""

    model_config = ConfigDict(frozen=True)

    id: int
    key: str
    text: str
    answer_type: str | None
    paraphrases: dict[str, int]


class SuiteView(BaseModel):
    """A suite: settings, questions, paraphrase review state."""

    model_config = ConfigDict(frozen=True)

    id: int
    name: str
    team: str
    model: str
    revision: int
    settings: dict[str, Any]
    questions: list[QuestionView]
    paraphrases: dict[str, int]
