"""The prompt that asks an LLM for paraphrases, and reading its JSON list back."""

from __future__ import annotations

import json
import re

from evals.suite import Question

SYSTEM = (
    "You write paraphrases of questions for a test of whether an assistant answers consistently. "
    "Each paraphrase must ask for exactly the same information as the original, so that the "
    "correct answer is identical: keep every name, number, clause reference and constraint. "
    "Vary wording, word order, register and sentence structure. Do not answer the question. "
    "Reply with only a JSON array of strings."
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def paraphrase_messages(question: Question, n: int) -> list[dict[str, str]]:
    """Chat messages asking for `n` paraphrases of the question (its document is not sent)."""
    user = (
        f"Original question:\n{question.text.strip()}\n\n"
        f"Write {n} different paraphrases of the original question. "
        f'Reply with a JSON array of {n} strings, like ["...", "..."].'
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_paraphrase_list(reply: str) -> list[str]:
    """The strings of the first JSON array in the reply; raises ValueError saying why not."""
    fenced = _FENCE.search(reply)
    text = fenced.group(1) if fenced else reply
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        raise ValueError(f"the reply holds no JSON array: {reply[:120]!r}")
    try:
        items = json.loads(text[start : end + 1])
    except json.JSONDecodeError as error:
        raise ValueError(f"the reply's JSON array does not parse ({error.msg})") from None
    if not isinstance(items, list):
        raise ValueError("the reply's JSON is not an array")
    return [item.strip() for item in items if isinstance(item, str) and item.strip()]
