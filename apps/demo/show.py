"""Terminal views for the demo: usage by feature, and one call's near tie in its logprobs."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table

from plumbline.blocking_http import BlockingHttp, Reply

# The demo's read API answers are small; a bound keeps a wrong URL from filling memory.
MAX_ANSWER_BYTES = 64 << 20


def usage_table(base_url: str, key: str) -> Table:
    """GET /api/usage as a table."""
    report = _get(f"{base_url}/api/usage", key).json()
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
    page = _get(f"{base_url}/api/calls", key, {"feature": "contracts", "limit": 200}).json()["data"]
    candidates = [c for c in page if c["logprob_min_margin"] is not None]
    if not candidates:
        return
    call = min(candidates, key=lambda c: c["logprob_min_margin"])
    detail: dict[str, Any] = _get(f"{base_url}/api/calls/{call['id']}", key).json()
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
    response = _get(f"{base_url}/api/stability/live", key)
    if response.status != 200:
        return
    rows = response.json().get("data") or []
    for row in rows:
        console.print(
            f"live traffic, feature {row['feature']}: {row['samples']} sampled production calls "
            f"re-asked by the worker ({row['resamples_answered']} answers), "
            f"{row['agreement']:.0%} agreed with the original answer"
        )


def _get(url: str, key: str, params: dict[str, str | int] | None = None) -> Reply:
    """One GET of the gateway's read API with `key`."""
    with BlockingHttp() as http:
        return http.request(
            "GET",
            url,
            headers={"Authorization": f"Bearer {key}"},
            params=params,
            timeout_s=30,
            read_limit=MAX_ANSWER_BYTES,
        )
