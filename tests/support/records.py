"""Build realistic CallRecords for tests of the recording path."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import orjson

from gateway.ids import new_call_id
from gateway.metering.record import CallRecord
from plumbline.logprob_codec import CHAT


def logprob_entries(tokens: int, k: int) -> list[dict[str, object]]:
    """`tokens` chat logprob entries with k alternatives each, float32-exact values."""
    entries = []
    for i in range(tokens):
        token = f" w{i % 50}"
        alternatives = [(token, math.log(0.5))] + [
            (f" a{j}", math.log(0.5 / (j + 2))) for j in range(k - 1)
        ]
        entries.append(
            {
                "token": token,
                "logprob": alternatives[0][1],
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {
                        "token": t,
                        "logprob": float.fromhex(float(v).hex()),
                        "bytes": list(t.encode()),
                    }
                    for t, v in alternatives
                ],
            }
        )
    return entries


def make_record(
    team_id: int | None = 1, tokens: int = 20, k: int = 5, **fields: object
) -> CallRecord:
    """A finished streamed chat call with usage, engine metrics and logprobs."""
    values: dict[str, Any] = dict(
        id=new_call_id(),
        created_at=datetime.now(UTC),
        request_id="req-" + new_call_id(),
        endpoint="/v1/chat/completions",
        team_id=team_id,
        team_name="team-a",
        feature="chat",
        model="tiny",
        backend="http://127.0.0.1:1",
        stream=True,
        t_arrival=100.0,
        t_done=100.5,
        token_chunk_times=[100.1 + 0.01 * i for i in range(tokens)],
        usage={"prompt_tokens": 30, "completion_tokens": tokens, "total_tokens": 30 + tokens},
        engine_metrics={
            "queue_time_ms": 1.0,
            "time_to_first_token_ms": 50.0,
            "generation_time_ms": 190.0,
            "mean_itl_ms": 10.0,
        },
        logprob_format=CHAT if k >= 0 else None,
        logprob_k=k,
        logprob_chunks=[(0, orjson.dumps(logprob_entries(tokens, k))[1:-1])] if tokens else [],
        price_in=0.5,
        price_out=1.5,
    )
    return CallRecord(**(values | fields))
