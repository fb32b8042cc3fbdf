"""A backend whose vLLM runner is not the one its model's config names is taken out of rotation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web

from gateway.config import GatewayConfig, HealthConfig
from gateway.routing.health import HealthMonitor
from gateway.routing.model_backends import ModelBackends
from plumbline.child_process import free_port


class FakeVllm:
    """A real HTTP server with /health and the POST routes of one runner (GETs to them: 405)."""

    def __init__(self, routes: tuple[str, ...]) -> None:
        self.routes = routes
        self.asked: list[str] = []

    async def health(self, _: web.Request) -> web.Response:
        return web.Response(status=200)

    async def post(self, request: web.Request) -> web.Response:
        return web.Response(status=400)

    @web.middleware
    async def log(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        self.asked.append(f"{request.method} {request.path}")
        return await handler(request)


StartFake = Callable[[tuple[str, ...]], Awaitable[tuple[FakeVllm, str]]]


@pytest.fixture
async def fake_vllm() -> AsyncIterator[StartFake]:
    runners: list[web.AppRunner] = []

    async def start(routes: tuple[str, ...]) -> tuple[FakeVllm, str]:
        fake = FakeVllm(routes)
        app = web.Application(middlewares=[fake.log])
        app.router.add_get("/health", fake.health)
        for route in routes:
            app.router.add_post(route, fake.post)
        runner = web.AppRunner(app)
        await runner.setup()
        runners.append(runner)
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return fake, f"http://127.0.0.1:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()


def _monitor(url: str, runner: str, http: aiohttp.ClientSession) -> HealthMonitor:
    model = {"name": "m", "backends": [{"url": url}], "runner": runner}
    backends = ModelBackends(GatewayConfig.model_validate({"models": [model]}))
    return HealthMonitor(backends, http, HealthConfig(interval_s=60, timeout_s=1.0))


GENERATE = ("/v1/chat/completions", "/v1/completions")
POOLING = ("/v1/embeddings", "/pooling", "/score", "/rerank")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("routes", "runner", "healthy"),
    [
        (GENERATE, "generate", True),
        (POOLING, "pooling", True),
        (("/classify",), "pooling", True),
        (POOLING, "generate", False),
        (GENERATE, "pooling", False),
        ((), "pooling", True),  # no route tells: not a vLLM we can read, kept
    ],
)
async def test_a_backend_serving_the_other_runner_is_out(
    fake_vllm: StartFake,
    routes: tuple[str, ...],
    runner: str,
    healthy: bool,
) -> None:
    fake, url = await fake_vllm(routes)
    async with aiohttp.ClientSession() as http:
        monitor = _monitor(url, runner, http)
        backend = monitor.backends.all()[0]
        await monitor.check(backend)
        assert backend.healthy is healthy
        if not healthy:
            assert backend.last_error is not None
            assert f"config says `runner: {runner}`" in backend.last_error
        # Asked once while it stays in rotation; again each round while it is out.
        before = len(fake.asked)
        await monitor.check(backend)
        probes = [a for a in fake.asked[before:] if not a.endswith(("/health", "/metrics"))]
        probes = [a for a in probes if not a.endswith("/v1/models")]
        assert bool(probes) is not healthy
        assert all(a.startswith("GET ") for a in fake.asked)
