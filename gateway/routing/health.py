"""HealthMonitor: probes each backend's /health, scrapes its /metrics and reads /v1/models."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import aiohttp
import orjson

from gateway.config import HealthConfig
from gateway.routing.model_backends import Backend, ModelBackends
from gateway.routing.runner_probe import runner_mismatch, served_runner

log = logging.getLogger(__name__)

ENGINE_GAUGES = {
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:kv_cache_usage_perc": "kv_cache_usage",
}


class PageTooLarge(ValueError):
    """A scraped page ran over the monitor's size bound."""


async def read_bounded(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body, or PageTooLarge as soon as it passes `limit` bytes (the rest is never read)."""
    declared = response.content_length
    if declared is not None and declared > limit:
        raise PageTooLarge(f"declares {declared} bytes, over {limit}")
    body = bytearray()
    async for piece in response.content.iter_chunked(1 << 16):
        body += piece
        if len(body) > limit:
            raise PageTooLarge(f"over {limit} bytes")
    return bytes(body)


def served_models_of(data: object) -> dict[str, dict[str, object]]:
    """The `data` list of a /v1/models page by id; ValueError if it is not shaped so."""
    entries = data.get("data", []) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError("/v1/models is not an OpenAI model list")
    models: dict[str, dict[str, object]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ValueError("/v1/models has an entry without a string id")
        models[entry["id"]] = entry
    return models


def parse_engine_gauges(text: str) -> dict[str, float]:
    """Sum the vLLM load gauges over engines from a Prometheus text page.

    Only three gauges are needed out of a page of hundreds of histogram lines, so lines are
    matched by name instead of parsing the whole exposition.
    """
    gauges: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith("vllm:"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        short = ENGINE_GAUGES.get(name)
        if short is None:
            continue
        try:
            value = float(line.rsplit(" ", 1)[1])
        except (IndexError, ValueError):
            continue
        gauges[short] = gauges.get(short, 0.0) + value
    return gauges


class HealthMonitor:
    """Keeps each backend's health, load gauges and served models current."""

    def __init__(self, backends: ModelBackends, http: aiohttp.ClientSession, config: HealthConfig):
        self.backends = backends
        self.http = http
        self.config = config
        self._task: asyncio.Task[None] | None = None

    async def check_all(self) -> None:
        """Probe every backend once, concurrently."""
        await asyncio.gather(*(self.check(b) for b in self.backends.all()))

    async def check(self, backend: Backend) -> None:
        """Probe one backend and put it in or out of rotation."""
        # A refusal or a non-200 is conclusive; a slow answer is not (a busy engine is slow,
        # not dead), so only `timeouts_to_mark_down` timeouts in a row take a backend out.
        timeout = aiohttp.ClientTimeout(total=self.config.timeout_s)
        try:
            async with self.http.get(f"{backend.url}/health", timeout=timeout) as response:
                status = response.status
        except TimeoutError:
            backend.consecutive_timeouts += 1
            if backend.consecutive_timeouts >= self.config.timeouts_to_mark_down:
                self._down(backend, f"health check timed out {backend.consecutive_timeouts} times")
            return
        except aiohttp.ClientError as error:
            self._down(backend, f"health check failed: {error!r}")
            return
        backend.consecutive_timeouts = 0
        if status != 200:
            self._down(backend, f"health check returned {status}")
            return
        if not (backend.healthy and backend.runner_checked):
            # Asked again whenever it comes back: it may have been restarted with other flags.
            mismatch = await self._runner_mismatch(backend, timeout)
            if mismatch is not None:
                self._down(backend, mismatch)
                return
        if not backend.healthy:
            log.info("backend %s is healthy again", backend.url)
        backend.healthy = True
        backend.last_error = None
        try:
            await self._scrape(backend, timeout)
        except (aiohttp.ClientError, TimeoutError, ValueError) as error:
            # Gauges and model lists are nice to have; they never take a backend out.
            log.debug("scraping %s failed: %s", backend.url, error)

    async def _runner_mismatch(
        self, backend: Backend, timeout: aiohttp.ClientTimeout
    ) -> str | None:
        headers = {"Authorization": f"Bearer {backend.api_key}"} if backend.api_key else {}
        try:
            seen = await served_runner(self.http, backend.url, headers, timeout)
        except (aiohttp.ClientError, TimeoutError) as error:
            # Not conclusive (the next round asks again); /health already passed.
            log.debug("asking %s for its runner failed: %s", backend.url, error)
            return None
        backend.runner_checked = True
        return runner_mismatch(backend.runner, seen)

    def _down(self, backend: Backend, reason: str) -> None:
        if backend.healthy:
            log.warning("backend %s taken out of rotation: %s", backend.url, reason)
        self.backends.mark_failed(backend, reason)

    async def _scrape(self, backend: Backend, timeout: aiohttp.ClientTimeout) -> None:
        # `timeout` is aiohttp's total, body included, so a trickling page is cut in time too.
        limit = self.config.max_page_bytes
        headers = {"Authorization": f"Bearer {backend.api_key}"} if backend.api_key else {}
        async with self.http.get(f"{backend.url}/metrics", timeout=timeout) as response:
            if response.status == 200:
                page = await read_bounded(response, limit)
                backend.engine_gauges = parse_engine_gauges(page.decode("utf-8", "replace"))
        async with self.http.get(
            f"{backend.url}/v1/models", timeout=timeout, headers=headers
        ) as response:
            if response.status == 200:
                data = orjson.loads(await read_bounded(response, limit))
                backend.served_models = served_models_of(data)

    def start(self) -> None:
        """Probe periodically in the background."""
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        """Stop probing."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.interval_s)
            try:
                await self.check_all()
            except Exception:
                log.exception("health check round failed")
