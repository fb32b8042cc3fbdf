"""Product calls in flight per team on one model, in this process, and each team's fair share."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ShareCheck:
    """A team's calls in flight with the one asking, against its share of the model's."""

    team_calls: int
    total_calls: int
    share: float

    @property
    def over(self) -> bool:
        """Whether admitting the call would put the team above its share."""
        return self.team_calls > self.share


class TeamLoad:
    """Calls in flight by team on one model; fair share divides them among the active teams.

    Counted per gateway process (each replica, each `--workers` worker, keeps its own): with
    several, each one divides what passes through it.
    """

    def __init__(self) -> None:
        # team id -> [calls in flight, weight]; a team leaves once it has none.
        self._teams: dict[int | None, list[float]] = {}
        # Kept as calls come and go, so a check costs the same however many teams are active.
        self.total = 0
        self._weights = 0.0

    def check(self, team: int | None, weight: float) -> ShareCheck:
        """The team's share if its call were admitted now (the asking team counts as active).

        Share = all calls in flight, this one included, times the team's weight over the sum
        of the active teams' weights.
        """
        entry = self._teams.get(team)
        mine = (entry[0] if entry else 0) + 1
        total = self.total + 1
        weights = self._weights - (entry[1] if entry else 0.0) + weight
        return ShareCheck(int(mine), total, total * weight / weights)

    def enter(self, team: int | None, weight: float) -> None:
        """A call of `team` was admitted."""
        entry = self._teams.get(team)
        if entry is None:
            entry = self._teams[team] = [0, weight]
            self._weights += weight
        entry[0] += 1
        self.total += 1

    def leave(self, team: int | None) -> None:
        """A call of `team` ended."""
        entry = self._teams.get(team)
        if entry is None:
            return
        entry[0] -= 1
        self.total -= 1
        if entry[0] <= 0:
            del self._teams[team]
            # Reset when idle, so float rounding cannot build up over the process's life.
            self._weights = self._weights - entry[1] if self._teams else 0.0
