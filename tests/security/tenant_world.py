"""Two teams' worth of everything (calls, bodies, logprobs, suites, runs, alerts), and their ids.

Team A is `alpha`, team B is `beta`. B's data carries markers (feature, end user, request ids,
prompt text, suite name) that must never show up in anything A's key can read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import httpx
import openai

from tests.security.evals import NEAR_TIE, import_and_run, suite_yaml
from tests.security.stack import SecurityStack
from tests.support.calls import CallReader
from tests.support.waiting import wait_for

MISSING_ID = 2**31 - 2
MISSING_CALL = "0000000000000000000000000000beef"
PROMPT = "{marker}: which governing law applies to the agreement?"


@dataclass
class Team:
    """One team's ids and the strings only its data contains."""

    name: str
    feature: str
    end_user: str
    marker: str
    suite_name: str
    call_ids: list[str] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=list)
    suite_id: int = 0
    run_id: int = 0
    alert_ids: list[int] = field(default_factory=list)
    paraphrase_ids: list[int] = field(default_factory=list)

    @property
    def secrets(self) -> list[str]:
        """Strings that identify this team's data."""
        return [
            self.feature,
            self.end_user,
            self.marker,
            self.suite_name,
            *self.call_ids,
            *self.request_ids,
        ]


def send_calls(stack: SecurityStack, team: Team, count: int, start: int = 0) -> None:
    """Product calls (streamed and not, with logprobs), plus one the backend refuses."""
    client = openai.OpenAI(base_url=f"{stack.url}/v1", api_key=stack.keys[team.name], max_retries=0)
    for i in range(start, start + count):
        request_id = f"{team.name}-req-{i}"
        raw = client.chat.completions.with_raw_response.create(
            model="tiny",
            messages=[{"role": "user", "content": PROMPT.format(marker=team.marker)}],
            max_tokens=16,
            logprobs=True,
            top_logprobs=3,
            stream=i % 2 == 1,
            extra_headers={
                "X-Plumbline-Feature": team.feature,
                "X-Plumbline-User": team.end_user,
                "X-Request-Id": request_id,
            },
        )
        parsed = raw.parse()
        if i % 2 == 1:
            list(parsed)  # type: ignore[call-overload]
        team.call_ids.append(str(raw.headers["x-plumbline-call-id"]))
        team.request_ids.append(request_id)
    refused = client.chat.completions.with_raw_response
    try:
        refused.create(
            model="tiny",
            messages=[{"role": "user", "content": team.marker}],
            logprobs=True,
            top_logprobs=50,
            extra_headers={"X-Plumbline-Feature": team.feature},
        )
    except openai.BadRequestError as error:
        team.call_ids.append(str(error.response.headers["x-plumbline-call-id"]))
    client.close()
    reader = CallReader(stack.database_url)
    for call_id in team.call_ids:
        reader.wait(call_id)
    reader.close()


def run_suite(stack: SecurityStack, team: Team) -> None:
    """Import the team's near-tie suite and run it; the run fires the suite alert."""
    with stack.api(team.name) as client:
        text = suite_yaml(team.suite_name, team.name, *NEAR_TIE)
        team.suite_id, team.run_id = import_and_run(client, text)
        # The alert decision is committed just after the run reads as completed.

        def alert_ids() -> list[int]:
            alerts = client.get("/api/alerts", params={"status": "all"}).json()["data"]
            return [a["id"] for a in alerts if a["suite_id"] == team.suite_id]

        team.alert_ids = wait_for(alert_ids, timeout=30, what="the suite's alert", poll=0.2)
        listed = client.get(f"/api/evals/suites/{team.suite_id}/paraphrases").json()["data"]
        team.paraphrase_ids = [p["id"] for p in listed]
    assert team.alert_ids and team.paraphrase_ids, team


def build_world(stack: SecurityStack) -> tuple[Team, Team]:
    """Both teams' traffic and evals; B stores bodies too, so there are bodies to leak."""
    with stack.api("admin") as admin:
        assert admin.patch("/api/admin/teams/beta", json={"store_bodies": True}).is_success
    alpha = Team("alpha", "alpha-feature", "alpha-user", "ALPHA-MARK", "alpha-suite")
    beta = Team("beta", "beta-feature", "beta-user-e7", "BETA-MARK-3c9", "beta-suite-x1")
    for team in (alpha, beta):
        send_calls(stack, team, 4)
        run_suite(stack, team)
    return alpha, beta


def window() -> dict[str, str]:
    """A fixed window around the test, so repeated reads are comparable."""
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    return {
        "since": (now - timedelta(hours=2)).isoformat(),
        "until": (now + timedelta(hours=2)).isoformat(),
    }


def get_json(client: httpx.Client, path: str, **params: object) -> httpx.Response:
    """A GET that must not fail on the server."""
    response = client.get(path, params=params)
    assert response.status_code < 500, (path, response.text)
    return response
