"""`plumbline eval` end to end: a real gateway and simulator, the CLI as a user runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.evals_integration.scripted import scenarios, suite_yaml
from tests.evals_integration.stack import EvalStack, eval_stack

pytestmark = pytest.mark.xdist_group("evals_cli")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalStack]:
    """Simulator, gateway and a SQLite database the CLI shares with the gateway."""
    with eval_stack(
        "sqlite", tmp_path_factory.mktemp("cli"), {"scenarios": scenarios()}
    ) as running:
        yield running


def plumbline(
    stack: EvalStack, *args: str, api_key: str | None = "admin"
) -> subprocess.CompletedProcess[str]:
    """Run the CLI against the stack's database and gateway."""
    env = {
        **os.environ,
        "PLUMBLINE_DATABASE__URL": stack.database_url,
        "PLUMBLINE_EVAL__GATEWAY_URL": stack.gateway.url,
        "COLUMNS": "200",
    }
    env.pop("PLUMBLINE_EVAL__API_KEY", None)
    if api_key is not None:
        env["PLUMBLINE_EVAL__API_KEY"] = stack.admin_key
    return subprocess.run(
        [sys.executable, "-m", "apps.cli", "eval", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def suite_file(stack: EvalStack, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "contracts.yaml"
    path.write_text(suite_yaml("contracts", "legal", samples=10))
    assert "suite contracts (team legal, id 1) created" in ok(plumbline(stack, "import", str(path)))
    return path


def test_invalid_suite_file_names_the_line_and_field(stack: EvalStack, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(suite_yaml("bad", "legal").replace("type: number", "type: numbr"))
    result = plumbline(stack, "import", str(bad))
    assert result.returncode == 2
    assert "line 16, questions[0].answer.type: unknown answer type 'numbr'" in result.stderr


def test_running_without_an_eval_key_says_what_to_do(stack: EvalStack, suite_file: Path) -> None:
    result = plumbline(stack, "run", "contracts", api_key=None)
    assert result.returncode == 1
    assert "set PLUMBLINE_EVAL__API_KEY to an admin key" in result.stderr
    assert "no runs" in plumbline(stack, "runs", "contracts").stderr


def test_check_fails_a_run_whose_agreement_is_below_threshold(
    stack: EvalStack, tmp_path: Path
) -> None:
    only_cap = suite_yaml("cap-only", "legal", samples=10).split("  - id: law")[0]
    (tmp_path / "cap.yaml").write_text(only_cap)
    ok(plumbline(stack, "import", str(tmp_path / "cap.yaml")))
    result = plumbline(stack, "run", "cap-only", "--check")
    assert result.returncode == 3, result.stderr
    assert "note: question cap has 0 approved paraphrases" in result.stderr


def test_unknown_suite_says_to_import_it(stack: EvalStack) -> None:
    result = plumbline(stack, "paraphrases", "list", "nope")
    assert result.returncode == 1 and "import it first" in result.stderr


def test_generate_review_run_and_report(stack: EvalStack, suite_file: Path, tmp_path: Path) -> None:
    generated = ok(plumbline(stack, "paraphrases", "generate", "contracts", "--n", "5"))
    assert "cap: 3 pending, 2 dropped" in generated
    assert "dropped (drops 9.2): What is the cap on indemnity?" in generated
    pending = ok(plumbline(stack, "paraphrases", "list", "contracts", "--status", "pending"))
    ids = re.findall(r"^\s*(\d+)\s", pending, re.MULTILINE)
    assert len(ids) == 6
    ok(plumbline(stack, "paraphrases", "reject", ids[0]))
    approved = ok(plumbline(stack, "paraphrases", "approve", "--all-pending", "contracts"))
    assert approved.startswith("approved 5 paraphrases")

    result = plumbline(stack, "run", "contracts", "--check")
    # Two questions cannot show the suite below 0.9 (the question-clustered interval is wide).
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert 'cap: first divergence after "The indemnity cap is": " 12" p=0.46 vs " 24" p=0.41' in out
    assert "logprobs: raw_logprobs" in out
    # cap: canonical + 2 approved (one was rejected); law: canonical + 3 of its 4 approved
    # (paraphrases_per_question is 4); 10 samples each.
    assert re.search(r"samples\s.*70/70", result.stderr + out)
    run_id = re.search(r"^run (\d+)", result.stderr, re.MULTILINE)
    assert run_id is not None

    html = tmp_path / "report.html"
    ok(plumbline(stack, "report", run_id.group(1), "--format", "html", "--out", str(html)))
    assert "first divergence after" in html.read_text()
    for fmt in ("csv", "parquet"):
        ok(
            plumbline(
                stack, "report", run_id.group(1), "--format", fmt, "--out", str(tmp_path / fmt)
            )
        )
    questions = pd.read_parquet(tmp_path / "parquet" / "questions.parquet").set_index("question_id")
    assert questions.loc["cap", "divergence_verdict"] == "near_tie"
    assert pd.read_csv(tmp_path / "csv" / "run.csv").loc[0, "n_samples"] == 70
    terminal = ok(plumbline(stack, "report", run_id.group(1)))
    assert "near tie" in terminal
    listed = ok(plumbline(stack, "runs", "contracts"))
    assert re.search(rf"^\s*{run_id.group(1)}\s+contracts\s+completed\s+agreement", listed, re.M)
