"""Spend in this process's memory: the single-process store, and Redis's fallback."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gateway.governance.budgets.lines import BudgetLine, Overrun

SpendKey = tuple[str, int, str, str]  # (scope, owner, period kind, period name)


def spend_key(line: BudgetLine) -> SpendKey:
    """Where a line's spend is kept."""
    return (line.scope, line.owner, line.period.kind, line.period.name)


def refuses(spent: int, held: int, amount: int, limit: int) -> bool:
    """Whether a reservation of `amount` does not fit (a spent budget refuses even a free call)."""
    return spent + held >= limit or spent + held + amount > limit


class MemoryBudgets:
    """Spent and held micro-units per budget and period, and the soft notices already sent."""

    def __init__(self) -> None:
        self._spend: dict[SpendKey, list[int]] = {}  # [spent, held]
        self._noticed: set[SpendKey] = set()
        self._expires: dict[SpendKey, int] = {}

    def _entry(self, line: BudgetLine) -> list[int]:
        key = spend_key(line)
        entry = self._spend.get(key)
        if entry is None:
            entry = self._spend[key] = [0, 0]
            self._expires[key] = line.period.expire_at_ms
        return entry

    def reserve(self, lines: Sequence[BudgetLine], amount: int) -> Overrun | None:
        """Hold `amount` on every line, or on none and say which budget refused."""
        entries = [self._entry(line) for line in lines]
        for line, (spent, held) in zip(lines, entries, strict=True):
            if refuses(spent, held, amount, line.limit):
                return Overrun(line, spent, held)
        for entry in entries:
            entry[1] += amount
        return None

    def settle(self, lines: Sequence[BudgetLine], held: int, cost: int) -> list[tuple[int, bool]]:
        """Release `held` and charge `cost` on every line: each one's spend, and whether this
        call was the first to reach its soft level."""
        answer = []
        for line in lines:
            entry = self._entry(line)
            entry[1] = max(0, entry[1] - held)
            entry[0] += cost
            key = spend_key(line)
            reached = entry[0] >= line.soft and key not in self._noticed
            if reached:
                self._noticed.add(key)
            answer.append((entry[0], reached))
        return answer

    def spent(self, line: BudgetLine) -> tuple[int, int]:
        """(spent, held) on a line now."""
        entry = self._spend.get(spend_key(line))
        return (entry[0], entry[1]) if entry else (0, 0)

    def forget_before(self, now: datetime) -> None:
        """Drop the spend of periods that ended (and settled) before `now`."""
        cutoff = int(now.timestamp() * 1000)
        for key in [k for k, ends in self._expires.items() if ends <= cutoff]:
            self._spend.pop(key, None)
            self._expires.pop(key, None)
            self._noticed.discard(key)
