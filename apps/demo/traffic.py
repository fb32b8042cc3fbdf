"""Mixed product traffic through the gateway with the official OpenAI SDK."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

import openai
from rich.progress import Progress

QUESTIONS = {
    "contracts": [
        "What is the indemnity cap in the master services agreement?",
        "What is the governing law of this contract?",
        "What is the notice period for termination?",
    ],
    "support": ["How do I reset my password?", "Why was my card declined?"],
    "search": ["best practices for contract renewal", "late payment interest clause"],
}


@dataclass
class TrafficSummary:
    """What the demo sent and what came back."""

    calls: int = 0
    streamed: int = 0
    failed: int = 0


async def _one(
    client: openai.AsyncOpenAI, feature: str, question: str, stream: bool, summary: TrafficSummary
) -> None:
    headers = {"X-Plumbline-Feature": feature, "X-Plumbline-User": f"user-{random.randint(1, 9)}"}
    messages: list[openai.types.chat.ChatCompletionMessageParam] = [
        {"role": "user", "content": question}
    ]
    try:
        if stream:
            response = await client.chat.completions.create(
                model="contracts-llm",
                messages=messages,
                stream=True,
                max_tokens=48,
                extra_headers=headers,
            )
            async for _ in response:
                pass
            summary.streamed += 1
        else:
            await client.chat.completions.create(
                model="contracts-llm", messages=messages, max_tokens=48, extra_headers=headers
            )
    except openai.APIError:
        summary.failed += 1
    summary.calls += 1


async def send_traffic(base_url: str, key: str, total: int, concurrency: int = 8) -> TrafficSummary:
    """Send `total` calls across features, about a third of them streamed."""
    summary = TrafficSummary()
    rng = random.Random(7)
    limit = asyncio.Semaphore(concurrency)
    async with openai.AsyncOpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0) as client:
        with Progress(transient=True) as progress:
            task = progress.add_task("product traffic through the gateway", total=total)

            async def worker() -> None:
                async with limit:
                    feature = rng.choice(list(QUESTIONS))
                    await _one(
                        client,
                        feature,
                        rng.choice(QUESTIONS[feature]),
                        rng.random() < 0.35,
                        summary,
                    )
                    progress.advance(task)

            await asyncio.gather(*(worker() for _ in range(total)))
    return summary
