"""The suite: what to ask, how to sample, how to read the answers, when to alert."""

from __future__ import annotations

from typing import Literal

from croniter import croniter
from pydantic import BaseModel, ConfigDict, Field, field_validator

from evals.alerting.policy import AlertPolicy, LevelRule
from plumbline.answers.specs import AnswerSpec, ExpectedValue

_STRICT = ConfigDict(extra="forbid", frozen=True)
SeedPolicy = Literal["none", "fixed", "per_sample"]


class SamplingParams(BaseModel):
    """Sampling parameters sent with every request of the suite."""

    model_config = _STRICT
    temperature: float = Field(0.7, ge=0, le=2)
    top_p: float = Field(1.0, gt=0, le=1)
    max_tokens: int = Field(512, ge=1, le=1_000_000)
    seed_policy: SeedPolicy = "none"
    seed: int = Field(0, ge=0, lt=2**31)


class Question(BaseModel):
    """One high-stakes question, how to read its answer and, optionally, the right answer."""

    model_config = _STRICT
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
    text: str = Field(min_length=1)
    context: str | None = None
    answer: AnswerSpec
    expected: ExpectedValue | None = None
    critical: bool = False
    paraphrases: tuple[str, ...] = ()

    @field_validator("paraphrases")
    @classmethod
    def _non_empty(cls, paraphrases: tuple[str, ...]) -> tuple[str, ...]:
        if any(not p.strip() for p in paraphrases):
            raise ValueError("a paraphrase is empty")
        return paraphrases


class Suite(BaseModel):
    """An answer-stability suite: questions x paraphrases x samples against one model."""

    model_config = _STRICT
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    team: str = Field(min_length=1)
    model: str = Field(min_length=1)
    description: str | None = None
    sampling: SamplingParams = Field(default_factory=SamplingParams)
    greedy: bool = False
    paraphrases_per_question: int = Field(20, ge=1, le=1000)
    samples_per_paraphrase: int = Field(5, ge=1, le=1000)
    threshold: float = Field(0.90, gt=0, lt=1)
    schedule: str | None = None
    alert: AlertPolicy = Field(default_factory=AlertPolicy)
    questions: tuple[Question, ...] = Field(min_length=1)

    @field_validator("schedule")
    @classmethod
    def _cron(cls, schedule: str | None) -> str | None:
        if schedule is not None and not croniter.is_valid(schedule):
            raise ValueError(f"invalid cron expression {schedule!r}")
        return schedule

    def alert_policy(self) -> AlertPolicy:
        """The alert policy with rule thresholds the suite leaves unset taken from `threshold`."""
        return self.alert.model_copy(
            update={
                "suite": self._inherit(self.alert.suite),
                "critical": self._inherit(self.alert.critical),
            }
        )

    def _inherit(self, rule: LevelRule) -> LevelRule:
        if "threshold" in rule.model_fields_set:
            return rule
        return LevelRule.model_validate(
            {**rule.model_dump(exclude_unset=True), "threshold": self.threshold}
        )

    def question(self, question_id: str) -> Question:
        """The question with this id."""
        for question in self.questions:
            if question.id == question_id:
                return question
        raise KeyError(question_id)
