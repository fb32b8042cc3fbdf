"""Terminal views for the demo: usage by feature, and one call's near tie in its logprobs."""

from __future__ import annotations

import math
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table


def usage_table(base_url: str, key: str) -> Table:
    """GET /api/usage as a table."""
    report = httpx.get(
        f"{base_url}/api/usage", headers={"Authorization": f"Bearer {key}"}, timeout=30
    ).json()
    table = Table(title="Usage by feature (GET /api/usage)")
    for column in (
        "feature",
        "calls",
        "errors",
        "tokens in",
        "tokens out",
        "cost $",
        "TTFT p50 ms",
        "ITL p50 ms",
    ):
        table.add_column(column, justify="right" if column != "feature" else "left")
    for row in report["data"]:
        table.add_row(
            str(row["feature"]),
            str(row["calls"]),
            str(row["errors"]),
            str(row["prompt_tokens"]),
            str(row["completion_tokens"]),
            f"{row['input_cost'] + row['output_cost']:.6f}",
            _ms(row["ttft_p50_ms"]),
            _ms(row["itl_p50_ms"]),
        )
    return table


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def near_tie(base_url: str, key: str, console: Console) -> None:
    """Show the recorded call with the smallest top-1/top-2 margin, token by token."""
    headers = {"Authorization": f"Bearer {key}"}
    page = httpx.get(
        f"{base_url}/api/calls",
        params={"feature": "contracts", "limit": 200},
        headers=headers,
        timeout=30,
    ).json()["data"]
    candidates = [c for c in page if c["logprob_min_margin"] is not None]
    if not candidates:
        return
    call = min(candidates, key=lambda c: c["logprob_min_margin"])
    detail: dict[str, Any] = httpx.get(
        f"{base_url}/api/calls/{call['id']}", headers=headers, timeout=30
    ).json()
    entries = detail["logprobs"]["choices"]["0"]
    worst = min(
        range(len(entries)),
        key=lambda i: _margin(entries[i]["top_logprobs"]),
    )
    # The end-of-sequence token is part of the logprobs but never of the answer's text.
    text = "".join(e["token"] for e in entries if e["token"] != "</s>")
    console.print(f"\nCall {call['id']} answered: [bold]{text.strip()}[/bold]")
    console.print(
        f"The answer hinged on token {worst} ({entries[worst]['token']!r}); "
        "top alternatives the gateway recorded there:"
    )
    for alt in sorted(entries[worst]["top_logprobs"], key=lambda a: -a["logprob"]):
        p = math.exp(alt["logprob"])
        console.print(f"  {alt['token']!r:>12}  p={p:.2f}  {'█' * round(p * 40)}")


def _margin(top: list[dict[str, Any]]) -> float:
    values = sorted((math.exp(a["logprob"]) for a in top), reverse=True)
    return values[0] - values[1] if len(values) > 1 else 1.0


def live_agreement(base_url: str, key: str, console: Console) -> None:
    """Agreement measured on resampled production calls, per feature."""
    response = httpx.get(
        f"{base_url}/api/stability/live", headers={"Authorization": f"Bearer {key}"}, timeout=30
    )
    if response.status_code != 200:
        return
    rows = response.json().get("data") or []
    for row in rows:
        console.print(
            f"live traffic, feature {row['feature']}: {row['samples']} sampled production calls "
            f"re-asked by the worker ({row['resamples_answered']} answers), "
            f"{row['agreement']:.0%} agreed with the original answer"
        )
