"""Stability of live traffic: sampled production calls are re-asked by a worker, agreement is
recorded and exported; the near-tie report ranks features from the calls' own logprobs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openai import OpenAI
from sqlalchemy import select

from plumbline.child_process import plumbline_command
from plumbline.models import Call, CallBody, LiveSample
from tests.support.gateway_process import issue_key
from tests.support.recorded_calls import recorded_calls
from tests.workers.stack import WorkerStack, wait_for, worker_stack

pytestmark = pytest.mark.xdist_group("workers_live")
SCENARIOS = [
    {
        "name": "cap",
        "match": "(?i)indemnity",
        "answers": [
            {"text": "The indemnity cap is 12 months of fees.", "p": 1},
            {"text": "The indemnity cap is 24 months of fees.", "p": 1},
        ],
    },
    {"name": "price", "match": "(?i)price", "answers": [{"text": "It costs 12 dollars.", "p": 1}]},
    {"name": "law", "match": "(?i)law", "answers": [{"text": "English law governs.", "p": 1}]},
]
LIVE = {
    "resamples": 3,
    "features": {
        "contracts": {"rate": 1.0},
        "pricing": {"rate": 1.0, "answer": {"type": "number"}},
        "support": {"rate": 1.0, "high_stakes_only": True},
    },
}


@pytest.fixture(scope="module")
def stack() -> Iterator[WorkerStack]:
    """A gateway that samples three features, a worker and a beat that dispatches samples."""
    with worker_stack(
        {"scenarios": SCENARIOS},
        live_sampling=LIVE,
        stability_metrics_ttl_s=0,
        model={"priority_scheduling": True},
    ) as running:
        yield running


@pytest.fixture(scope="module")
def traffic(stack: WorkerStack) -> dict[str, str]:
    """Product calls of two teams with the official SDK; returns the keys."""
    legal = issue_key(stack.database_url, "legal", store_bodies=True)
    support = issue_key(stack.database_url, "helpdesk")

    def ask(key: str, feature: str, question: str, **extra: Any) -> None:
        client = OpenAI(base_url=f"{stack.gateway.url}/v1", api_key=key, max_retries=0)
        headers = {"X-Plumbline-Feature": feature, **extra.pop("headers", {})}
        reply = client.chat.completions.create(
            model="tiny",
            messages=[{"role": "user", "content": question}],
            max_tokens=32,
            extra_headers=headers,
            **extra,
        )
        if extra.get("stream"):
            assert "".join(c.choices[0].delta.content or "" for c in reply if c.choices)  # type: ignore[union-attr]

    for _ in range(2):
        ask(legal, "contracts", "What is the indemnity cap?", temperature=1.0)
    ask(legal, "contracts", "And the indemnity cap, streamed?", temperature=1.0, stream=True)
    ask(legal, "pricing", "What is the price?")
    ask(support, "support", "Which law applies?")  # not high-stakes: never sampled
    ask(support, "support", "Which law applies here?", headers={"X-Plumbline-Stakes": "high"})
    ask(support, "chat", "Which law, again?")  # no rule for this feature
    return {"legal": legal, "support": support}


def samples(stack: WorkerStack) -> list[LiveSample]:
    with stack.sessions() as session:
        return list(session.scalars(select(LiveSample).order_by(LiveSample.id)))


def test_sampled_calls_are_resampled_and_their_agreement_recorded(
    stack: WorkerStack, traffic: dict[str, str]
) -> None:
    stack.worker(concurrency=2)
    stack.beat()
    wait_for(
        lambda: len(found := samples(stack)) == 5 and all(s.status == "done" for s in found),
        60,
        "five resampled live samples",
        stack,
    )
    found = samples(stack)
    assert sorted(s.feature for s in found) == ["contracts"] * 3 + ["pricing", "support"]
    assert all(s.n_answered == 3 and len(s.call_ids or []) == 3 for s in found)
    by_feature = {s.feature: s for s in found}
    assert (by_feature["pricing"].original_key, by_feature["pricing"].agreement) == ("12 USD", 1.0)
    assert by_feature["support"].agreement == 1.0
    contracts = [s for s in found if s.feature == "contracts"]
    # Normalised text by default: lower case, no article, no punctuation.
    keys = {"indemnity cap is 12 months of fees", "indemnity cap is 24 months of fees"}
    assert all(s.original_key in keys and set(s.answer_keys or []) <= keys for s in contracts)
    assert all(0.0 <= (s.agreement or 0.0) <= 1.0 for s in contracts)
    # Bodies are kept only for the team that stores them.
    assert by_feature["pricing"].request is not None
    assert by_feature["support"].request is None and by_feature["support"].original_text is None
    resampled = recorded_calls(stack.sessions, Call.feature.like("resample:%"), at_least=15)
    with stack.sessions() as session:
        bodies = session.scalars(
            select(CallBody.request_body)
            .join(Call, Call.id == CallBody.call_id)
            .where(Call.feature == "resample:pricing")
        ).all()
    assert len(resampled) == 15
    assert {c.source for c in resampled} == {"live_sample"}
    assert all(c.input_cost and c.input_cost > 0 for c in resampled)
    assert {c.feature for c in resampled} == {
        "resample:contracts",
        "resample:pricing",
        "resample:support",
    }
    assert bodies and all('"priority":10' in b.replace(" ", "") for b in bodies)
    assert all('"stream"' not in b for b in bodies)


def test_live_agreement_is_exported_and_reported(
    stack: WorkerStack, traffic: dict[str, str]
) -> None:
    wait_for(
        lambda: len(samples(stack)) == 5 and all(s.status == "done" for s in samples(stack)),
        60,
        "the live samples",
        stack,
    )
    text = httpx.get(f"{stack.gateway.url}/metrics").text
    assert 'plumbline_live_agreement{feature="pricing"} 1.0' in text
    assert 'plumbline_live_agreement{feature="contracts"}' in text
    report = httpx.get(
        f"{stack.gateway.url}/api/stability/live",
        headers={"Authorization": f"Bearer {traffic['support']}"},
    )
    assert report.status_code == 200
    assert [row["feature"] for row in report.json()["data"]] == ["support"]


def test_the_near_tie_report_ranks_the_feature_that_hinges_on_a_near_tie_first(
    stack: WorkerStack, traffic: dict[str, str]
) -> None:
    admin = {"Authorization": f"Bearer {stack.admin_key}"}
    report = httpx.get(f"{stack.gateway.url}/api/stability/near-ties", headers=admin)
    assert report.status_code == 200, report.text
    rows = report.json()["data"]
    assert rows[0]["feature"] == "contracts"
    assert rows[0]["near_tie_share"] == 1.0 and rows[0]["min_margin"] < 0.1
    others = {r["feature"]: r for r in rows[1:]}
    assert set(others) == {"pricing", "support", "chat"}
    assert all(r["near_tie_share"] < 1.0 for r in others.values())
    bad = httpx.get(
        f"{stack.gateway.url}/api/stability/near-ties",
        params={"since": "2026-01-01T00:00:00"},
        headers=admin,
    )
    assert bad.status_code == 400 and "timezone" in bad.json()["error"]["message"]
    printed = subprocess.run(
        plumbline_command("stability", "near-ties"),
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert printed.splitlines()[1].startswith("contracts ")
