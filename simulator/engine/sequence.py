"""What the engine tracks per sequence (one per choice) and per request (a group of choices)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

WAITING, RUNNING, FINISHED, ABORTED = "waiting", "running", "finished", "aborted"


class EngineSequence:
    """One choice: how many tokens it will emit and when each phase happened (loop time)."""

    __slots__ = (
        "arrival",
        "block_hashes",
        "cached_tokens",
        "emitted",
        "finish_reason",
        "first_token",
        "handle",
        "index",
        "last_token",
        "max_tokens",
        "num_tokens",
        "prompt_len",
        "scheduled",
        "status",
        "use_prefix_cache",
    )

    def __init__(
        self,
        handle: RequestHandle,
        index: int,
        num_tokens: int,
        finish_reason: str,
        prompt: tuple[int, Sequence[int]],
    ) -> None:
        self.handle = handle
        self.index = index
        self.num_tokens = num_tokens
        self.finish_reason = finish_reason
        self.max_tokens = handle.max_tokens
        self.prompt_len, self.block_hashes = prompt
        self.use_prefix_cache = handle.use_prefix_cache
        self.emitted = 0
        self.cached_tokens = 0
        self.arrival = self.scheduled = self.first_token = self.last_token = 0.0
        self.status = WAITING

    def timings_ms(self) -> dict[str, float | None]:
        """vLLM's per-request `metrics` object, from this sequence's measured phases."""
        count = self.emitted
        decode = self.last_token - self.first_token
        span = self.last_token - self.scheduled
        return {
            "time_to_first_token_ms": (self.first_token - self.scheduled) * 1000.0,
            "generation_time_ms": decode * 1000.0,
            "queue_time_ms": (self.scheduled - self.arrival) * 1000.0,
            "mean_itl_ms": decode * 1000.0 / (count - 1) if count > 1 else None,
            "tokens_per_second": count / span if span > 0 else 0.0,
            "speculative_decoding": None,
        }


class RequestHandle:
    """The sequences of one HTTP request and the event that wakes its response writer."""

    __slots__ = (
        "aborted",
        "arrival",
        "disconnected_at",
        "event",
        "failed",
        "max_tokens",
        "priority",
        "remaining",
        "sequences",
        "use_prefix_cache",
    )

    def __init__(
        self, use_prefix_cache: bool, max_tokens: int, arrival: float = 0.0, priority: int = 0
    ) -> None:
        self.arrival = arrival
        self.priority = priority
        self.use_prefix_cache = use_prefix_cache
        self.max_tokens = max_tokens
        self.sequences: list[EngineSequence] = []
        self.event = asyncio.Event()
        self.remaining = 0
        self.aborted = False
        self.failed = False
        self.disconnected_at: float | None = None

    def add(
        self, num_tokens: int, finish_reason: str, prompt_len: int, block_hashes: Sequence[int]
    ) -> EngineSequence:
        """Add a choice that will emit `num_tokens` tokens after its prompt."""
        sequence = EngineSequence(
            self, len(self.sequences), num_tokens, finish_reason, (prompt_len, block_hashes)
        )
        self.sequences.append(sequence)
        self.remaining += 1
        return sequence

    @property
    def done(self) -> bool:
        """Every sequence has finished (or the request ended early)."""
        return self.remaining == 0 or self.aborted or self.failed
