"""Stability gauges read from the database, cached for the TTL, stale rather than broken."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from evals.runs.repository import results as result_repo
from evals.runs.repository import runs as run_repo
from evals.runs.result_rows import question_rows
from evals.transaction import in_transaction
from gateway.stability_metrics import StabilityCollector
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import LiveSample
from plumbline.settings import NotifySettings
from tests.alerts.scored_runs import BAD, decide, import_alerting_suite, new_run, scored
from tests.support.databases import sqlite_database


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    with sqlite_database(tmp_path) as url:
        engine = create_db_engine(url)
        yield make_session_factory(engine)
        engine.dispose()


def store_scored_run(sessions: sessionmaker[Session], suite_id: int, name: str) -> int:
    run_id = new_run(sessions, suite_id)
    score = scored(name, run_id, BAD)

    def work(session: Session) -> None:
        run = run_repo.run_by_id(session, run_id, None)
        assert run is not None
        keys = run.definition["question_ids"]
        rows = question_rows(
            score.questions, run_id=run_id, team_id=run.team_id, question_ids=keys, divergences={}
        )
        result_repo.replace_results(session, run_id, rows)
        run_repo.update_run(
            session,
            run_id,
            status="completed",
            summary=score.summary(),
            finished_at=datetime(2026, 11, 29, 12, tzinfo=UTC),
        )

    in_transaction(sessions, work)
    return run_id


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def scrape(collector: StabilityCollector) -> str:
    registry = CollectorRegistry()
    registry.register(collector)
    return generate_latest(registry).decode()


def test_gauges_are_read_cached_and_served_stale_on_errors(
    sessions: sessionmaker[Session],
) -> None:
    clock = Clock()
    collector = StabilityCollector(sessions, 15.0, lambda f: f, clock)
    assert "plumbline_eval_agreement{" not in scrape(collector)
    suite_id = import_alerting_suite(sessions, "contracts")
    for _ in range(2):
        run_id = store_scored_run(sessions, suite_id, "contracts")
        decide(sessions, "contracts", run_id, BAD, NotifySettings())
    with sessions.begin() as session:
        session.add(
            LiveSample(
                call_id="c1",
                created_at=datetime.now(UTC),
                team_id=1,
                feature="contracts",
                model="tiny",
                endpoint="/v1/chat/completions",
                resamples=4,
                status="done",
                finished_at=datetime.now(UTC),
                agreement=0.75,
                n_answered=4,
                n_agreeing=3,
            )
        )
    assert "plumbline_eval_agreement{" not in scrape(collector)  # still cached
    clock.now = 15.0
    page = scrape(collector)
    labels = 'model="tiny",suite="contracts",team="legal"'
    assert f"plumbline_eval_agreement{{{labels}}} 0.75" in page
    assert f"plumbline_eval_agreement_lower{{{labels}}}" in page
    assert f"plumbline_eval_agreement_upper{{{labels}}}" in page
    assert (
        'plumbline_eval_question_agreement{question="cap",suite="contracts",team="legal"} 0.5'
        in page
    )
    assert 'plumbline_eval_last_run_timestamp_seconds{suite="contracts",team="legal"}' in page
    assert 'plumbline_alerts_firing{rule="question:cap",suite="contracts",team="legal"} 1.0' in page
    assert 'plumbline_alerts_firing{rule="suite",suite="contracts",team="legal"} 0.0' in page
    assert 'plumbline_live_agreement{feature="contracts"} 0.75' in page
    with sessions.begin() as session:
        session.execute(text("DROP TABLE live_samples"))
    clock.now = 40.0
    assert scrape(collector) == page  # the database fails: the last figures stay
