"""The demo script: the whole story on the embedded default, then a dashboard left running."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rich.console import Console

from apps.demo import stability_step
from apps.demo.show import live_agreement, near_tie, usage_table
from apps.demo.stack import DemoStack
from apps.demo.traffic import send_traffic
from plumbline.db import create_db_engine, make_session_factory

RUN_TIMEOUT_S = 240.0


def run_demo(directory: Path, calls: int, keep_running: bool) -> None:
    """Run the story; with `keep_running`, leave everything up until Ctrl-C."""
    console = Console()
    console.rule("[bold]Plumbline demo[/bold]: SQLite, bundled vLLM simulator, embedded worker")
    with DemoStack(directory) as stack:
        assert stack.simulator is not None
        console.print(f"simulated vLLM 0.32 backend   {stack.simulator.base_url}")
        console.print(f"gateway                       {stack.gateway_url}")
        console.print("worker                        embedded (in-process broker and beat)")
        console.print(f"alert webhook receiver        {stack.inbox.url}")
        key = stack.issue_key("legal")

        console.rule("1. Product traffic through the gateway")
        summary = asyncio.run(send_traffic(stack.gateway_url, key, calls))
        console.print(
            f"sent {summary.calls} calls with the official OpenAI SDK "
            f"({summary.streamed} streamed, {summary.failed} failed); "
            "the client changed only base_url and api_key"
        )
        time.sleep(0.5)  # the log sink writes in batches every few milliseconds
        console.print(usage_table(stack.gateway_url, key))
        near_tie(stack.gateway_url, key, console)

        console.rule("2. A stability suite, run by the worker on its schedule")
        engine = create_db_engine(stack.database_url)
        sessions = make_session_factory(engine)
        try:
            suite_id = stability_step.schedule_suite(sessions)
            console.print("suite `contracts`: 3 questions x 4 wordings x 5 samples, every 20 s")
            run_id = stability_step.follow_first_run(sessions, suite_id, RUN_TIMEOUT_S)
            stability_step.show_report(sessions, run_id, console)
        finally:
            engine.dispose()

        console.rule("3. The alert, as the team's webhook received it")
        alert = stability_step.wait_for_alert(stack.inbox, 60)
        stability_step.show_alert(alert, stack.inbox.url, console)
        live_agreement(stack.gateway_url, key, console)

        console.rule("4. On-call")
        console.print(f"dashboard:  {stack.gateway_url}/dashboard   (log in with a key below)")
        console.print(f"team key (legal):  {key}")
        console.print(f"admin key:         {stack.admin_key}")
        console.print(
            f"read API:   {stack.gateway_url}/api/calls    metrics: {stack.gateway_url}/metrics"
        )
        if keep_running:
            console.print(
                "\n[bold]Everything keeps running (the suite every 20 s); Ctrl-C stops it.[/bold]"
            )
            try:
                while True:
                    time.sleep(1)
            except KeyboardInterrupt:
                pass
    console.rule("demo finished")
