"""Call records: 200-token streamed chat calls, logprobs from the simulator or a realistic model."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import cycle, islice

import httpx
import orjson

from bench.recording.realistic import RealisticLogprobs
from gateway.metering.record import CallRecord
from plumbline.logprob_codec import CHAT
from simulator.process import SimulatorProcess
from tests.support.records import make_record

TOKENS = 200
TOP_K = 5


def simulator_logprobs(variants: int, tokens: int = TOKENS, k: int = TOP_K) -> list[list[bytes]]:
    """Per-token logprob items (the bytes a stream's chunks carry) of `variants` seeded answers."""
    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Summarise the termination clause."}],
        "max_tokens": tokens,
        "ignore_eos": True,
        "logprobs": True,
        "top_logprobs": k,
    }
    timing = {"prefill_ms_per_token": 0.0, "decode_ms_per_token": 0.0}
    found = []
    with SimulatorProcess({"timing": timing}) as simulator:
        for seed in range(variants):
            response = httpx.post(
                f"{simulator.base_url}/v1/chat/completions", json={**body, "seed": seed}
            )
            response.raise_for_status()
            content = response.json()["choices"][0]["logprobs"]["content"]
            found.append([orjson.dumps(item) for item in content])
    return found


def realistic_logprobs(variants: int, tokens: int = TOKENS, k: int = TOP_K) -> list[list[bytes]]:
    """Per-token logprob items of `variants` answers shaped like a real 128k-vocabulary model's."""
    source = RealisticLogprobs()
    return [source.answer(tokens, k) for _ in range(variants)]


class RecordFactory:
    """Finished streamed calls; their logprobs one chunk per token, as the proxy keeps them."""

    def __init__(self, variants: list[list[bytes]], tokens: int = TOKENS) -> None:
        # Chunk lists and timings are shared between records: the sink only reads them.
        self._chunks = [[(0, item) for item in items[:tokens]] for items in variants]
        self._times = [100.1 + 0.01 * i for i in range(tokens)]
        self._usage = {
            "prompt_tokens": 30,
            "completion_tokens": tokens,
            "total_tokens": 30 + tokens,
        }
        self.tokens = tokens

    def records(self, count: int, *, logprobs: bool) -> list[CallRecord]:
        """`count` records, cycling through the answers the simulator gave."""
        return list(islice(self._iter(logprobs), count))

    def _iter(self, logprobs: bool) -> Iterator[CallRecord]:
        for chunks in cycle(self._chunks):
            yield make_record(
                tokens=0,
                token_chunk_times=self._times,
                t_done=self._times[-1] + 0.01,
                usage=self._usage,
                logprob_format=CHAT if logprobs else None,
                logprob_k=TOP_K if logprobs else 0,
                logprob_mode="raw_logprobs" if logprobs else None,
                logprob_chunks=chunks if logprobs else [],
            )
