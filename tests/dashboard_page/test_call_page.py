"""A call in the browser: phase timeline from engine and client times, tokens by probability."""

from __future__ import annotations

import math
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.dashboard_page.browser import DashboardPage
from tests.dashboard_page.stack import DashboardStack
from tests.dashboard_page.traffic import HOSTILE_USER

pytestmark = [pytest.mark.xdist_group("dashboard_page"), pytest.mark.browser]


def call_detail(stack: DashboardStack, call_id: str) -> dict[str, Any]:
    with stack.api("legal") as legal:
        detail: dict[str, Any] = legal.get(f"/api/calls/{call_id}").json()
    return detail


def test_timeline_bars_follow_the_recorded_phases(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    streamed = stack.legal_calls[1]
    call = call_detail(stack, streamed)
    assert call["stream"] and call["ttft_ms"] and call["engine_decode_ms"]
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open(f"calls/{streamed}")
    rects = {
        phase: (float(ms), float(width), float(x))
        for phase, ms, width, x in zip(
            dashboard.attr_values("svg[data-chart=call-timeline] rect.phase", "data-phase"),
            dashboard.attr_values("svg[data-chart=call-timeline] rect.phase", "data-ms"),
            dashboard.attr_values("svg[data-chart=call-timeline] rect.phase", "width"),
            dashboard.attr_values("svg[data-chart=call-timeline] rect.phase", "x"),
            strict=True,
        )
    }
    fields = {
        "queue": "engine_queue_ms",
        "prefill": "engine_prefill_ms",
        "decode": "engine_decode_ms",
        "ttft": "ttft_ms",
        "client-decode": "decode_ms",
        "e2e": "e2e_ms",
    }
    assert set(rects) == set(fields)
    for phase, field in fields.items():
        assert rects[phase][0] == pytest.approx(call[field])
    scale = rects["e2e"][1] / call["e2e_ms"]
    for phase in ("decode", "ttft", "client-decode"):
        assert rects[phase][1] == pytest.approx(call[fields[phase]] * scale, rel=0.01)
    # Prefill starts where the queue ends; client decode where the first token arrived.
    assert rects["prefill"][2] == pytest.approx(rects["queue"][2] + rects["queue"][1], abs=0.05)
    assert rects["client-decode"][2] == pytest.approx(rects["ttft"][2] + rects["ttft"][1], abs=0.05)
    dashboard.screenshot("call-timeline")


def test_tokens_are_coloured_by_their_probability(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    call_id = stack.legal_calls[0]
    steps = call_detail(stack, call_id)["logprobs"]["choices"]["0"]
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open(f"calls/{call_id}")
    spans = dashboard.page.locator("#tokens span.tok")
    assert spans.count() == len(steps)
    assert "".join(spans.all_text_contents()) == "".join(s["token"] for s in steps)
    for step, p, cls in zip(
        steps,
        dashboard.attr_values("#tokens span.tok", "data-p"),
        dashboard.attr_values("#tokens span.tok", "class"),
        strict=True,
    ):
        probability = math.exp(step["logprob"])
        assert float(p) == pytest.approx(probability, abs=1e-5)
        assert f"p{min(9, math.floor(probability * 10))}" in (cls or "").split()

    # The least likely token is selected first, with its top-k alternatives as bars.
    lowest = min(range(len(steps)), key=lambda i: steps[i]["logprob"])
    assert dashboard.attr_values("#tokens span.tok.selected", "data-i") == [str(lowest)]
    bars = 'svg[data-chart="alternatives"] rect.bar'
    top = sorted(steps[lowest]["top_logprobs"], key=lambda a: -a["logprob"])
    assert dashboard.attr_values(bars, "data-label") == [a["token"] for a in top]
    values = [float(v) for v in dashboard.attr_values(bars, "data-value")]
    assert values == [pytest.approx(math.exp(a["logprob"])) for a in top]
    dashboard.screenshot("call-tokens")

    spans.nth(0).click()
    assert dashboard.attr_values("div.alternatives", "data-index") == ["0"]
    assert (
        dashboard.attr_values(bars, "data-label")[0]
        == max(steps[0]["top_logprobs"], key=lambda a: a["logprob"])["token"]
    )


def test_recorded_markup_is_shown_as_text(dashboard: DashboardPage, stack: DashboardStack) -> None:
    hostile = stack.legal_calls[-1]
    assert call_detail(stack, hostile)["end_user"] == HOSTILE_USER
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open(f"calls/{hostile}")
    assert HOSTILE_USER in dashboard.page.inner_text("main#view")
    assert dashboard.page.locator("main#view img, main#view script").count() == 0
    assert dashboard.page.evaluate("window.__pwned") is None


def test_the_page_refuses_markup_sinks(dashboard: DashboardPage, stack: DashboardStack) -> None:
    # Trusted Types (from the CSP): even a script that tried could not parse data as markup.
    dashboard.expected.append(r"requires 'TrustedHTML' assignment")
    dashboard.sign_in(stack.keys["legal"])
    with pytest.raises(PlaywrightError, match="TrustedHTML"):
        dashboard.page.evaluate("document.getElementById('view').innerHTML = '<b>x</b>'")
    assert dashboard.page.locator("main#view b").count() == 0
