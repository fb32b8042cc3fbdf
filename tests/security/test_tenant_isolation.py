"""Tenant isolation: walk every route with team A's key; team B's data is never seen or counted.

Routes come from the app itself (its OpenAPI and its route table), so a new route is walked
without editing this file, or fails the test until someone says how to fill its parameters.
For every id a route takes, B's id must get exactly the answer a never-used id gets (a 404
for path ids, an empty result for filters); and A's answers stay identical while B keeps
working, so no aggregate counts B.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gateway.api import vllm_route_table
from gateway.app import create_app
from gateway.config import GatewayConfig
from plumbline.settings import Settings
from tests.security.stack import SecurityStack, security_stack
from tests.security.tenant_world import (
    MISSING_CALL,
    MISSING_ID,
    Team,
    build_world,
    run_suite,
    send_calls,
    window,
)

pytestmark = pytest.mark.xdist_group("security-isolation")
# Not tenant data: service endpoints (see test_operator_endpoints) and the page's static files.
OPERATOR = {"/health", "/metrics", "/v1/models"}
OUTSIDE_SCHEMA = {
    "/api/openapi.json": "the schema",
    "/api/docs": "the schema viewer",
    "/docs/oauth2-redirect": "the schema viewer",
    "/v1/chat/completions": "proxy: walked in test_a_team_key_cannot_act_for_another_team",
    "/v1/completions": "proxy: walked in test_a_team_key_cannot_act_for_another_team",
    "/v1/responses": (
        "proxy: test_responses_store.py (test_another_team_gets_the_404_of_an_unknown_id; "
        "its retrieve and cancel routes are the proxy's, outside the schema)"
    ),
    "/v1/messages": "proxy: test_messages_attacks.py (cache salt, engine fields, URL sources)",
    "/v1/messages/count_tokens": "proxy: test_messages_attacks.py (same rules as /v1/messages)",
    **{
        path: (
            "proxy: no state kept per team upstream; acting for a team, the shared-engine fields "
            "and media: tests/gateway/test_pooling_hostile_input.py"
        )
        for path in (
            "/v1/embeddings",
            "/pooling",
            "/classify",
            "/score",
            "/v1/score",
            "/rerank",
            "/v1/rerank",
            "/v2/rerank",
            "/tokenize",
            "/detokenize",
        )
    },
    "/v1/audio/transcriptions": (
        "proxy: tests/gateway/audio/test_audio_upload_path.py (acting as another team, URL "
        "files, header tricks) and test_audio_hostile.py (multipart abuse)"
    ),
    "/v1/audio/translations": "proxy: the same kind as /v1/audio/transcriptions, another path",
    "/dashboard": "static page, no data (its JSON is /api/dashboard/*)",
    "/dashboard/": "redirect",
    "/dashboard/static/{build}/{name}": "static files",
    "/dashboard/{rest}": "static 404",
}
# vLLM's refused and operator paths answer a 404 whatever the key and are never forwarded
# (test_vllm_route_walk.py); its generate, batch chat and render routes are a team's own calls
# like chat's, read nothing stored (tests/gateway/test_other_routes.py).
OUTSIDE_SCHEMA.update(
    {
        path: f"vLLM route, {decision.decision}: docs/routes.md"
        for path, decision in vllm_route_table.VLLM_ROUTES.items()
        if decision.decision in (vllm_route_table.REFUSED, vllm_route_table.OPERATOR)
        or decision.detail in ("BatchChatCompletions", "TokensGenerate", "Render")
    }
)
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/evals/paraphrases/approve"): lambda ids: {"ids": ids["paraphrase_ids"]},
    ("POST", "/api/evals/paraphrases/reject"): lambda ids: {"ids": ids["paraphrase_ids"]},
    ("POST", "/api/evals/suites/{suite_id}/paraphrases/generate"): lambda ids: {"n": 1},
    ("POST", "/api/alerts/{alert_id}/ack"): lambda ids: {},
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    config = {"live_sampling": {"default": {"rate": 1.0}}}
    with security_stack("postgres", tmp_path_factory.mktemp("iso"), config=config) as running:
        yield running


@pytest.fixture(scope="module")
def teams(stack: SecurityStack) -> tuple[Team, Team]:
    return build_world(stack)


def _ids(team: Team) -> dict[str, Any]:
    return {
        "call_id": team.call_ids[0],
        "suite_id": team.suite_id,
        "run_id": team.run_id,
        "alert_id": team.alert_ids[0],
        "question_key": "q1",
        "feature": team.feature,
        "paraphrase_ids": team.paraphrase_ids,
        "prefix": "0123456789",  # admin routes: A is refused before any lookup
        "team": team.name,
        "model": "tiny",
        "operation": "reset_prefix_cache",
    }


def _missing(like: Team) -> dict[str, Any]:
    """Ids of the same shape as a team's that nothing has."""
    return {
        "call_id": MISSING_CALL,
        "suite_id": MISSING_ID,
        "run_id": MISSING_ID,
        "alert_id": MISSING_ID,
        "question_key": "q1",
        "feature": "no-such-feature",
        "paraphrase_ids": [MISSING_ID - i for i in range(len(like.paraphrase_ids))],
        "prefix": "0123456789",
        "team": "no-such-team",
        "model": "tiny",
        "operation": "reset_prefix_cache",
    }


