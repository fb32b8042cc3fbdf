"""Answer parsing and equivalence: typed parses first, embeddings last."""

from evals.answers.keying import KeyedAnswers, key_answers, parse_answer, parse_expected
from evals.answers.number import NumberMention, NumberReading, find_numbers, read_number
from evals.answers.outcome import AnswerOutcome, ParsedAnswer, ParseFailure, outcome_columns
from evals.answers.semantic import MiniLmEmbedder, TextEmbedder, cluster_by_similarity
from plumbline.answers.normalize import answer_line, answer_region, normalize_text
from plumbline.answers.specs import (
    ANSWER_TYPES,
    AnswerSpec,
    ChoiceAnswer,
    ChoiceOption,
    ExpectedValue,
    JsonFieldAnswer,
    NumberAnswer,
    RegexAnswer,
    SemanticAnswer,
    TextAnswer,
)

__all__ = [
    "ANSWER_TYPES",
    "AnswerOutcome",
    "AnswerSpec",
    "ChoiceAnswer",
    "ChoiceOption",
    "ExpectedValue",
    "JsonFieldAnswer",
    "KeyedAnswers",
    "MiniLmEmbedder",
    "NumberAnswer",
    "NumberMention",
    "NumberReading",
    "ParseFailure",
    "ParsedAnswer",
    "RegexAnswer",
    "SemanticAnswer",
    "TextAnswer",
    "TextEmbedder",
    "answer_line",
    "answer_region",
    "cluster_by_similarity",
    "find_numbers",
    "key_answers",
    "normalize_text",
    "outcome_columns",
    "parse_answer",
    "parse_expected",
    "read_number",
]
