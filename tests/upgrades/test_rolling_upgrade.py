"""A rolling deploy: the previous release and this one record into one database, then the new
release replays the old one's spool.

Postgres is a cluster the test owns, migrated to this checkout's head (the deploy's migrations
Job runs first). The previous release's gateway (its own recorder process, its own code from
git) and this release's gateway serve calls side by side and each reads the other's rows. Then
the database goes away: the old gateway still serves, its recorder spools. It stops, as a pod
being replaced does, and a gateway of this release starts on its spool directory (the flat
single-process layout, `recording.spool_dir`) with the database back: every spooled call lands
once, and a replay cut short before its files were removed (the same files again) adds nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import orjson
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import InstrumentedAttribute

from gateway.config import RecordingConfig
from gateway.recording.sink import LogSink
from gateway.recording.spool import FORMAT
from plumbline.db import create_db_engine
from plumbline.models import Call, CallBody, CallLogprobs
from simulator.process import SimulatorProcess
from tests.reliability.gateway_metrics import sink_state
from tests.reliability.postgres_cluster import postgres_cluster
from tests.reliability.stack import QUESTION, ZERO_TIME, reliability_config, running_gateway
from tests.support.gateway_process import GatewayProcess, issue_key
from tests.support.waiting import wait_until
from tests.upgrades.previous_release import module_files, release_env

pytestmark = [pytest.mark.xdist_group("reliability"), pytest.mark.timeout(300)]
CALLS_EACH = 6
CALLS_SPOOLED = 10


def _calls(gateway_url: str, key: str, count: int) -> list[str]:
    """`count` chat calls, plain and streamed by turns, with logprobs; their call ids."""
    ids = []
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=gateway_url, headers=headers, timeout=30) as client:
        for n in range(count):
            body = {"model": "tiny", "messages": QUESTION, "max_tokens": 4, "logprobs": True}
            response = client.post("/v1/chat/completions", json={**body, "stream": n % 2 == 1})
            assert response.status_code == 200, response.text
            ids.append(response.headers["x-plumbline-call-id"])
    return ids


def _rows_per_call(url: str, column: InstrumentedAttribute[str], ids: list[str]) -> dict[str, int]:
    """How many rows of a call table each call id has."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            query = select(column, func.count()).where(column.in_(ids)).group_by(column)
            return {row[0]: row[1] for row in connection.execute(query)}
    finally:
        engine.dispose()


def _landed_once(url: str, ids: list[str]) -> None:
    """Every call has exactly one row in calls, call_bodies and call_logprobs."""
    once = dict.fromkeys(ids, 1)
    assert _rows_per_call(url, Call.id, ids) == once
    assert _rows_per_call(url, CallBody.call_id, ids) == once
    assert _rows_per_call(url, CallLogprobs.call_id, ids) == once


def _read(gateway_url: str, key: str, call_id: str) -> dict[str, object]:
    response = httpx.get(
        f"{gateway_url}/api/calls/{call_id}", headers={"Authorization": f"Bearer {key}"}
    )
    assert response.status_code == 200, response.text
    found: dict[str, object] = response.json()
    return found


def _replay_in_process(url: str, spool_dir: Path) -> None:
    """This release's log sink on `spool_dir` until it holds no batch."""
    sink = LogSink(
        create_db_engine(url), RecordingConfig(flush_interval_ms=20, spool_dir=spool_dir)
    )
    sink.start()
    try:
        wait_until(lambda: not sink.spool.pending_files(), timeout=60, what="the copies replay")
    finally:
        sink.stop()
        sink.engine.dispose()


def test_previous_release_beside_this_one_and_its_spool_replayed(
    previous_release: Path, tmp_path: Path
) -> None:
    found = module_files(previous_release, "apps.cli", "gateway.recording.recorder_child")
    assert all(Path(path).is_relative_to(previous_release) for path in found.values()), found
    with postgres_cluster() as cluster, SimulatorProcess({"timing": ZERO_TIME}) as simulator:
        url = cluster.create_database("plumbline_rolling")
        key = issue_key(url, "team-rolling", store_bodies=True)
        config = reliability_config(simulator.base_url)
        old = GatewayProcess(config, url, env=release_env(previous_release))
        new = GatewayProcess(config, url)
        with old, new:
            by_old, by_new = _calls(old.url, key, CALLS_EACH), _calls(new.url, key, CALLS_EACH)
            side_by_side = by_old + by_new
            wait_until(
                lambda: _rows_per_call(url, Call.id, side_by_side).keys() == set(side_by_side),
                timeout=60,
                what="both releases' calls recorded",
            )
            _landed_once(url, side_by_side)
            # Each release reads what the other wrote, through the same read API.
            assert _read(new.url, key, by_old[0])["id"] == by_old[0]
            assert _read(old.url, key, by_new[0])["id"] == by_new[0]

            cluster.stop("immediate")
            spooled = _calls(old.url, key, CALLS_SPOOLED)
            wait_until(
                lambda: sink_state(old.url)["spooled"] >= CALLS_SPOOLED,
                timeout=60,
                what="the old release's recorder spools",
            )
            assert sink_state(old.url)["dropped"] == 0
        files = sorted(old.spool_dir.glob("spool-*.jsonl"))
        assert files, "the old release left no spool"
        # Its files say their format, so a release that cannot read them would know.
        formats = {orjson.loads(path.read_bytes()).get("format") for path in files}
        assert formats and all(isinstance(f, int) and 1 <= f <= FORMAT for f in formats), formats
        copies = tmp_path / "copies"
        copies.mkdir()
        for path in files:
            shutil.copy2(path, copies / path.name)

        cluster.start()
        with running_gateway(config, url, spool_dir=old.spool_dir) as replayer:
            wait_until(
                lambda: (
                    sink_state(replayer.url)["pending_files"] == 0
                    and sink_state(replayer.url)["replayed"] >= CALLS_SPOOLED
                ),
                timeout=90,
                what="the new release replays the old spool",
            )
            assert sink_state(replayer.url)["replayed"] == CALLS_SPOOLED
            assert _read(replayer.url, key, spooled[0])["id"] == spooled[0]
        assert sorted(old.spool_dir.glob("spool-*.jsonl")) == []
        _landed_once(url, side_by_side + spooled)

        _replay_in_process(url, copies)
        _landed_once(url, side_by_side + spooled)
        engine = create_db_engine(url)
        with engine.connect() as connection:
            assert (
                connection.scalar(select(func.count()).select_from(Call))
                == 2 * CALLS_EACH + CALLS_SPOOLED
            )
        engine.dispose()
