"""Counts of hostile inputs tried per target and what came back, for docs/reliability.md."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

REPORT_ENV = "PLUMBLINE_HOSTILE_REPORT"
ERROR_FIELDS = {"message", "type", "param", "code"}


@dataclass
class Tally:
    """Inputs tried and statuses seen per target; problems found (must stay empty)."""

    statuses: dict[str, Counter[int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def count(self, target: str, status: int) -> None:
        """Count one input and the status it got."""
        self.statuses.setdefault(target, Counter())[status] += 1

    def check(self, target: str, response: httpx.Response, sent: Any = None) -> None:
        """Count a response; note a server error or an error body not in OpenAI's shape."""
        self.count(target, response.status_code)
        if response.status_code >= 500:
            self.problems.append(
                f"{target}: {response.status_code} {response.text[:300]} <- {sent!r:.300}"
            )
        if response.status_code >= 400 and not _openai_shaped(response):
            self.problems.append(
                f"{target}: not OpenAI-shaped {response.text[:300]} <- {sent!r:.300}"
            )

    def tried(self, target: str) -> int:
        """Inputs sent to a target."""
        return sum(self.statuses.get(target, Counter()).values())

    def summary(self) -> dict[str, Any]:
        """JSON figures per target."""
        return {
            target: {
                "inputs": sum(counts.values()),
                "server_errors": sum(n for s, n in counts.items() if s >= 500),
                "statuses": {str(s): n for s, n in sorted(counts.items())},
            }
            for target, counts in sorted(self.statuses.items())
        }

    def write(self, name: str) -> None:
        """Merge this tally into the report file named by $PLUMBLINE_HOSTILE_REPORT, if set."""
        path = os.environ.get(REPORT_ENV)
        if not path:
            return
        report = Path(path)
        current = orjson.loads(report.read_bytes()) if report.exists() else {}
        current[name] = self.summary()
        report.write_bytes(orjson.dumps(current, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def _openai_shaped(response: httpx.Response) -> bool:
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return (
        isinstance(error, dict)
        and set(error) == ERROR_FIELDS
        and error["code"] == response.status_code
    )


def examples(default: int) -> int:
    """Examples per strategy: $PLUMBLINE_FUZZ_EXAMPLES, else the quick default."""
    return int(os.environ.get("PLUMBLINE_FUZZ_EXAMPLES", default))
