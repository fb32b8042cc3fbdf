"""Wait until a gateway's log sink has written every record handed to it (read from /metrics).

The proxy hands a call's record to the sink before its event loop takes the next request, so
once /metrics answers, every call already answered is counted as submitted.
"""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support.waiting import wait_until


def sink_records(base_url: str) -> dict[str, float]:
    """The sink's record counters by outcome (submitted, written, spooled, ...)."""
    text = httpx.get(f"{base_url}/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        if family.name == "plumbline_sink_records":
            return {s.labels["outcome"]: s.value for s in family.samples}
    return {}


def wait_until_sink_written(base_url: str, timeout: float = 30.0) -> None:
    """Return once the sink has written every record submitted so far."""

    def written() -> bool:
        records = sink_records(base_url)
        return bool(records) and records["submitted"] == records["written"]

    wait_until(written, timeout=timeout, what="the log sink writing every call")
