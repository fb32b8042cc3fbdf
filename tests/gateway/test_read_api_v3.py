"""The read API and the evals' reader on v3 logprob rows, before and after top-k retention."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import openai
import pytest
from sqlalchemy import func, select, update

from evals.runs.repository.calls import calls_by_ids, chat_logprobs
from gateway.recording import call_queries
from gateway.retention.service import apply_retention
from plumbline import logprob_read
from plumbline.models import LogprobVocab, Team
from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.logprob_match import chat_entries_match

pytestmark = pytest.mark.xdist_group("gateway-e2e")
MESSAGES = [{"role": "user", "content": "Summarise the termination clause."}]


@pytest.fixture(scope="module")
def v3_gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    recording = {
        "flush_interval_ms": 20,
        "in_process": database.startswith("sqlite"),
        "logprob_form": "v3",
    }
    with GatewayProcess(gateway_config(simulator.base_url, recording=recording), database) as gw:
        yield gw


def _detail(gateway: GatewayProcess, key: str, call_id: str) -> dict[str, object]:
    response = httpx.get(
        f"{gateway.url}/api/calls/{call_id}", headers={"Authorization": f"Bearer {key}"}
    )
    assert response.status_code == 200, response.text
    found: dict[str, object] = response.json()
    return found


def test_v3_rows_read_back_and_lose_only_top_k_to_its_retention(
    v3_gateway: GatewayProcess, database: str, calls: CallReader
) -> None:
    key = issue_key(database, "team-v3")
    with openai.OpenAI(base_url=f"{v3_gateway.url}/v1", api_key=key, max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="tiny",
            messages=MESSAGES,
            max_tokens=12,
            logprobs=True,
            top_logprobs=5,  # type: ignore[arg-type]
        )
    sent = raw.http_response.json()["choices"][0]["logprobs"]["content"]
    call_id = raw.headers["x-plumbline-call-id"]
    call = calls.wait(call_id)
    with calls.sessions() as session:
        row = call_queries.logprobs_of(session, call)
        assert row is not None and logprob_read.is_v3(row.payload)
        assert session.scalar(select(func.count()).select_from(LogprobVocab))
    detail = _detail(v3_gateway, key, call_id)
    logprobs = detail["logprobs"]
    assert isinstance(logprobs, dict) and logprobs["top_logprobs_expired"] is False
    assert chat_entries_match(logprobs["choices"]["0"], sent)
    with calls.sessions() as session:
        found = chat_logprobs(session, calls_by_ids(session, [call_id]).values())
    assert chat_entries_match(found[call_id], sent)  # what divergence analysis reads

    with calls.sessions.begin() as session:
        session.execute(update(Team).where(Team.name == "team-v3").values(topk_retention_days=1))
    with calls.sessions.begin() as session:
        apply_retention(session, datetime.now(UTC) + timedelta(days=2))
    expired = _detail(v3_gateway, key, call_id)["logprobs"]
    assert isinstance(expired, dict) and expired["top_logprobs_expired"] is True
    sampled = [{**entry, "top_logprobs": []} for entry in sent]
    assert expired["choices"]["0"] == sampled  # tokens and sampled logprobs exactly
    assert calls.logprobs(call) == {0: sampled}
