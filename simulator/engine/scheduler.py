"""The engine clock: one task runs batch steps and wakes every running request per step."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable

from simulator.config import TimingConfig
from simulator.engine.sequence import (
    ABORTED,
    FINISHED,
    RUNNING,
    WAITING,
    EngineSequence,
    RequestHandle,
)
from simulator.metrics import EngineMetrics
from simulator.prefix_cache import PrefixCache

_TIMER_SLACK = 0.0006
_MAX_CATCH_UP = 0.05


class Engine:
    """Continuous batching: up to max_num_seqs run; each step costs prefill plus one decode."""

    def __init__(
        self,
        timing: TimingConfig,
        cache: PrefixCache,
        build_metrics: Callable[[Engine], EngineMetrics],
    ) -> None:
        self.timing = timing
        self.cache = cache
        self.waiting: deque[EngineSequence] = deque()
        self.running: dict[EngineSequence, None] = {}
        self.steps = 0
        self.max_running_seen = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.metrics = build_metrics(self)

    def start(self) -> None:
        """Start the clock task on the running loop (idempotent)."""
        if self._task is None or self._task.done():
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="sim-engine")

    async def stop(self) -> None:
        """Stop the clock task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def submit(self, handle: RequestHandle) -> None:
        """Queue a request's sequences; they are scheduled at the next step with free slots.

        Queue time counts from `handle.arrival` (when the HTTP request came in, so parsing and
        tokenising count as waiting), or from now if it is unset.
        """
        self.start()
        arrival = handle.arrival or time.perf_counter()
        self.metrics.record_request(len(handle.sequences), handle.max_tokens)
        for sequence in handle.sequences:
            sequence.arrival = arrival
            self._enqueue(sequence)
        self._wake.set()

    def _enqueue(self, sequence: EngineSequence) -> None:
        """Join the queue: at its end, or under `priority` before the first less urgent one."""
        if self.timing.scheduling_policy == "fcfs":
            self.waiting.append(sequence)
            return
        urgency = sequence.handle.priority
        for place, queued in enumerate(self.waiting):
            if queued.handle.priority > urgency:
                self.waiting.insert(place, sequence)
                return
        self.waiting.append(sequence)

    def abort(self, handle: RequestHandle) -> bool:
        """Cancel a request at once and free its slots; False if it had already ended."""
        if handle.done:
            return False
        handle.aborted = True
        now = time.perf_counter()
        for sequence in handle.sequences:
            if sequence.status == RUNNING:
                del self.running[sequence]
            elif sequence.status == WAITING:
                self.waiting.remove(sequence)
            else:
                continue
            sequence.status = ABORTED
            self._record_end(sequence, "abort", now)
        handle.event.set()
        self._wake.set()
        return True

    def fail_all(self) -> None:
        """The engine died: every queued and running request fails."""
        handles = {s.handle: None for s in (*self.waiting, *self.running)}
        self.waiting.clear()
        self.running.clear()
        for handle in handles:
            handle.failed = True
            handle.event.set()

    def kv_usage(self) -> float:
        """Fraction of KV blocks held by running sequences."""
        size = self.cache.block_size
        used = sum(-(-(s.prompt_len + s.emitted) // size) for s in self.running)
        return min(used / self.cache.num_blocks, 1.0)

    async def _run(self) -> None:
        previous_end: float | None = None
        while True:
            if not self.running and not self.waiting:
                previous_end = None
                self._wake.clear()
                await self._wake.wait()
                continue
            now = time.perf_counter()
            # A step starts when the previous one ended, even if the loop got here a little
            # late: the HTTP side's work must not slow the simulated GPU (as in vLLM, where
            # the engine runs in its own process). Far behind, the clock starts afresh.
            late = previous_end is None or now - previous_end > _MAX_CATCH_UP
            start = now if late or previous_end is None else previous_end
            admitted, prefill_tokens = self._admit(now)
            timing = self.timing
            step_ms = timing.prefill_ms_per_token * prefill_tokens
            if len(self.running) > len(admitted):
                step_ms += timing.decode_step_ms(len(self.running))
            previous_end = start + step_ms / 1000.0
            await _sleep_until(previous_end)
            self._emit(time.perf_counter(), prefill_tokens)

    def _admit(self, now: float) -> tuple[list[EngineSequence], int]:
        admitted: list[EngineSequence] = []
        prefill_tokens = 0
        limit = self.timing.max_num_seqs
        while self.waiting and len(self.running) < limit:
            sequence = self.waiting.popleft()
            sequence.status = RUNNING
            sequence.scheduled = now
            cached = 0
            if sequence.use_prefix_cache:
                cached = self.cache.lookup_and_insert(sequence.block_hashes, sequence.prompt_len)
            sequence.cached_tokens = cached
            self.metrics.record_scheduled(
                sequence.prompt_len, cached, sequence.use_prefix_cache and self.cache.enabled
            )
            prefill_tokens += sequence.prompt_len - cached
            self.running[sequence] = None
            admitted.append(sequence)
        self.max_running_seen = max(self.max_running_seen, len(self.running))
        return admitted, prefill_tokens

    def _emit(self, now: float, prefill_tokens: int) -> None:
        self.steps += 1
        woken: dict[RequestHandle, None] = {}
        # Sequences decoded in the same earlier step share one inter-token latency.
        latencies: dict[float, int] = {}
        emitted = 0
        for sequence in list(self.running):
            if sequence.emitted == 0:
                sequence.first_token = now
            else:
                latency = now - sequence.last_token
                latencies[latency] = latencies.get(latency, 0) + 1
            sequence.emitted += 1
            sequence.last_token = now
            emitted += 1
            woken[sequence.handle] = None
            if sequence.emitted >= sequence.num_tokens:
                del self.running[sequence]
                sequence.status = FINISHED
                sequence.handle.remaining -= 1
                self._record_end(sequence, sequence.finish_reason, now)
        for latency, count in latencies.items():
            self.metrics.itl.observe(latency, count)
        if emitted:
            self.metrics.generation_tokens.inc(emitted)
            self.metrics.iteration_tokens.observe(emitted + prefill_tokens)
        for handle in woken:
            handle.event.set()

    def _record_end(self, sequence: EngineSequence, reason: str, now: float) -> None:
        self.metrics.record_finished(
            reason,
            sequence.prompt_len,
            sequence.emitted,
            sequence.max_tokens,
            (sequence.arrival, sequence.scheduled, sequence.first_token, sequence.last_token, now),
        )


async def _sleep_until(deadline: float) -> None:
    """Sleep to a perf_counter deadline; uvloop timers round to whole milliseconds, so the
    last fraction is waited out by yielding to the loop."""
    remaining = deadline - time.perf_counter()
    if remaining > _TIMER_SLACK:
        await asyncio.sleep(remaining - _TIMER_SLACK)
    while time.perf_counter() < deadline:
        await asyncio.sleep(0)
    if remaining <= 0:
        await asyncio.sleep(0)
