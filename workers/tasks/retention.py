"""Retention task: beat ticks it hourly; it drops expired partitions or deletes expired rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from evals.transaction import in_transaction
from gateway.retention.service import apply_retention
from workers.app import named_task, runtime_of


@named_task("retention.apply")
def apply(self: Any) -> dict[str, Any]:
    """Remove every call row past its retention; what was removed is in the audit log."""
    runtime = runtime_of(self.app)
    report = in_transaction(runtime.sessions(), apply_retention, datetime.now(UTC))
    return report.as_dict()
