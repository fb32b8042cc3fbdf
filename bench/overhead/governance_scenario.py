"""`python -m bench.overhead --governance`: what the checks cost a call, in its own section."""

from __future__ import annotations

import argparse

from bench.harness.header import section_header
from bench.harness.record import publish
from bench.overhead.governance import measure_governance
from bench.overhead.governance_report import TITLE, governance_section
from bench.overhead.governance_sides import GOVERNANCE_SIDES
from bench.overhead.latency import Phase

NOTES = [
    "Sides: two Plumbline gateways in front of one simulator, on one Postgres database "
    "(recording every call with top-5 logprob capture, default batching) and one Redis "
    "(`limits.rate_limits.store: redis`, the team's rpm and tpm at 10^9 so nothing is "
    "refused), differing only in governance. Off: a legacy key (no scopes, no expiry) of a "
    "team with no budgets and no model lists, on a model without shedding. On: a key scoped "
    "to `inference` expiring in 30 days, day and month budgets of 10^9 on the key and on its "
    "team, model lists of a few patterns on both (team `tiny, tiny-*, bench-*, llama-*`, key "
    "`ti*, bench-eval, qwen-*`), and shedding on the model with thresholds the load never "
    "reaches (queue depth and in-flight 10^6, KV cache 100%). Requests as in the overhead "
    "section; added latency is the median over rounds of (on - off) within the same round. "
    "Run it with `.venv/bin/python -m bench.overhead --governance` (`make bench` runs the "
    "plain overhead scenario only; `--rounds`, `--seconds`, `--light-rate`, `--load-rate`, "
    "`--light-streams` and `--check-calls` size it).",
]


def run_governance(args: argparse.Namespace) -> str:
    """The governance scenario: measure, print and record its own section."""
    phases = [
        Phase("plain", args.light_rate),
        Phase("plain", args.load_rate),
        Phase("stream", args.light_streams),
    ]
    run = measure_governance(GOVERNANCE_SIDES, phases, args.rounds, args.seconds, args.check_calls)
    header = section_header("bench.overhead", NOTES, busy=args.busy)
    return publish(TITLE, "overhead-governance", governance_section(header, run), args)
