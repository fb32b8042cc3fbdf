"""Broken and hostile eval suites, through the API and the CLI: a line and a field, never a 500.

Alias bombs and self-referencing aliases must be refused at once rather than expanded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.stack import SecurityStack, security_stack

pytestmark = pytest.mark.xdist_group("security-suites")
HEAD = "name: hostile\nteam: alpha\nmodel: tiny\nquestions:\n  - id: q\n    text: What is it?\n"
BOMB = (
    "name: bomb\nteam: alpha\nmodel: tiny\n"
    'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 9))
    + "questions:\n  - {id: q, text: *l8, answer: {type: text}}\n"
)
CASES = {
    "syntax": ("name: s\nteam: [unclosed\n", "line 3, (document): invalid YAML"),
    "answer type": (
        HEAD + "    answer: {type: numbr}\n",
        "line 7, questions[0].answer.type: unknown answer type 'numbr'",
    ),
    "regex that does not compile": (
        HEAD + '    answer:\n      type: regex\n      pattern: "(unclosed"\n',
        "line 9, questions[0].answer.pattern: invalid regex: missing )",
    ),
    "regex without the group": (
        HEAD + '    answer:\n      type: regex\n      pattern: "months"\n      group: 2\n',
        "line 8, questions[0].answer.regex: group 2 not in pattern (0 groups)",
    ),
    "alias bomb": (BOMB, "expands to more than 200000 nodes"),
    "self-referencing alias": ("a: &a [*a]\n", "line 1, (document): an alias refers to"),
    "python tag": (
        "x: !!python/object/apply:os.system [id]\n",
        "could not determine a constructor",
    ),
    "deep nesting": ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    "not a mapping": ("- a\n- b\n", "line 1, (document): a suite must be a YAML mapping"),
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    with security_stack("sqlite", tmp_path_factory.mktemp("suites")) as running:
        yield running


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_api_names_the_line_and_field(stack: SecurityStack, case: str) -> None:
    text, expected = CASES[case]
    with stack.api("alpha") as client:
        response = client.post(
            "/api/evals/suites", content=text, headers={"Content-Type": "application/yaml"}
        )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert expected in error["message"]


def test_oversized_and_undecodable_suites_are_refused(stack: SecurityStack) -> None:
    headers = {"Content-Type": "application/yaml"}
    with stack.api("alpha") as client:
        huge = client.post("/api/evals/suites", content=b"a: " + b"x" * (3 << 20), headers=headers)
        binary = client.post("/api/evals/suites", content=b"name: \xff\xfe", headers=headers)
        json = client.post(
            "/api/evals/suites", content=b"[" * 3000, headers={"Content-Type": "application/json"}
        )
    assert huge.status_code == 413 and binary.status_code == 400 and json.status_code == 400


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_cli_names_the_line_and_field(stack: SecurityStack, tmp_path: Path, case: str) -> None:
    text, expected = CASES[case]
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    env = {**os.environ, "PLUMBLINE_DATABASE__URL": stack.database_url, "COLUMNS": "300"}
    result = subprocess.run(
        [sys.executable, "-m", "apps.cli", "eval", "import", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
