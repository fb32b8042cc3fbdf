"""Backends leave rotation at once when refused or dead, but only after repeated slow probes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from gateway.config import GatewayConfig, HealthConfig
from gateway.routing.health import HealthMonitor
from gateway.routing.model_backends import ModelBackends
from plumbline.child_process import free_port


class FakeEngine:
    """A real HTTP server whose /health and /v1/models answer as told."""

    def __init__(self) -> None:
        self.status = 200
        self.delay = 0.0
        self.models_page = b'{"object": "list", "data": []}'

    async def health(self, _: web.Request) -> web.Response:
        await asyncio.sleep(self.delay)
        return web.Response(status=self.status)

    async def models(self, _: web.Request) -> web.Response:
        return web.Response(body=self.models_page, content_type="application/json")


@pytest.fixture
async def engine() -> AsyncIterator[tuple[FakeEngine, str]]:
    fake = FakeEngine()
    app = web.Application()
    app.router.add_get("/health", fake.health)
    app.router.add_get("/v1/models", fake.models)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield fake, f"http://127.0.0.1:{port}"
    await runner.cleanup()


def _monitor(url: str, http: aiohttp.ClientSession) -> tuple[HealthMonitor, ModelBackends]:
    config = GatewayConfig.model_validate({"models": [{"name": "m", "backends": [{"url": url}]}]})
    backends = ModelBackends(config)
    health = HealthConfig(interval_s=60, timeout_s=0.2, timeouts_to_mark_down=3)
    return HealthMonitor(backends, http, health), backends


@pytest.mark.anyio
async def test_slow_probes_take_a_backend_out_only_when_repeated(
    engine: tuple[FakeEngine, str],
) -> None:
    fake, url = engine
    async with aiohttp.ClientSession() as http:
        monitor, backends = _monitor(url, http)
        backend = backends.serving("m")[0]
        fake.delay = 0.5
        for _ in range(2):
            await monitor.check(backend)
            assert backend.healthy
        await monitor.check(backend)
        assert not backend.healthy
        fake.delay = 0.0
        await monitor.check(backend)
        assert backend.healthy and backend.consecutive_timeouts == 0


@pytest.mark.anyio
async def test_a_dead_engine_is_out_at_once(engine: tuple[FakeEngine, str]) -> None:
    fake, url = engine
    async with aiohttp.ClientSession() as http:
        monitor, backends = _monitor(url, http)
        backend = backends.serving("m")[0]
        fake.status = 503
        await monitor.check(backend)
        assert not backend.healthy
        assert backend.last_error == "health check returned 503"


@pytest.mark.anyio
async def test_nothing_listening_is_out_at_once() -> None:
    async with aiohttp.ClientSession() as http:
        monitor, backends = _monitor(f"http://127.0.0.1:{free_port()}", http)
        backend = backends.serving("m")[0]
        await monitor.check(backend)
        assert not backend.healthy


@pytest.mark.anyio
@pytest.mark.parametrize(
    "page",
    [b"[]", b'{"data": {"id": "m"}}', b'{"data": [{"id": 7}]}', b'{"data": ["m"]}'],
    ids=["a-list", "data-not-a-list", "id-not-a-string", "entry-not-an-object"],
)
async def test_a_models_page_of_the_wrong_shape_is_ignored(
    engine: tuple[FakeEngine, str], page: bytes
) -> None:
    fake, url = engine
    fake.models_page = page
    async with aiohttp.ClientSession() as http:
        monitor, backends = _monitor(url, http)
        backend = backends.serving("m")[0]
        await monitor.check(backend)
    assert backend.healthy
    assert backend.served_models == {}
