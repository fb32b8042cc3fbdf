"""Answer-type specifications as they appear under `answer:` in a suite's YAML."""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from plumbline.answers.normalize import normalize_text
from plumbline.answers.units import find_unit

_STRICT = ConfigDict(extra="forbid", frozen=True)


class NumberAnswer(BaseModel):
    """A number, compared with `math.isclose`, optionally in a unit (converted when possible)."""

    model_config = _STRICT
    type: Literal["number"] = "number"
    unit: str | None = None
    abs_tol: float = Field(0.0, ge=0)
    rel_tol: float = Field(1e-9, ge=0, lt=1)
    format_instruction: str | None = None

    @field_validator("unit")
    @classmethod
    def _known_unit(cls, unit: str | None) -> str | None:
        if unit is not None and find_unit(unit) is None:
            raise ValueError(f"unknown unit {unit!r}")
        return unit


class ChoiceOption(BaseModel):
    """One allowed choice and the other spellings that mean it."""

    model_config = _STRICT
    value: str = Field(min_length=1)
    aliases: tuple[str, ...] = ()


class ChoiceAnswer(BaseModel):
    """One of a fixed set of options, each with aliases."""

    model_config = _STRICT
    type: Literal["choice"] = "choice"
    options: tuple[ChoiceOption, ...] = Field(min_length=2)
    format_instruction: str | None = None

    @field_validator("options", mode="before")
    @classmethod
    def _plain_strings(cls, options: object) -> object:
        if isinstance(options, list):
            return [{"value": o} if isinstance(o, str) else o for o in options]
        return options

    @model_validator(mode="after")
    def _distinct_spellings(self) -> ChoiceAnswer:
        seen: dict[str, str] = {}
        for option in self.options:
            for spelling in (option.value, *option.aliases):
                norm = normalize_text(spelling)
                if not norm:
                    raise ValueError(f"option spelling {spelling!r} is empty once normalised")
                if seen.setdefault(norm, option.value) != option.value:
                    raise ValueError(f"{spelling!r} names both {seen[norm]!r} and {option.value!r}")
        return self


class RegexAnswer(BaseModel):
    """A regex searched in the text; the chosen group, normalised, is the answer."""

    model_config = _STRICT
    type: Literal["regex"] = "regex"
    pattern: str
    group: int | str = 1
    ignore_case: bool = True
    normalize: bool = True
    format_instruction: str | None = None

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid regex: {exc.msg}") from exc
        return pattern

    @model_validator(mode="after")
    def _group_exists(self) -> RegexAnswer:
        compiled = re.compile(self.pattern)
        if isinstance(self.group, int):
            if not 0 <= self.group <= compiled.groups:
                raise ValueError(f"group {self.group} not in pattern ({compiled.groups} groups)")
        elif self.group not in compiled.groupindex:
            raise ValueError(f"group {self.group!r} not in pattern")
        return self


class JsonFieldAnswer(BaseModel):
    """A field of a JSON object in the reply (fenced or bare), by dotted path."""

    model_config = _STRICT
    type: Literal["json_field"] = "json_field"
    path: str = Field(pattern=r"^[^.\s]+(\.[^.\s]+)*$")
    normalize: bool = True
    format_instruction: str | None = None


class TextAnswer(BaseModel):
    """Short free text compared after SQuAD normalisation."""

    model_config = _STRICT
    type: Literal["text"] = "text"
    format_instruction: str | None = None


class SemanticAnswer(BaseModel):
    """Free text clustered by embedding cosine similarity (discrete semantic entropy)."""

    model_config = _STRICT
    type: Literal["semantic"] = "semantic"
    threshold: float = Field(0.85, gt=0, lt=1)
    guard_numbers: bool = True
    guard_negation: bool = True
    format_instruction: str | None = None


AnswerSpec = Annotated[
    NumberAnswer | ChoiceAnswer | RegexAnswer | JsonFieldAnswer | TextAnswer | SemanticAnswer,
    Field(discriminator="type"),
]
ANSWER_TYPES = ("number", "choice", "regex", "json_field", "text", "semantic")
ExpectedValue = str | int | float | bool


def expected_as_text(expected: ExpectedValue) -> str:
    """An expected value as the text a parser reads (JSON for non-strings)."""
    return expected if isinstance(expected, str) else json.dumps(expected)
