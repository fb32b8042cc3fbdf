"""The gateway's eval-run producer holds no broker connection past a publish or its shutdown."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import redis

from gateway.api.eval_queue import START_QUEUE, EvalQueue, close_eval_queue
from plumbline.settings import Settings, WorkerSettings
from tests.reliability.redis_server import redis_server


def _clients(url: str) -> int:
    """Connections the server holds, less the one asking."""
    probe = redis.Redis.from_url(url)
    try:
        return len(probe.client_list()) - 1
    finally:
        probe.close()


def test_a_queued_run_leaves_no_broker_connection_open() -> None:
    with redis_server() as server:
        settings = Settings(worker=WorkerSettings(broker_url=server.url, key_prefix="close-test:"))
        app = SimpleNamespace(state=SimpleNamespace(eval_queue=EvalQueue(settings)))
        asyncio.run(app.state.eval_queue.start(7, resume=False))
        reader = redis.Redis.from_url(server.url)
        queued = reader.llen(f"close-test:{START_QUEUE}")
        reader.close()
        assert queued == 1
        assert _clients(server.url) == 0
        close_eval_queue(app)
        assert app.state.eval_queue is None
