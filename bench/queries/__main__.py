"""`python -m bench.queries`: the usage endpoint and dashboard panels over 10 million calls.

Creates a fresh database, generates `--rows` call rows spread over 30 days (several teams,
features and models) with INSERT ... SELECT generate_series, starts a gateway on it, and times
`GET /api/usage` (admin and team keys, windows from an hour to 30 days) and every dashboard
panel that reads the calls tables. Records the section in docs/benchmarks.md; `--smoke` uses a
few thousand rows.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import psycopg

from bench.harness.header import section_header
from bench.harness.record import DOC, publish
from bench.queries.explain import explain_sql, usage_plans
from bench.queries.generate import TEAMS, populate
from bench.queries.panels import time_panels
from bench.queries.report import Usage, queries_section
from bench.queries.rollups import backfill_rollups
from bench.queries.usage_api import Timed, time_usage
from simulator.process import SimulatorProcess
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; `--smoke` shrinks everything to seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--raw-repeats", type=int, default=3, help="repeats before the rollups exist (slow)"
    )
    parser.add_argument("--busy", default=None, help="a note on what else ran on the machine")
    parser.add_argument("--doc", default=str(DOC), help="where to record the section")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rows, args.repeats, args.raw_repeats = 6_000, 2, 1
    return args


def _team_ids(url: str) -> list[int]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT id FROM teams WHERE name = ANY(%s) ORDER BY id", (list(TEAMS),)
        ).fetchall()
    return [int(row[0]) for row in rows]


def _recent_call(url: str) -> str:
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT id FROM calls WHERE created_at > now() - interval '1 day' LIMIT 1"
        ).fetchone()
    assert row is not None, "no call in the last day"
    return str(row[0])


def explain(url: str, panels: list[Timed]) -> dict[str, list[str]]:
    """Plans of the usage statements (24 hours, 30 days) and of the slowest panel."""
    now = datetime.now(UTC)
    slowest = max(panels, key=lambda t: t.p95_ms)
    return {
        "usage, every team, 24 hours": usage_plans(url, now - timedelta(days=1), now),
        "usage, every team, 30 days": usage_plans(url, now - timedelta(days=30), now),
        f"slowest panel, {slowest.name}": explain_sql(url, slowest.sql),
    }


def main(argv: list[str] | None = None) -> str:
    """Generate, time, print and record; returns the section."""
    args = parse(argv)
    notes = ["Postgres as the machine runs it (shared_buffers, work_mem at their defaults)."]
    header = section_header("bench.queries", notes, busy=args.busy)
    with ExitStack() as exits:
        url = exits.enter_context(postgres_database("plumbline_bench"))
        keys = {"admin key": issue_key(url, "ops", admin=True)}
        team_keys = {team: issue_key(url, team) for team in TEAMS}
        keys["team key"] = team_keys["team-a"]
        seconds = populate(url, _team_ids(url), args.rows)
        simulator = exits.enter_context(SimulatorProcess())
        config = gateway_config(simulator.base_url, health={"interval_s": 5.0}, recording={})
        gateway = GatewayProcess(config, url)
        exits.enter_context(gateway)
        raw_usage = time_usage(gateway.url, keys, args.raw_repeats, expect="exact")
        rollup = backfill_rollups(url)
        usage = time_usage(gateway.url, keys, args.repeats, expect="histogram")
        boxes = {"call_id": _recent_call(url), "search": ""}
        found = time_panels(url, boxes, args.repeats)
        plans = explain(url, found)
    section = queries_section(header, Usage(raw_usage, rollup, usage), found, plans, seconds, args)
    return publish("Queries: usage endpoint and panels", "queries", section, args)


if __name__ == "__main__":
    main()
