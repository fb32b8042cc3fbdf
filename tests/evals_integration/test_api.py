"""The eval API on a real gateway: suites, paraphrase review, runs in the background, reports."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from plumbline.models import Call, Team
from tests.evals_integration.scripted import scenarios, suite_yaml
from tests.evals_integration.stack import EvalStack, eval_stack
from tests.support.gateway_process import issue_key
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("evals_api")
YAML = {"Content-Type": "application/yaml"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalStack]:
    """Simulator, gateway and Postgres for the API tests."""
    with eval_stack(
        "postgres", tmp_path_factory.mktemp("api"), {"scenarios": scenarios()}
    ) as running:
        yield running


@pytest.fixture(scope="module")
def keys(stack: EvalStack) -> dict[str, str]:
    """A key of the legal team, one of the sales team, and the admin key."""
    return {
        "legal": issue_key(stack.database_url, "legal"),
        "sales": issue_key(stack.database_url, "sales"),
        "admin": stack.admin_key,
    }


def api(stack: EvalStack, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=stack.gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
    )


def error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The OpenAI-shaped error of a response that must have this status."""
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert set(body) == {"message", "type", "param", "code"} and body["code"] == status
    return dict(body)


@pytest.fixture(scope="module")
def suite_id(stack: EvalStack, keys: dict[str, str]) -> int:
    with api(stack, keys["legal"]) as legal:
        created = legal.post(
            "/api/evals/suites", content=suite_yaml("contracts", "legal"), headers=YAML
        )
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["created"], body["added"], body["suite"]["team"]) == (
        True,
        ["cap", "law"],
        "legal",
    )
    return int(body["suite"]["id"])


def test_bad_suites_get_clear_400s_and_foreign_teams_403(
    stack: EvalStack, keys: dict[str, str]
) -> None:
    with api(stack, keys["legal"]) as legal:
        bad_yaml = suite_yaml("x", "legal").replace("type: number", "type: numbr")
        body = error(legal.post("/api/evals/suites", content=bad_yaml, headers=YAML), 400)
        assert "line 16, questions[0].answer.type: unknown answer type 'numbr'" in body["message"]
        assert body["param"] == "questions[0].answer.type"
        as_json = legal.post("/api/evals/suites", json={"name": "x", "team": "legal"})
        assert "questions: required field missing" in error(as_json, 400)["message"]
        error(legal.post("/api/evals/suites", content=b"\xff\xfe", headers=YAML), 400)
        error(legal.post("/api/evals/suites", content="", headers=YAML), 400)
    with api(stack, keys["sales"]) as sales:
        foreign = sales.post("/api/evals/suites", content=suite_yaml("y", "legal"), headers=YAML)
        assert "belongs to team 'sales'" in error(foreign, 403)["message"]
    with httpx.Client(base_url=stack.gateway.url) as anonymous:
        error(anonymous.get("/api/evals/suites"), 401)


def test_suites_are_visible_to_their_team_and_admins_only(
    stack: EvalStack, keys: dict[str, str], suite_id: int
) -> None:
    with api(stack, keys["sales"]) as sales:
        assert sales.get("/api/evals/suites").json() == {"data": []}
        error(sales.get(f"/api/evals/suites/{suite_id}"), 404)
        error(sales.get(f"/api/evals/suites/{suite_id}/paraphrases"), 404)
        error(sales.post(f"/api/evals/suites/{suite_id}/runs"), 404)
    with api(stack, keys["admin"]) as admin:
        names = [s["name"] for s in admin.get("/api/evals/suites").json()["data"]]
        assert "contracts" in names
    with api(stack, keys["legal"]) as legal:
        suite = legal.get(f"/api/evals/suites/{suite_id}").json()
        assert [q["key"] for q in suite["questions"]] == ["cap", "law"]
        assert suite["paraphrases"] == {"approved": 1}  # the one written in the suite


