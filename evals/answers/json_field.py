"""JSON-field answers: a dotted path into JSON found in the reply (```json fences or bare)."""

from __future__ import annotations

import json
import re

from evals.answers.outcome import AnswerOutcome, ParsedAnswer, ParseFailure
from plumbline.answers.normalize import normalize_text
from plumbline.answers.specs import JsonFieldAnswer

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_INDEX = re.compile(r"\[(\d+)\]")
_MISSING = object()


def parse_json_field(spec: JsonFieldAnswer, text: str) -> AnswerOutcome:
    """The value at the spec's path in the first JSON document of the reply that has it."""
    documents = list(_json_documents(text))
    if not documents:
        return ParseFailure("no JSON found")
    for document in documents:
        value = field_at(document, spec.path)
        if value is not _MISSING:
            return key_for_value(spec, value)
    return ParseFailure(f"path {spec.path!r} not found in the JSON")


def field_at(document: object, path: str) -> object:
    """The value at a dotted path (`a.b.0` or `a.b[0]`), or a sentinel when absent."""
    node = document
    for part in _INDEX.sub(r".\1", path).split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def key_for_value(spec: JsonFieldAnswer, value: object) -> AnswerOutcome:
    """The key of a JSON value: normalised text for strings, canonical JSON otherwise."""
    if isinstance(value, str):
        key = normalize_text(value) if spec.normalize else value.strip()
        return ParsedAnswer(key) if key else ParseFailure("field is an empty string")
    if value is None:
        return ParseFailure("field is null")
    return ParsedAnswer(json.dumps(_integral(value), sort_keys=True, separators=(",", ":")))


def _integral(value: object) -> object:
    # 12 and 12.0 are the same answer.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral(v) for v in value]
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    return value


def _json_documents(text: str) -> list[object]:
    found: list[object] = []
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block))
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    position = 0
    while (start := _next_opening(text, position)) >= 0:
        try:
            document, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        found.append(document)
        position = end
    return found


def _next_opening(text: str, position: int) -> int:
    starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
    return min(starts) if starts else -1
