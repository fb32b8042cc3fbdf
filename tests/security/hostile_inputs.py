"""Hypothesis strategies for what a hostile or broken client sends to the proxy endpoints."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

HUGE = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False),
)
TEXT = st.text(max_size=40)
SCALARS = st.one_of(st.none(), st.booleans(), HUGE, TEXT)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=20,
)
FIELDS = {
    "max_tokens": HUGE,
    "max_completion_tokens": HUGE,
    "temperature": HUGE,
    "top_p": HUGE,
    "n": st.one_of(st.integers(min_value=-3, max_value=200), JSON),
    "seed": HUGE,
    "stream": st.one_of(st.booleans(), JSON),
    "stream_options": JSON,
    "logprobs": st.one_of(st.booleans(), HUGE, JSON),
    "top_logprobs": st.one_of(st.integers(min_value=-5, max_value=50), JSON),
    "stop": JSON,
    "logit_bias": JSON,
    "response_format": JSON,
    "user": JSON,
    "priority": HUGE,
}
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "system", "assistant", "tool", "x"]), "content": TEXT}
)
MESSAGES = st.one_of(st.lists(MESSAGE, min_size=1, max_size=3), JSON)


@st.composite
def openai_requests(draw: st.DrawFn, chat: bool) -> dict[str, Any]:
    """Request-shaped bodies with wrong types, huge or negative numbers in any field."""
    body: dict[str, Any] = {"model": draw(st.one_of(st.just("tiny"), st.just("tiny"), JSON))}
    if chat:
        body["messages"] = draw(MESSAGES)
    else:
        body["prompt"] = draw(st.one_of(TEXT, st.lists(TEXT, max_size=3), JSON))
    for name in draw(st.lists(st.sampled_from(sorted(FIELDS)), max_size=5, unique=True)):
        body[name] = draw(FIELDS[name])
    if draw(st.booleans()):
        # Keep generation short when nothing else went wrong, so the fuzzer stays quick.
        body.setdefault("max_tokens", draw(st.integers(min_value=1, max_value=8)))
    return body


def encode(body: Any) -> bytes:
    """JSON for a generated body: big integers and lone surrogates written as JSON allows."""
    return json.dumps(body).encode()


@st.composite
def nested(draw: st.DrawFn) -> bytes:
    """Deeply nested arrays or objects, inside a request or alone."""
    depth = draw(st.integers(min_value=1, max_value=20_000))
    if draw(st.booleans()):
        inner = b"[" * depth + b"]" * depth
    else:
        inner = b'{"a":' * depth + b"1" + b"}" * depth
    if draw(st.booleans()):
        return b'{"model": "tiny", "messages": ' + inner + b"}"
    return inner


RAW_BODIES = st.one_of(
    st.binary(max_size=200),  # invalid JSON, invalid UTF-8
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    JSON.map(encode),
    nested(),
    st.just(b'{"model": "tiny", "messages": [{"role": "user", "content": "\\ud800"}]}'),
)
# Any value HTTP allows (the parser refuses control characters; see the raw-socket tests).
HEADER_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=300,
).map(lambda value: value.strip(" \t"))
HEADERS = st.dictionaries(
    st.sampled_from(
        ["X-Plumbline-Feature", "X-Plumbline-User", "X-Request-Id", "X-Plumbline-Stakes"]
    ),
    HEADER_TEXT,
    max_size=4,
)
