"""`plumbline alerts` and `plumbline stability` as an on-call engineer runs them."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from plumbline.child_process import plumbline_command
from plumbline.db import create_db_engine, make_session_factory
from plumbline.settings import NotifySettings
from tests.alerts.scored_runs import BAD, decide, import_alerting_suite, new_run
from tests.support.databases import sqlite_database


def _run(*args: str, database: str) -> subprocess.CompletedProcess[str]:
    env = {"PLUMBLINE_DATABASE__URL": database, "PATH": "/usr/bin:/bin", "USER": "oncall"}
    return subprocess.run(
        plumbline_command(*args), capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_list_show_and_acknowledge(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as database:
        engine = create_db_engine(database)
        sessions = make_session_factory(engine)
        suite_id = import_alerting_suite(sessions, "contracts")
        for _ in range(2):
            decide(sessions, "contracts", new_run(sessions, suite_id), BAD, NotifySettings())
        engine.dispose()
        listed = _run("alerts", "list", database=database)
        assert listed.returncode == 0, listed.stderr
        match = re.search(
            r"^\s*(\d+)\s+firing\s+legal/contracts\s+question:cap", listed.stdout, re.M
        )
        assert match, listed.stdout
        alert_id = match.group(1)
        acked = _run("alerts", "ack", alert_id, database=database)
        assert acked.returncode == 0, acked.stderr
        assert re.search(r"acknowledged\s.*ack by oncall", acked.stdout)
        again = _run("alerts", "ack", alert_id, "--by", "bob", database=database)
        assert again.returncode == 1
        assert "only a firing alert can be acknowledged" in again.stderr
        shown = _run("alerts", "show", alert_id, database=database)
        assert (
            "fired" in shown.stdout and "acknowledged" in shown.stdout and "oncall" in shown.stdout
        )
        still_open = _run("alerts", "list", database=database).stdout
        assert re.search(rf"^\s*{alert_id}\s+acknowledged\s", still_open, re.M)
        resolved = _run("alerts", "list", "--status", "resolved", database=database)
        assert resolved.stdout == "" and resolved.stderr.strip() == "no resolved alerts"
        bad = _run("alerts", "list", "--status", "bogus", database=database)
        assert bad.returncode == 1 and "Unknown alert status 'bogus'" in bad.stderr
        missing = _run("alerts", "ack", "9999", database=database)
        assert missing.returncode == 1 and "No alert 9999" in missing.stderr
        quiet = _run("stability", "near-ties", database=database)
        assert quiet.returncode == 0 and "no calls with logprobs" in quiet.stderr