def _operations(stack: SecurityStack) -> list[tuple[str, str, dict[str, Any]]]:
    schema = httpx.get(f"{stack.url}/api/openapi.json").json()
    return [
        (method.upper(), path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
    ]


def _request(
    client: httpx.Client, method: str, path: str, operation: dict[str, Any], ids: dict[str, Any]
) -> tuple[httpx.Response, list[str]]:
    """The response, and the id values the request carried (an error may echo them)."""
    make_body = BODIES.get((method, path))
    body = make_body(ids) if make_body else ({} if method in ("POST", "PATCH") else None)
    sent = [str(i) for i in ids["paraphrase_ids"]] if make_body and body else []
    params: dict[str, Any] = {}
    for parameter in operation.get("parameters", []):
        name = parameter["name"]
        if parameter["in"] == "path":
            if name not in ids:
                raise AssertionError(f"{method} {path}: no test value for path parameter {name}")
            path = path.replace("{" + name + "}", str(ids[name]))
            sent.append(str(ids[name]))
        elif name in ids:
            params[name] = ids[name]
            sent.append(str(ids[name]))
        elif name in ("since", "until"):
            params[name] = window()[name]
    return client.request(method, path, params=params, json=body), sent


def _normal(answer: tuple[httpx.Response, list[str]]) -> tuple[int, str]:
    response, sent = answer
    text = response.text
    for value in sorted(set(sent), key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(value)}\b", "<id>", text)
    return response.status_code, text


def _assert_nothing_of(
    team: Team, response: httpx.Response, where: str, echoed: tuple[str, ...] = ()
) -> None:
    """None of the team's strings, except those the request itself sent (answers echo them)."""
    for secret in team.secrets:
        if secret in echoed:
            continue
        assert secret not in response.text, f"{where} shows {secret!r}: {response.text[:400]}"


def _app_routes() -> set[str]:
    """Every path the app serves, from its own route table (whatever FastAPI wraps it in)."""
    app = create_app(Settings(), GatewayConfig(models=[{"name": "m", "backends": [{"url": "x"}]}]))

    def walk(routes: Any) -> Iterator[str]:
        for route in routes:
            path = getattr(route, "path_format", None) or getattr(route, "path", None)
            if path is not None:
                yield path
            elif hasattr(route, "effective_route_contexts"):
                yield from walk(route.effective_route_contexts())
            elif hasattr(route, "routes"):
                yield from walk(route.routes)

    return set(walk(app.routes))


def test_every_route_is_walked_or_explained(stack: SecurityStack) -> None:
    in_schema = {path for _, path, _ in _operations(stack)}
    served = _app_routes()
    assert len(served) > 30
    unexplained = served - in_schema - set(OUTSIDE_SCHEMA)
    assert not unexplained, f"routes neither in the OpenAPI nor explained here: {unexplained}"


def test_b_ids_get_exactly_what_unknown_ids_get(
    stack: SecurityStack, teams: tuple[Team, Team]
) -> None:
    alpha, beta = teams
    walked = 0
    with stack.api("alpha") as client:
        for method, path, operation in _operations(stack):
            if path in OPERATOR or (method, path) == ("POST", "/api/evals/suites"):
                continue
            if path.startswith("/api/admin"):
                refused, _ = _request(client, method, path, operation, _ids(beta))
                assert refused.status_code == 403, (method, path)
                continue
            answer = _request(client, method, path, operation, _ids(beta))
            theirs = answer[0]
            assert theirs.status_code < 500, (method, path, theirs.text)
            nobodys = _request(client, method, path, operation, _missing(beta))
            assert _normal(answer) == _normal(nobodys), (method, path)
            if "{" in path:
                assert theirs.status_code == 404, (method, path, theirs.text)
            _assert_nothing_of(beta, theirs, f"{method} {path}", echoed=tuple(answer[1]))
            walked += 1
    assert walked >= 20
    with stack.api("beta") as owner:
        for alert_id in beta.alert_ids:
            assert owner.get(f"/api/alerts/{alert_id}").json()["acknowledged_at"] is None
        runs = owner.get("/api/evals/runs", params={"suite_id": beta.suite_id}).json()["data"]
        paraphrases = owner.get(f"/api/evals/suites/{beta.suite_id}/paraphrases").json()
    assert len(runs) == 1  # A's start and resume did nothing to B's suite
    assert {p["status"] for p in paraphrases["data"]} == {"approved"}
    assert alpha.call_ids  # A's own walk below


def _snapshot(stack: SecurityStack, alpha: Team) -> dict[str, tuple[int, str]]:
    """Every GET route as A sees it, with A's ids and a fixed window."""
    seen = {}
    with stack.api("alpha") as client:
        for method, path, operation in _operations(stack):
            if method != "GET" or path in OPERATOR or path.startswith("/api/admin"):
                continue
            response, _ = _request(client, method, path, operation, _ids(alpha))
            assert response.status_code == 200, (path, response.text)
            seen[path] = (response.status_code, response.text)
    return seen


def test_a_sees_its_own_data_and_none_of_bs_and_b_moves_no_aggregate(
    stack: SecurityStack, teams: tuple[Team, Team]
) -> None:
    alpha, beta = teams
    before = _snapshot(stack, alpha)
    everything = "\n".join(text for _, text in before.values())
    for secret in beta.secrets:
        assert secret not in everything, secret
    assert alpha.feature in everything and alpha.call_ids[0] in everything
    assert alpha.marker in before["/api/calls/{call_id}"][1]  # A's own stored body

    send_calls(stack, beta, 4, start=100)  # more calls, errors, bodies, logprobs
    run_suite(stack, beta)  # another run; its alert fires again or stays firing
    with stack.api("admin") as admin:
        usage = admin.get("/api/usage", params=window()).json()["data"]
    assert any(row["feature"] == beta.feature for row in usage)  # B's activity is real

    after = _snapshot(stack, alpha)
    changed = [path for path in before if before[path] != after[path]]
    assert not changed, f"A's view changed while only B worked: {changed}"


def test_a_suite_named_like_bs_is_just_a_new_suite_for_a(
    stack: SecurityStack, teams: tuple[Team, Team]
) -> None:
    _, beta = teams
    headers = {"Content-Type": "application/yaml"}
    text = (
        "name: {name}\nteam: {team}\nmodel: tiny\n"
        "questions:\n  - {{id: q, text: Which one, answer: {{type: text}}}}\n"
    )
    with stack.api("alpha") as client:
        same_name = client.post(
            "/api/evals/suites",
            content=text.format(name=beta.suite_name, team="alpha"),
            headers=headers,
        )
        as_b = client.post(
            "/api/evals/suites", content=text.format(name="x", team="beta"), headers=headers
        )
        as_nobody = client.post(
            "/api/evals/suites", content=text.format(name="x", team="nobody"), headers=headers
        )
    assert same_name.status_code == 201 and same_name.json()["created"] is True
    assert as_b.status_code == as_nobody.status_code == 403
    assert as_b.text.replace("'beta'", "'T'") == as_nobody.text.replace("'nobody'", "'T'")


def test_a_team_key_cannot_act_for_another_team(stack: SecurityStack) -> None:
    def call(team: str) -> httpx.Response:
        return httpx.post(
            f"{stack.url}/v1/chat/completions",
            json={"model": "tiny", "messages": [{"role": "user", "content": "hi"}]},
            headers={"Authorization": f"Bearer {stack.keys['alpha']}", "X-Plumbline-Team": team},
            timeout=30,
        )

    theirs, nobodys = call("beta"), call("no-such-team")
    assert theirs.status_code == nobodys.status_code == 403
    assert theirs.json()["error"]["message"] == nobodys.json()["error"]["message"]
