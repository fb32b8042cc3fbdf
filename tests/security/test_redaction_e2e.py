"""Secrets in prompts and answers never reach the database: bodies and logprobs are redacted."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from sqlalchemy import text

from plumbline import logprob_read
from plumbline.db import create_db_engine
from tests.security.stack import SECRET_TEXTS, SecurityStack, security_stack
from tests.support.calls import CallReader

pytestmark = pytest.mark.xdist_group("security-redaction")
PROMPT_SECRETS = (
    "bob.smith@corp.example",
    "5500 0000 0000 0004",
    "sk-proj-Zq9Xw8Vu7Ts6Rq5Po4Nm3Lk2",
    "ACME-424242",
)
PROMPT = (
    f"What are the contact details? I am {PROMPT_SECRETS[0]}, card {PROMPT_SECRETS[1]}, "
    f"our key is {PROMPT_SECRETS[2]}, ticket {PROMPT_SECRETS[3]}."
)
ALL_SECRETS = (*PROMPT_SECRETS, *SECRET_TEXTS)
# A group of the card's digits on its own; digits inside a longer number (a timing float in the
# response body) are not the card.
CARD_GROUP = re.compile(r"(?<![\d.])" + SECRET_TEXTS[1].split()[-1] + r"(?!\d)")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    config = {
        "recording": {"flush_interval_ms": 20, "redaction": {"extra_patterns": [r"ACME-\d{6}"]}}
    }
    with security_stack("postgres", tmp_path_factory.mktemp("redact"), config=config) as running:
        yield running


def _send(stack: SecurityStack, who: str, stream: bool) -> str:
    with stack.openai(who) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="tiny",
            messages=[{"role": "user", "content": PROMPT}],
            max_tokens=40,
            temperature=0,
            logprobs=True,
            top_logprobs=5,
            stream=stream,
        )
        answer = raw.parse()
        if stream:
            answer_text = "".join(
                c.choices[0].delta.content or ""
                for c in answer
                if c.choices  # type: ignore[union-attr]
            )
        else:
            answer_text = answer.choices[0].message.content or ""  # type: ignore[union-attr]
    assert "jane.roe@example.com" in answer_text  # the client gets the answer untouched
    return str(raw.headers["x-plumbline-call-id"])


def _database_dump(stack: SecurityStack, call_id: str) -> str:
    engine = create_db_engine(stack.database_url)
    with engine.connect() as connection:
        bodies = connection.execute(
            text("SELECT request_body, response_body FROM call_bodies WHERE call_id = :id"),
            {"id": call_id},
        ).all()
        payloads = connection.execute(
            text("SELECT payload, topk FROM call_logprobs WHERE call_id = :id"), {"id": call_id}
        ).all()
        calls = connection.execute(text("SELECT * FROM calls WHERE id = :id"), {"id": call_id})
        dump = [str(r) for r in bodies] + [str(r) for r in calls.all()]
        dump += [
            orjson.dumps(logprob_read.decode(p[0], p[1]), option=orjson.OPT_NON_STR_KEYS).decode()
            for p in payloads
        ]
    engine.dispose()
    return "\n".join(dump)


@pytest.mark.parametrize("stream", [False, True])
def test_stored_bodies_and_logprobs_hold_no_secrets(stack: SecurityStack, stream: bool) -> None:
    call_id = _send(stack, "alpha", stream)
    reader = CallReader(stack.database_url)
    reader.wait(call_id)
    reader.close()
    with stack.api("alpha") as alpha:
        detail = alpha.get(f"/api/calls/{call_id}").json()
    assert detail["body"] is not None and detail["logprobs"]["token_count"] > 10
    shown = orjson.dumps(detail).decode()
    stored = _database_dump(stack, call_id)
    for secret in ALL_SECRETS:
        assert secret not in shown and secret not in stored, secret
    for marker in (
        "[REDACTED:email]",
        "[REDACTED:card]",
        "[REDACTED:api_key]",
        "[REDACTED:custom]",
    ):
        assert marker in detail["body"]["request"]
    assert "[REDACTED:email]" in detail["body"]["response"]
    tokens = "".join(e["token"] for e in detail["logprobs"]["choices"]["0"])
    alternatives = " ".join(
        a["token"] for e in detail["logprobs"]["choices"]["0"] for a in e["top_logprobs"]
    )
    assert "[REDACTED:email]" in tokens and "[REDACTED:card]" in tokens
    assert "Write to" in tokens  # the rest of the answer is still there
    # The secrets were cut into tokens: none may survive in the joined text either.
    for stored_text in (tokens, detail["body"]["request"], detail["body"]["response"]):
        assert not any(s in stored_text for s in ALL_SECRETS), stored_text
        assert not CARD_GROUP.search(stored_text) and "example.com" not in stored_text
    assert not CARD_GROUP.search(alternatives) and "jane" not in alternatives


def test_teams_without_body_storage_keep_no_bodies_but_redacted_logprobs(
    stack: SecurityStack,
) -> None:
    call_id = _send(stack, "beta", stream=True)
    reader = CallReader(stack.database_url)
    reader.wait(call_id)
    reader.close()
    with stack.api("beta") as beta:
        detail = beta.get(f"/api/calls/{call_id}").json()
    assert detail["body"] is None
    stored = _database_dump(stack, call_id)
    assert "[REDACTED:email]" in stored
    assert all(secret not in stored for secret in ALL_SECRETS)


NAMED_STREAMS = {
    "/v1/responses": (
        {"input": PROMPT, "max_output_tokens": 40},
        lambda event: event.get("delta") if event.get("type", "").endswith("text.delta") else None,
    ),
    "/v1/messages": (
        {"messages": [{"role": "user", "content": PROMPT}], "max_tokens": 40},
        lambda event: (
            (event.get("delta") or {}).get("text")
            if event.get("type") == "content_block_delta"
            else None
        ),
    ),
}


def _deltas(stream: str, delta_of: Any) -> list[str]:
    """The text deltas of an SSE stream, in order."""
    found = []
    for raw in stream.split("\n\n"):
        for line in raw.splitlines():
            if line.startswith("data: {"):
                piece = delta_of(orjson.loads(line[6:]))
                if isinstance(piece, str):
                    found.append(piece)
    return found


@pytest.mark.parametrize("endpoint", NAMED_STREAMS)
def test_a_secret_cut_across_named_stream_deltas_is_not_stored(
    stack: SecurityStack, endpoint: str
) -> None:
    fields, delta_of = NAMED_STREAMS[endpoint]
    with stack.api("alpha") as alpha:
        answer = alpha.post(endpoint, json={"model": "tiny", "stream": True, **fields})
        assert answer.status_code == 200, answer.text
        sent = _deltas(answer.text, delta_of)
        # The client gets the address, cut across deltas: no one event holds it.
        assert "jane.roe@example.com" in "".join(sent)
        assert not any("jane.roe@example.com" in piece for piece in sent)
        call_id = answer.headers["x-plumbline-call-id"]
        reader = CallReader(stack.database_url)
        reader.wait(call_id)
        reader.close()
        detail = alpha.get(f"/api/calls/{call_id}").json()
    stored = _database_dump(stack, call_id)
    for secret in ALL_SECRETS:
        assert secret not in stored and secret not in orjson.dumps(detail).decode(), secret
    shown = _deltas(detail["body"]["response"], delta_of)
    joined = "".join(shown)
    assert len(shown) == len(sent) and "[REDACTED:email]" in joined and "Write to" in joined
    assert "example.com" not in joined and "1111" not in joined, joined
