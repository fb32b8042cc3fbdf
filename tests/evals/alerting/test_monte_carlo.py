"""Monte Carlo: the default suite rule's false alarms at 95% and detection at 85% agreement."""

from __future__ import annotations

from evals.alerting import AlertPolicy, QuestionPopulation, suite_fire_rate

POLICY = AlertPolicy()
HEALTHY = QuestionPopulation(0.95)
DEGRADED = QuestionPopulation(0.85)


def _holds(questions: int, suites: int, seed: int) -> tuple[bool, float, float]:
    false_alarms = suite_fire_rate(POLICY, HEALTHY, questions=questions, suites=suites, seed=seed)
    detection = suite_fire_rate(POLICY, DEGRADED, questions=questions, suites=suites, seed=seed + 1)
    return false_alarms <= 0.01 and detection >= 0.95, false_alarms, detection


def test_standard_suite_meets_the_alerting_targets() -> None:
    holds, false_alarms, detection = _holds(200, suites=2000, seed=1)
    print(f"200 x 20 x 5: fires {false_alarms:.2%} at 95% agreement, {detection:.2%} at 85%")
    assert false_alarms <= 0.01
    assert detection >= 0.95
    assert holds


def test_smallest_suite_that_still_meets_the_targets() -> None:
    # Bisection over the number of questions (20 paraphrases x 5 samples each), seeded per size.
    results: dict[int, tuple[bool, float, float]] = {}

    def holds(questions: int) -> bool:
        results[questions] = _holds(questions, suites=1000, seed=questions)
        return results[questions][0]

    low, high = 20, 200
    assert holds(high)
    assert not holds(low)
    while high - low > 10:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    _, false_alarms, detection = results[high]
    print(f"smallest suite: {high} questions x 20 x 5 ({false_alarms:.2%} / {detection:.2%})")
    assert 50 < high < 200
    assert results[low][2] < 0.95 <= detection
