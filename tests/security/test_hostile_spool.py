"""Client data cannot wedge the spool: hostile fields spooled through an outage replay whole.

A real gateway records through its recorder process into a Postgres cluster the test owns. The
cluster is stopped, clients send requests whose JSON is built to pass for the spool's own tags
(`$t`, `$b`) or to break an insert (NUL, huge numbers, lone surrogates, deep nesting); then the
cluster comes back and every call must be written and every file replayed. A spool file in the
previous release's format, one of whose rows the database refuses, replays too: its good rows
are written and the refused one is quarantined and counted, not taken for an outage.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import select

from gateway.metering.record import CallRecord, LiveSampleOrder
from gateway.recording.rows import RowBatch, build_rows
from plumbline.db import create_db_engine, make_session_factory
from plumbline.models import Call, CallBody, CallLogprobs, LiveSample, Team
from simulator.process import SimulatorProcess
from tests.reliability.gateway_metrics import scrape, sink_state, total
from tests.reliability.postgres_cluster import PostgresCluster, postgres_cluster
from tests.reliability.stack import ZERO_TIME, reliability_config, running_gateway
from tests.support.gateway_process import issue_key
from tests.support.records import make_record
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.xdist_group("reliability"), pytest.mark.timeout(300)]
SECRET = "prompt-secret-7d2c9e41"
QUESTION = [{"role": "user", "content": f"Is the contract signed? {SECRET}"}]
DEEP = "[" * 300 + "]" * 300
# As deep as the gateway lets through (254 levels with the body's own object).
NESTED: list[Any] = []
for _ in range(251):
    NESTED = [NESTED]
# Raw bodies: JSON a client may send that Python's json module would not write.
HOSTILE: dict[str, dict[str, Any]] = {
    "datetime tag": {"$t": "2020-01-01T00:00:00"},
    "broken datetime tag": {"$t": "not a date"},
    "bytes tag": {"$b": "aGVsbG8="},
    "broken bytes tag": {"$b": "***"},
    "both tags": {"$t": "2020-01-01T00:00:00", "$b": "aGVsbG8="},
    "nested tags": {"metadata": {"$t": "2020-01-01T00:00:00", "$b": "aGVsbG8="}},
    "NUL": {"messages": [{"role": "user", "content": f"a\u0000b {SECRET}"}], "user": "\u0000"},
    "huge floats": {"temperature": 1e308, "top_p": -1e308, "frequency_penalty": 1.7e308},
    "deep JSON": {"metadata": NESTED, "$t": "2020-01-01T00:00:00"},
}
RAW: dict[str, bytes] = {
    "lone surrogate": b'"messages": [{"role": "user", "content": "\\ud800 x"}], "user": "\\udfff"',
    "huge integers": b'"seed": 123456789012345678901234567890, "max_tokens": 99999999999999999999',
    "deep raw JSON": b'"metadata": ' + DEEP.encode(),
}
HEADERS = {b"x-plumbline-feature": b"f" * 400, b"x-plumbline-user": b"\xff\xfe" * 200}


def _body(extra: dict[str, Any] | bytes) -> bytes:
    base = orjson.dumps({"model": "tiny", "messages": QUESTION, "max_tokens": 4})
    if isinstance(extra, bytes):
        return base[:-1] + b", " + extra + b"}"
    return orjson.dumps({**orjson.loads(base), **extra})


def _until(check: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    wait_until(check, timeout=timeout, what=what, poll=0.1)


def _legacy_value(value: Any) -> Any:
    # The previous release's encoding: tags in place of bytes and datetimes, nothing else.
    if isinstance(value, bytes):
        return {"$b": base64.b64encode(value).decode()}
    if isinstance(value, datetime):
        return {"$t": value.isoformat()}
    return value


def _legacy_file(directory: Path, batch: RowBatch) -> Path:
    """A spool file as the previous release wrote it."""
    directory.mkdir(parents=True, exist_ok=True)
    document = {
        table: [{k: _legacy_value(v) for k, v in row.items()} for row in getattr(batch, table)]
        for table in ("calls", "logprobs", "bodies", "live_samples")
    }
    path = directory / "spool-20250101T000000000000-1-000000001.jsonl"
    path.write_bytes(orjson.dumps(document) + b"\n")
    return path


def _sampled(team_id: int, request: dict[str, Any], sample_team: int | None = None) -> CallRecord:
    return make_record(
        team_id=team_id if sample_team is None else sample_team,
        stream=False,
        store_body=True,
        request_body=orjson.dumps(request),
        response_body=b'{"choices": [{"message": {"content": "yes"}}]}',
        live_sample=LiveSampleOrder(answer=None, resamples=2, priority=False),
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    with postgres_cluster() as running:
        yield running


def _stored(url: str, model: Any, column: Any, ids: list[str]) -> dict[str, Any]:
    """Rows of a table by call id."""
    engine = create_db_engine(url)
    try:
        with make_session_factory(engine)() as session:
            rows = session.scalars(select(model).where(column.in_(ids))).all()
            return {getattr(row, column.key): row for row in rows}
    finally:
        engine.dispose()


def test_hostile_fields_spool_and_replay(cluster: PostgresCluster, tmp_path: Path) -> None:
    url = cluster.create_database("plumbline_hostile_spool")
    key = issue_key(url, "team-hostile", store_bodies=True)
    engine = create_db_engine(url)
    with engine.connect() as connection:
        team_id = int(connection.scalar(select(Team.id).where(Team.name == "team-hostile")) or 0)
    engine.dispose()
    spool = tmp_path / "spool"
    good = _sampled(team_id, {"model": "tiny", "$t": "2021-01-01T00:00:00", "$b": "eA=="})
    # Its team was deleted while the batch waited: the database refuses this live sample.
    orphan = _sampled(team_id, {"model": "tiny", "messages": QUESTION})
    orphan_rows = build_rows([orphan])
    orphan_rows.live_samples[0]["team_id"] = 999_999
    legacy = build_rows([good])
    legacy.extend(orphan_rows)
    _legacy_file(spool, legacy)
    with SimulatorProcess({"timing": ZERO_TIME}) as simulator:
        config = reliability_config(simulator.base_url, live_sampling={"default": {"rate": 1.0}})
        with running_gateway(config, url, spool_dir=spool) as gateway:

            def legacy_replayed() -> bool:
                state = sink_state(gateway.url)
                return state["replayed"] == 2 and state["pending_files"] == 0

            _until(legacy_replayed, "the previous release's file replays")
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
            with httpx.Client(base_url=gateway.url, headers=headers, timeout=30) as client:
                warm = client.post("/v1/chat/completions", content=_body({}))
                assert warm.status_code == 200, warm.text
                cluster.stop("immediate")
                ids: dict[str, str] = {}
                statuses: dict[str, int] = {}
                cases: list[tuple[str, dict[str, Any] | bytes]] = [*HOSTILE.items(), *RAW.items()]
                for name, extra in cases:
                    response = client.post(
                        "/v1/chat/completions", content=_body(extra), headers=HEADERS
                    )
                    assert response.status_code < 500, (name, response.text)
                    ids[name] = response.headers["x-plumbline-call-id"]
                    statuses[name] = response.status_code
            during = sink_state(gateway.url)
            _until(lambda: sink_state(gateway.url)["spooled"] >= len(ids), "the calls are spooled")
            assert sink_state(gateway.url)["database_up"] == 0
            cluster.start()

            def replayed() -> bool:
                state = sink_state(gateway.url)
                return state["pending_files"] == 0 and state["replayed"] >= state["spooled"]

            _until(replayed, "the spool replays once the database is back")
            after = sink_state(gateway.url)
            quarantined = total(scrape(gateway.url), "plumbline_sink_quarantined_rows_total")
            log = gateway.log_path.read_text(errors="replace")
    assert during["dropped"] == 0 and after["dropped"] == 0
    assert quarantined == 1, "only the orphaned live sample is refused"
    assert SECRET not in log
    calls = _stored(url, Call, Call.id, [*ids.values(), good.id, orphan.id])
    assert set(calls) == {*ids.values(), good.id, orphan.id}
    for name in ("lone surrogate", "NUL"):
        assert calls[ids[name]].end_user is not None
    assert len(calls[ids["datetime tag"]].feature) == 128
    bodies = _stored(url, CallBody, CallBody.call_id, list(ids.values()))
    assert set(bodies) == set(ids.values())
    assert '"$t"' in bodies[ids["datetime tag"]].request_body
    samples = _stored(url, LiveSample, LiveSample.call_id, [*ids.values(), good.id, orphan.id])
    assert orphan.id not in samples
    # The legacy file's client fields come back as the client sent them.
    assert samples[good.id].request["$t"] == "2021-01-01T00:00:00"
    ok = {name for name, status in statuses.items() if status == 200}
    assert "deep JSON" in ok and "datetime tag" in ok, statuses
    assert ok, statuses
    for name in ok:
        stored = samples[ids[name]].request
        extra = HOSTILE.get(name, {})
        for field, value in extra.items():
            if field.startswith("$"):
                assert stored[field] == value, (name, stored)
    assert len(_stored(url, CallLogprobs, CallLogprobs.call_id, [good.id])) == 1


def _spool_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.glob("spool-*.jsonl"))


def test_the_spool_stops_at_its_cap_and_counts_what_it_drops(
    cluster: PostgresCluster, tmp_path: Path
) -> None:
    url = cluster.create_database("plumbline_spool_cap")
    key = issue_key(url, "team-cap", store_bodies=True)
    cap = 2**20
    big = orjson.dumps(
        {"model": "tiny", "messages": [{"role": "user", "content": "x" * 60_000}], "max_tokens": 4}
    )
    with SimulatorProcess({"timing": ZERO_TIME}) as simulator:
        config = reliability_config(
            simulator.base_url, recording={"flush_interval_ms": 20, "spool_max_bytes": cap}
        )
        with running_gateway(config, url) as gateway:
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
            with httpx.Client(base_url=gateway.url, headers=headers, timeout=30) as client:
                assert client.post("/v1/chat/completions", content=_body({})).status_code == 200
                cluster.stop("immediate")
                for _ in range(40):
                    # Refused or answered, each call is recorded with its 60 kB body.
                    assert client.post("/v1/chat/completions", content=big).status_code < 500

            def settled() -> bool:
                state = sink_state(gateway.url)
                return state["written"] + state["spooled"] + state["dropped"] >= 41

            _until(settled, "every call is spooled or counted as dropped")
            during = sink_state(gateway.url)
            held = _spool_bytes(gateway.spool_dir)
            # Prompts and bodies are in the files: no other local user may read them.
            modes = {p.stat().st_mode & 0o777 for p in gateway.spool_dir.glob("spool-*.jsonl")}
            log = gateway.log_path.read_text(errors="replace")
            cluster.start()
            _until(
                lambda: sink_state(gateway.url)["pending_files"] == 0, "the spooled calls replay"
            )
    assert 0 < held <= cap
    assert modes == {0o600}
    assert during["dropped"] > 0 and during["spooled"] > 0
    # Nothing vanished: the warm-up call and the 40 are each written, spooled or dropped.
    assert during["written"] + during["spooled"] + during["dropped"] == during["submitted"] == 41
    assert "spool holds its maximum" in log
