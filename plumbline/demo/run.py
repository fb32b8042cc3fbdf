"""The demo script: start the stack, send traffic, show what Plumbline recorded."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rich.console import Console

from plumbline.demo.show import near_tie, usage_table
from plumbline.demo.stack import DemoStack
from plumbline.demo.traffic import send_traffic


def run_demo(directory: Path, calls: int, keep_running: bool) -> None:
    """Run the demo end to end; with `keep_running`, leave the stack up until Ctrl-C."""
    console = Console()
    console.rule("[bold]Plumbline demo[/bold] (embedded: SQLite + bundled vLLM simulator)")
    with DemoStack(directory) as stack:
        assert stack.simulator is not None
        console.print(f"simulated vLLM 0.32 backend  {stack.simulator.base_url}")
        console.print(f"gateway                      {stack.gateway_url}")
        key = stack.issue_key("legal")
        admin = stack.issue_key("platform", admin=True)
        summary = asyncio.run(send_traffic(stack.gateway_url, key, calls))
        console.print(
            f"sent {summary.calls} calls with the official OpenAI SDK "
            f"({summary.streamed} streamed, {summary.failed} failed); only base_url and key changed"
        )
        time.sleep(0.5)  # the log sink writes in batches every few milliseconds
        console.print(usage_table(stack.gateway_url, key))
        near_tie(stack.gateway_url, key, console)
        console.print(
            f"\nread API: {stack.gateway_url}/api/calls   metrics: {stack.gateway_url}/metrics"
        )
        console.print(f"team key (legal): {key}\nadmin key:        {admin}")
        if keep_running:
            console.print("\n[bold]Running; press Ctrl-C to stop.[/bold]")
            try:
                while True:
                    time.sleep(1)
            except KeyboardInterrupt:
                pass
    console.rule("demo finished")
