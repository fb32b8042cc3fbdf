"""Targets a scenario reports against: the figure, the bound, and whether it was met."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """One target: what it asks, what was measured, met or missed."""

    target: str
    measured: str
    met: bool | None  # None: not measured in this run

    @property
    def mark(self) -> str:
        """met / missed / not measured."""
        return "not measured" if self.met is None else ("met" if self.met else "**missed**")


def at_most(value: float, bound: float) -> bool | None:
    """value <= bound, None when the value is missing."""
    return None if math.isnan(value) else value <= bound


def at_least(value: float, bound: float) -> bool | None:
    """value >= bound, None when the value is missing."""
    return None if math.isnan(value) else value >= bound


def verdict_table(verdicts: list[Verdict]) -> list[str]:
    """Markdown lines of a targets table."""
    lines = ["| target | measured | verdict |", "| --- | --- | --- |"]
    lines += [f"| {v.target} | {v.measured} | {v.mark} |" for v in verdicts]
    return lines
