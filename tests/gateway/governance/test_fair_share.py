"""Fair share: the model's product calls in flight divided among the active teams."""

from __future__ import annotations

import pytest

from gateway.governance.fair_share import TeamLoad


def _load(**teams: int) -> TeamLoad:
    load = TeamLoad()
    for number, calls in enumerate(teams.values()):
        for _ in range(calls):
            load.enter(number, 1.0)
    return load


def test_a_team_alone_is_always_within_its_share() -> None:
    check = _load(a=40).check(0, 1.0)
    assert (check.team_calls, check.total_calls, check.share) == (41, 41, 41)
    assert not check.over


def test_the_asking_team_counts_as_active() -> None:
    load = _load(a=5)
    newcomer = load.check(7, 1.0)
    assert (newcomer.team_calls, newcomer.share, newcomer.over) == (1, 3.0, False)
    hog = load.check(0, 1.0)
    assert (hog.team_calls, hog.share, hog.over) == (6, 6.0, False)


def test_a_team_over_an_equal_share_is_over() -> None:
    load = _load(a=5, b=1)
    assert load.check(0, 1.0).over  # 6 of 7, share 3.5
    assert not load.check(1, 1.0).over  # 2 of 7


def test_weights_divide_the_share() -> None:
    load = TeamLoad()
    for _ in range(5):
        load.enter(0, 3.0)
    load.enter(1, 1.0)
    # 6 of 7 calls, weight 3 of 4: share 5.25.
    check = load.check(0, 3.0)
    assert check.share == pytest.approx(5.25)
    assert check.over


def test_teams_leave_when_their_calls_end() -> None:
    load = _load(a=2, b=1)
    load.leave(1)
    load.leave(1)  # once more than it had: no negative count
    assert load.total == 2
    assert load.check(0, 1.0).share == 3.0
    load.leave(9)  # a team never seen
    assert load.total == 2
