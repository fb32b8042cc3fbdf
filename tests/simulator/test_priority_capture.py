"""The simulator keeps each request's `priority`, so tests can check what a proxy sent."""

from __future__ import annotations

import httpx
import openai

from simulator.process import SimulatorProcess


def test_each_requests_priority_is_kept_by_response_id(
    sim: SimulatorProcess, client: openai.OpenAI
) -> None:
    chat = client.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=2,
        extra_body={"priority": 7},
    )
    plain = client.completions.create(model="tiny", prompt="hi", max_tokens=2)
    assert sim.timeline(chat.id)["priority"] == 7
    assert sim.timeline(plain.id)["priority"] == 0


def test_an_unknown_response_id_is_a_404(http: httpx.Client) -> None:
    response = http.get("/_sim/requests/chatcmpl-never-sent")
    assert response.status_code == 404
    assert response.json()["error"]["param"] == "response_id"
