"""Redact what the sink stores: request and response bodies, SSE streams, logprob documents.

JSON is redacted value by value (so a secret escaped as `\\u0040` is still found); generated
text is redacted as one text per output (choice, Responses output part, Messages content block)
even when it arrives as deltas or tokens, so a secret cut across chunks is caught, and the
logprob alternatives at its positions are masked too.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import orjson

from gateway.config import RedactionConfig
from gateway.recording.redaction import Redactor
from gateway.recording.stream_events import NOT_JSON, Slot, output_pieces, sse_events

MASK = "[REDACTED]"
MAX_DEPTH = 200  # below orjson's limit for writing (254); deeper documents are redacted as text
MAX_KEPT_LENGTH, MAX_KEPT_TEXTS = 64, 4096  # the short strings a stream's walk remembers


class _TooDeep(Exception):
    """A document nests deeper than MAX_DEPTH."""


class _Texts(Protocol):
    """Whatever redacts one string."""

    def text(self, text: str) -> str: ...


class _RepeatedTexts:
    """A redactor that keeps its answers for short strings: a stream repeats them every event."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._known: dict[str, str] = {}

    def text(self, text: str) -> str:
        if len(text) > MAX_KEPT_LENGTH:
            return self._redactor.text(text)
        known = self._known.get(text)
        if known is None:
            known = self._redactor.text(text)
            if len(self._known) < MAX_KEPT_TEXTS:
                self._known[text] = known
        return known


def _walk(value: Any, redactor: _Texts, depth: int = 0) -> Any:
    if isinstance(value, str):
        return redactor.text(value)
    if depth > MAX_DEPTH:
        raise _TooDeep
    if isinstance(value, list):
        return [_walk(v, redactor, depth + 1) for v in value]
    if isinstance(value, dict):
        return {redactor.text(k): _walk(v, redactor, depth + 1) for k, v in value.items()}
    return value


def _redact_slots(slots: list[Slot], redactor: Redactor) -> set[int]:
    """Redact strings held in (container, key) slots as one text; the changed slot indices."""
    new, changed = redactor.pieces([container[key] for container, key in slots])
    for index in changed:
        container, key = slots[index]
        container[key] = new[index]
    return changed


def _mask_chat_entries(entries: list[Any], redactor: Redactor) -> bool:
    """Chat logprob entries: redact sampled tokens as text, mask alternatives where changed."""
    usable = [e for e in entries if isinstance(e, dict) and isinstance(e.get("token"), str)]
    changed = _redact_slots([(e, "token") for e in usable], redactor)
    for index in changed:
        entry = usable[index]
        if "bytes" in entry:
            entry["bytes"] = list(entry["token"].encode())
        for alternative in entry.get("top_logprobs") or ():
            if isinstance(alternative, dict):
                alternative["token"] = MASK
                alternative["bytes"] = list(MASK.encode())
    return bool(changed)


def _mask_completion(logprobs: dict[str, Any], redactor: Redactor) -> bool:
    """Completion logprobs: redact the `tokens` list as text, mask alternatives where changed."""
    tokens = logprobs.get("tokens")
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        return False
    changed = _redact_slots([(tokens, i) for i in range(len(tokens))], redactor)
    alternatives = logprobs.get("top_logprobs")
    if not isinstance(alternatives, list):
        alternatives = []
    for index in changed:
        if index < len(alternatives) and isinstance(alternatives[index], dict):
            values = list(alternatives[index].values())
            alternatives[index] = {MASK: values[0]} if values else {}
    return bool(changed)


def _mask_logprobs(logprobs: Any, redactor: Redactor) -> None:
    if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
        _mask_chat_entries(logprobs["content"], redactor)
    elif isinstance(logprobs, dict):
        _mask_completion(logprobs, redactor)


# A chat position as vLLM writes it, up to its alternatives: the sampled token, its logprob
# and bytes. JSON strings escape their quotes, so these bytes only match real structure.
_SAMPLED = re.compile(
    rb'\{"token":"([^"\\]*(?:\\.[^"\\]*)*)","logprob":[^,]*,"bytes":(?:\[[0-9,]*\]|null),'
)
_ALTERNATIVES = b'"top_logprobs":['
_TOKEN = b'{"token":"'
# Where one choice's list ends and the next begins: `}]` closes a choice's last position and
# list, and nowhere else is that followed by a key.
_NEXT_CHOICE = b'}],"'


def _choice_tokens(segment: bytes) -> list[str] | None:
    """One choice's sampled tokens, or None if a position is not laid out as vLLM does."""
    found = []
    # Each part but the last ends where a position's alternatives begin; the last `{"token":"`
    # in it starts that position (a later one would need an unescaped quote).
    for part in segment.split(_ALTERNATIVES)[:-1]:
        match = _SAMPLED.match(part, part.rfind(_TOKEN))
        if match is None or match.end() != len(part):
            return None
        found.append(match.group(1))
    return orjson.loads(b'["' + b'","'.join(found) + b'"]') if found else []


def _sampled_tokens(document: bytes) -> list[list[str]] | None:
    """Each choice's sampled tokens, read without parsing; None unless laid out as vLLM does."""
    choices = []
    for segment in document.split(_NEXT_CHOICE):
        tokens = _choice_tokens(segment)
        if tokens is None:
            return None
        choices.append(tokens)
    return choices


def _needs_masking(document: bytes, redactor: Redactor) -> bool:
    """Whether any choice's sampled text holds a secret (True when that cannot be read fast)."""
    try:
        choices = _sampled_tokens(document)
    except orjson.JSONDecodeError:
        return True
    if choices is None:
        return True
    return any(redactor.pieces(tokens)[1] for tokens in choices)


NO_LOGPROBS = b"{}"


