"""Evals in the browser: runs with agreement intervals, a run's questions, a question's samples
side by side by answer with the divergent token's top-k alternatives as bars."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.dashboard_page.browser import DashboardPage
from tests.dashboard_page.stack import DashboardStack

pytestmark = [pytest.mark.xdist_group("dashboard_page"), pytest.mark.browser]


def legal_run(stack: DashboardStack) -> dict[str, Any]:
    with stack.api("legal") as legal:
        run: dict[str, Any] = legal.get(f"/api/evals/runs/{stack.legal_run}").json()
    return run


def test_runs_list_shows_agreement_and_its_interval(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open("evals")
    summary = legal_run(stack)["summary"]
    assert dashboard.attr_values("#runs-table tbody tr td:first-child a", "href") == [
        f"#/evals/runs/{stack.legal_run}"
    ]
    interval = dashboard.page.locator('#runs-table svg[data-chart="agreement"]')
    assert float(interval.get_attribute("data-point") or "nan") == pytest.approx(
        summary["agreement"]
    )
    assert float(interval.get_attribute("data-lower") or "nan") == pytest.approx(
        summary["agreement_lower"]
    )
    assert float(interval.get_attribute("data-upper") or "nan") == pytest.approx(
        summary["agreement_upper"]
    )
    assert (
        interval.locator("rect.range").count() == 1
        and interval.locator("line.threshold").count() == 1
    )
    text = dashboard.page.inner_text("#runs-table")
    assert f"{summary['agreement'] * 100:.1f}%" in text and "completed" in text
    dashboard.screenshot("evals-runs")


def test_run_view_lists_questions_with_the_near_tie(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open(f"evals/runs/{stack.legal_run}")
    rows = dashboard.page.locator("#questions-table tbody tr")
    assert rows.count() == 2
    cap = rows.filter(has_text="cap").first
    assert "near tie" in cap.inner_text() and '" 12" p=0.46 vs " 24" p=0.41' in cap.inner_text()
    # The critical question's interval lies wholly below the threshold: drawn as breaching.
    assert "below" in (cap.locator("svg.interval").get_attribute("class") or "")
    dashboard.screenshot("evals-run")


def test_question_view_groups_samples_and_charts_the_divergent_token(
    dashboard: DashboardPage, stack: DashboardStack
) -> None:
    dashboard.sign_in(stack.keys["legal"])
    dashboard.open(f"evals/runs/{stack.legal_run}/questions/cap")
    divergence = next(q for q in legal_run(stack)["questions"] if q["question_key"] == "cap")[
        "divergence"
    ]
    bars = 'svg[data-chart="divergence"] rect.bar'
    labels = dashboard.attr_values(bars, "data-label")
    values = [float(v) for v in dashboard.attr_values(bars, "data-value")]
    widths = [float(w) for w in dashboard.attr_values(bars, "width")]
    assert labels == [b["token"] for b in divergence["branches"]]
    assert labels[:2] == [" 12", " 24"]
    assert values[:2] == [pytest.approx(0.46, abs=0.005), pytest.approx(0.41, abs=0.005)]
    assert widths[0] / widths[1] == pytest.approx(values[0] / values[1], rel=0.01)
    assert widths == sorted(widths, reverse=True)
    assert dashboard.texts('svg[data-chart="divergence"] .bar-value')[:2] == ["0.46", "0.41"]

    with stack.api("legal") as legal:
        samples = legal.get(f"/api/dashboard/runs/{stack.legal_run}/questions/cap/samples").json()[
            "samples"
        ]
    by_answer = Counter(s["answer_key"] or "(no answer)" for s in samples)
    groups = dashboard.attr_values("section.answer-group", "data-answer")
    assert groups[0] == divergence["modal_answer"] == "12 month"
    assert set(groups) == set(by_answer)
    for answer, count in by_answer.items():
        cards = dashboard.page.locator(f'section.answer-group[data-answer="{answer}"] li.sample')
        assert cards.count() == count
    marked = dashboard.texts('section.answer-group[data-answer="24 month"] mark.divergent')
    assert marked and set(marked) == {"24"}
    assert set(dashboard.texts('section.answer-group[data-answer="12 month"] mark.divergent')) == {
        "12"
    }
    dashboard.screenshot("evals-question")

    # A sample's call opens in the call view: eval calls belong to the suite's team.
    first = dashboard.page.locator('section.answer-group[data-answer="24 month"] li.sample a').first
    call_route = (first.get_attribute("href") or "").removeprefix("#/")
    dashboard.open(call_route)
    assert "24 months" in dashboard.page.inner_text("#tokens")