def test_generate_review_run_and_report(
    stack: EvalStack, keys: dict[str, str], suite_id: int
) -> None:
    with api(stack, keys["legal"]) as legal:
        generated = legal.post(f"/api/evals/suites/{suite_id}/paraphrases/generate", json={"n": 5})
        assert generated.status_code == 200, generated.text
        by_key = {g["question_key"]: g for g in generated.json()["data"]}
        assert len(by_key["cap"]["added"]) == 3 and len(by_key["cap"]["skipped"]) == 2
        error(legal.post(f"/api/evals/suites/{suite_id}/paraphrases/generate", json={"n": 0}), 400)
        pending = legal.get(
            f"/api/evals/suites/{suite_id}/paraphrases", params={"status": "pending"}
        )
        ids = [p["id"] for p in pending.json()["data"]]
        assert len(ids) == 6
        error(legal.get(f"/api/evals/suites/{suite_id}/paraphrases", params={"status": "odd"}), 400)
        missing = legal.post("/api/evals/paraphrases/approve", json={"ids": [ids[0], 999999]})
        assert "999999" in error(missing, 404)["message"]
        approved = legal.post("/api/evals/paraphrases/approve", json={"ids": ids})
        assert approved.json() == {"ids": sorted(ids), "status": "approved"}

        started = legal.post(f"/api/evals/suites/{suite_id}/runs")
        assert started.status_code == 202, started.text
        run_id = started.json()["id"]
        assert started.json()["n_samples"] == 80
        run = wait_for_run(legal, run_id)
        assert (run["status"], run["samples"]) == ("completed", {"done": 80})
        assert run["summary"]["logprob_mode"] == "raw_logprobs"
        cap = next(q for q in run["questions"] if q["question_key"] == "cap")
        assert cap["divergence_verdict"] == "near_tie" and cap["agreement_upper"] < 0.9
        branches = cap["divergence"]["branches"]
        assert [b["token"] for b in branches[:2]] == [" 12", " 24"]
        assert branches[0]["probability"] == pytest.approx(0.46, abs=0.005)
        assert branches[1]["probability"] == pytest.approx(0.41, abs=0.005)

        html = legal.get(f"/api/evals/runs/{run_id}/report")
        assert html.headers["content-type"].startswith("text/html")
        assert "first divergence after" in html.text
        csv = legal.get(f"/api/evals/runs/{run_id}/report", params={"format": "csv"})
        assert csv.text.splitlines()[0].startswith("question_id,n_samples")
        error(legal.get(f"/api/evals/runs/{run_id}/report", params={"format": "pdf"}), 400)
        listed = legal.get("/api/evals/runs", params={"suite_id": suite_id}).json()["data"]
        assert [r["id"] for r in listed] == [run_id]
    with api(stack, keys["sales"]) as sales:
        error(sales.get(f"/api/evals/runs/{run_id}"), 404)
        assert sales.get("/api/evals/runs").json() == {"data": []}
    with stack.sessions() as session:
        teams = set(session.scalars(select(Call.team_id).where(Call.feature == "eval:contracts")))
        legal_id = session.scalar(select(Team.id).where(Team.name == "legal"))
    assert teams == {legal_id}


def test_unscored_and_unknown_runs_say_why(stack: EvalStack, keys: dict[str, str]) -> None:
    with api(stack, keys["legal"]) as legal:
        assert "No run 424242" in error(legal.get("/api/evals/runs/424242"), 404)["message"]
        error(legal.get("/api/evals/runs/424242/report"), 404)
        error(legal.post("/api/evals/runs/424242/resume"), 404)
        error(legal.get("/api/evals/runs/abc"), 400)


def wait_for_run(client: httpx.Client, run_id: int, timeout_s: float = 120.0) -> dict[str, Any]:
    """Poll a run until it leaves pending/running."""

    def finished() -> dict[str, Any] | None:
        run = client.get(f"/api/evals/runs/{run_id}")
        assert run.status_code == 200, run.text
        return None if run.json()["status"] in ("pending", "running") else dict(run.json())

    return wait_for(finished, timeout=timeout_s, what=f"run {run_id} to finish", poll=0.2)


def test_out_of_range_ids_and_oversized_names_are_400s_not_500s(
    stack: EvalStack, keys: dict[str, str]
) -> None:
    huge = 2**40
    with api(stack, keys["admin"]) as admin:
        error(admin.get(f"/api/evals/suites/{huge}"), 400)
        error(admin.get(f"/api/evals/runs/{huge}"), 400)
        error(admin.get("/api/evals/runs", params={"suite_id": huge}), 400)
        error(admin.post("/api/evals/paraphrases/approve", json={"ids": [huge]}), 400)
        error(admin.post("/api/evals/paraphrases/reject", json={"ids": []}), 400)
        long_team = suite_yaml("z", "t" * 200)
        message = error(admin.post("/api/evals/suites", content=long_team, headers=YAML), 400)
        assert "team: at most 128 characters" in message["message"]
        long_model = suite_yaml("z", "legal").replace("model: tiny", "model: " + "m" * 300)
        error(admin.post("/api/evals/suites", content=long_model, headers=YAML), 400)
        error(admin.post("/api/evals/suites", content="[1, 2]", headers=YAML), 400)
        error(
            admin.post(
                "/api/evals/suites", content="[1, 2]", headers={"Content-Type": "application/json"}
            ),
            400,
        )