def logprob_document(document: bytes, redactor: Redactor) -> bytes:
    """A stored `{"<choice>": logprobs}` document with secrets in its tokens masked."""
    # Parsing a 200-token top-5 document costs about a millisecond; almost none hold a secret.
    if not _needs_masking(document, redactor):
        return document
    try:
        parsed = orjson.loads(document)
    except orjson.JSONDecodeError:
        # Not JSON (invalid UTF-8 from a backend, say): no reader could read it back, and its
        # tokens cannot be checked for secrets. The call is stored; these logprobs are not.
        return NO_LOGPROBS
    if not isinstance(parsed, dict):
        return document
    changed = False
    for value in parsed.values():
        if isinstance(value, list):
            changed |= _mask_chat_entries(value, redactor)
        elif isinstance(value, dict):
            changed |= _mask_completion(value, redactor)
    return orjson.dumps(parsed) if changed else document


def _choices(obj: Any) -> list[Any]:
    """A response's or event's `choices`, or none: a backend may send anything there."""
    choices = obj.get("choices") if isinstance(obj, dict) else None
    return choices if isinstance(choices, list) else []


def _listed(value: Any, key: str) -> list[Any]:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, list) else []


def _mask_output_logprobs(obj: Any, redactor: Redactor) -> None:
    """Responses logprobs, one text per output part: of a response, or of an event's item/part."""
    response = obj.get("response") if isinstance(obj, dict) else None
    items = _listed(obj, "output") + _listed(response, "output")
    items += [obj["item"]] if isinstance(obj, dict) and "item" in obj else []
    parts = [part for item in items for part in _listed(item, "content")]
    parts += [obj["part"]] if isinstance(obj, dict) and "part" in obj else []
    for part in parts:
        if isinstance(part, dict) and isinstance(part.get("logprobs"), list):
            _mask_chat_entries(part["logprobs"], redactor)


def _response_object(obj: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    """A whole (non-streamed) response: logprobs as token text first, then every string."""
    for choice in _choices(obj):
        if isinstance(choice, dict):
            _mask_logprobs(choice.get("logprobs"), redactor)
    _mask_output_logprobs(obj, redactor)
    redacted: dict[str, Any] = _walk(obj, redactor)
    return redacted


def _stream(body: bytes, redactor: Redactor) -> str:
    """An SSE body: each output's text and logprob tokens redacted as one text across events."""
    events = sse_events(body.decode("utf-8", "replace"))
    pieces = output_pieces(events)
    for slots in pieces.texts.values():
        _redact_slots(slots, redactor)
    for entries in pieces.tokens.values():
        _mask_chat_entries(entries, redactor)
    for logprobs in pieces.completion_logprobs:
        _mask_completion(logprobs, redactor)
    out = []
    walker = _RepeatedTexts(redactor)
    for event in events:
        if event.data is NOT_JSON:
            out.append(redactor.text(event.raw))
            continue
        _mask_output_logprobs(event.data, redactor)
        name = f"event: {redactor.text(event.name)}\n" if event.name is not None else ""
        out.append(name + "data: " + orjson.dumps(_walk(event.data, walker)).decode())
    return "\n\n".join(out)


def request_body(body: bytes, redactor: Redactor) -> str:
    """A stored request body: JSON redacted value by value, anything else as text."""
    try:
        return orjson.dumps(_walk(orjson.loads(body), redactor)).decode()
    except (orjson.JSONDecodeError, _TooDeep):
        return redactor.text(body.decode("utf-8", "replace"))


def response_body(body: bytes, stream: bool, redactor: Redactor) -> str:
    """A stored response body, whole JSON or SSE stream."""
    try:
        if stream and body.lstrip().startswith((b"data:", b"event:")):
            return _stream(body, redactor)
        parsed = orjson.loads(body)
        if isinstance(parsed, dict):
            return orjson.dumps(_response_object(parsed, redactor)).decode()
        return orjson.dumps(_walk(parsed, redactor)).decode()
    except (orjson.JSONDecodeError, _TooDeep):
        return redactor.text(body.decode("utf-8", "replace"))


class RedactionPolicy:
    """What the writer applies to each stored text, built from the recording config."""

    def __init__(self, config: RedactionConfig) -> None:
        self.redactor = (
            Redactor(
                emails=config.emails,
                api_keys=config.api_keys,
                card_numbers=config.card_numbers,
                extra_patterns=config.extra_patterns,
            )
            if config.enabled
            else None
        )
        self.mask_logprobs = config.enabled and config.logprobs
        self.max_body_bytes = config.max_stored_body_bytes

    def request(self, body: bytes) -> str:
        """A request body as stored."""
        body = body[: self.max_body_bytes]
        if self.redactor is None:
            return body.decode("utf-8", "replace")
        return request_body(body, self.redactor)

    def response(self, body: bytes, stream: bool) -> str:
        """A response body (JSON or SSE) as stored."""
        body = body[: self.max_body_bytes]
        if self.redactor is None:
            return body.decode("utf-8", "replace")
        return response_body(body, stream, self.redactor)

    def logprobs(self, document: bytes) -> bytes:
        """A logprob document as stored."""
        if self.redactor is None or not self.mask_logprobs:
            return document
        return logprob_document(document, self.redactor)

    def logprob_choices(self, choices: dict[int, Any]) -> None:
        """Mask secrets in parsed per-choice logprobs, in place (chat lists, completion objects)."""
        if self.redactor is None or not self.mask_logprobs:
            return
        for value in choices.values():
            if isinstance(value, list):
                _mask_chat_entries(value, self.redactor)
            elif isinstance(value, dict):
                _mask_completion(value, self.redactor)

    def message(self, text: str | None) -> str | None:
        """An error message as stored (backends may quote the request in them)."""
        return text if text is None or self.redactor is None else self.redactor.text(text)
