"""The chat prompt sent for one (question, paraphrase) pair."""

from __future__ import annotations

from dataclasses import dataclass

from evals.answers import (
    AnswerSpec,
    ChoiceAnswer,
    JsonFieldAnswer,
    NumberAnswer,
    RegexAnswer,
    SemanticAnswer,
)
from evals.suite.schema import Question

SYSTEM_PROMPT = (
    "You answer questions precisely and briefly. When a document is given, answer only from "
    "that document; if it does not contain the answer, say so."
)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One chat message."""

    role: str
    content: str


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The messages of one request."""

    messages: tuple[ChatMessage, ...]

    def as_openai(self) -> list[dict[str, str]]:
        """The `messages` list of a chat completions request."""
        return [{"role": m.role, "content": m.content} for m in self.messages]


def format_instruction(spec: AnswerSpec) -> str:
    """How the reply must state its answer so the answer type's parser can read it."""
    if spec.format_instruction:
        return spec.format_instruction
    if isinstance(spec, NumberAnswer):
        unit = f" {spec.unit}" if spec.unit else ""
        return f"End with a final line `Answer: <number>{unit}` that gives only the number."
    if isinstance(spec, ChoiceAnswer):
        options = ", ".join(o.value for o in spec.options)
        return (
            f"End with a final line `Answer: <choice>` where <choice> is exactly one of: {options}."
        )
    if isinstance(spec, JsonFieldAnswer):
        return f"Reply with a JSON object in a ```json code block; put the answer in `{spec.path}`."
    if isinstance(spec, SemanticAnswer):
        return "End with a final line `Answer: <one sentence>` that states the answer."
    if isinstance(spec, RegexAnswer):
        return "End with a final line `Answer: <your answer>`."
    return "End with a final line `Answer: <answer>` that gives only the answer, in a few words."


def render_prompt(question: Question, paraphrase: str | None = None) -> RenderedPrompt:
    """System and user messages for the question worded as `paraphrase` (default: canonical)."""
    wording = (paraphrase if paraphrase is not None else question.text).strip()
    parts = []
    if question.context:
        parts.append(f"Document:\n<document>\n{question.context.strip()}\n</document>")
    parts.append(f"Question: {wording}")
    parts.append(format_instruction(question.answer))
    return RenderedPrompt(
        (ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", "\n\n".join(parts)))
    )
