"""Small suites per team, imported and run through the eval API like a team would."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.waiting import wait_for

YAML = {"Content-Type": "application/yaml"}


def suite_yaml(name: str, team: str, question: str, answer: str) -> str:
    """A one-question suite, 3 wordings x 8 samples, whose critical question alerts at once."""
    return f"""\
name: {name}
team: {team}
model: tiny
sampling: {{temperature: 1.0, max_tokens: 32, seed_policy: per_sample, seed: 3}}
paraphrases_per_question: 3
samples_per_paraphrase: 8
threshold: 0.9
alert:
  suite: {{consecutive: 1}}
  critical: {{consecutive: 1}}
questions:
  - id: q1
    text: {question}
    answer: {answer}
    critical: true
    paraphrases:
      - "{question} Answer briefly."
      - "Briefly: {question}"
"""


NEAR_TIE = ("What is the indemnity cap in months?", "{type: number, unit: months}")
STABLE = ("Which governing law applies?", "{type: choice, options: [england, france]}")


def import_and_run(client: httpx.Client, text: str, timeout: float = 120) -> tuple[int, int]:
    """(suite id, run id) once the run has finished."""
    created = client.post("/api/evals/suites", content=text, headers=YAML)
    assert created.status_code == 201, created.text
    suite_id = int(created.json()["suite"]["id"])
    started = client.post(f"/api/evals/suites/{suite_id}/runs")
    assert started.status_code == 202, started.text
    run_id = int(started.json()["id"])

    def finished() -> dict[str, Any] | None:
        run: dict[str, Any] = client.get(f"/api/evals/runs/{run_id}").json()
        return run if run["status"] in ("completed", "partial", "failed") else None

    run = wait_for(finished, timeout=timeout, what=f"run {run_id} to finish", poll=0.3)
    assert run["status"] == "completed", run
    return suite_id, run_id
