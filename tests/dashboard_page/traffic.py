"""Product traffic through the gateway with the official openai SDK, as a product team sends it."""

from __future__ import annotations

import openai
from openai import OpenAI

CAP_QUESTION = "What is the indemnity cap under the master services agreement?"
LAW_QUESTION = "What is the governing law of the reseller agreement?"
# Markup in recorded data: the page must show it as text, never as elements or script.
HOSTILE_USER = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def send_traffic(gateway_url: str, key: str, feature: str, question: str, calls: int) -> list[str]:
    """`calls` chat calls with top-5 logprobs, alternately streamed; their call ids."""
    client = OpenAI(base_url=f"{gateway_url}/v1", api_key=key, max_retries=0)
    headers = {"X-Plumbline-Feature": feature, "X-Plumbline-User": "user-1"}
    ids = []
    for i in range(calls):
        raw = client.chat.completions.with_raw_response.create(
            model="tiny",
            messages=[{"role": "user", "content": question}],
            max_tokens=32,
            temperature=1.0,
            seed=100 + i,
            logprobs=True,
            top_logprobs=5,
            stream=i % 2 == 1,
            extra_headers=headers,
        )
        ids.append(raw.headers["x-plumbline-call-id"])
        parsed = raw.parse()
        if i % 2 == 1:
            for _ in parsed:
                pass
    return ids


def send_responses(gateway_url: str, key: str, feature: str, calls: int) -> list[str]:
    """`calls` Responses API calls, alternately streamed; their call ids."""
    client = OpenAI(base_url=f"{gateway_url}/v1", api_key=key, max_retries=0)
    headers = {"X-Plumbline-Feature": feature}
    ids = []
    for i in range(calls):
        raw = client.responses.with_raw_response.create(
            model="tiny",
            input=CAP_QUESTION,
            max_output_tokens=16,
            stream=i % 2 == 1,
            extra_headers=headers,
        )
        ids.append(raw.headers["x-plumbline-call-id"])
        parsed = raw.parse()
        if i % 2 == 1:
            for _ in parsed:
                pass
    return ids


def send_bad_requests(gateway_url: str, key: str, feature: str, calls: int) -> None:
    """Requests the backend refuses (400): they count as errors in the charts."""
    client = OpenAI(base_url=f"{gateway_url}/v1", api_key=key, max_retries=0)
    for _ in range(calls):
        try:
            client.chat.completions.create(
                model="tiny",
                messages=[{"role": "user", "content": "hello"}],
                top_logprobs=50,
                logprobs=True,
                extra_headers={"X-Plumbline-Feature": feature},
            )
        except openai.BadRequestError:
            continue
        raise AssertionError("the backend accepted top_logprobs=50")


def send_hostile_call(gateway_url: str, key: str) -> str:
    """One call whose end-user header is markup; its call id."""
    client = OpenAI(base_url=f"{gateway_url}/v1", api_key=key, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="tiny",
        messages=[{"role": "user", "content": CAP_QUESTION}],
        max_tokens=16,
        logprobs=True,
        top_logprobs=3,
        extra_headers={"X-Plumbline-Feature": "contracts", "X-Plumbline-User": HOSTILE_USER},
    )
    return str(raw.headers["x-plumbline-call-id"])
