"""StabilityCollector: eval agreement, alerts and live agreement as Prometheus gauges.

Read from the database at scrape time and cached (`stability_metrics_ttl_s`, 15 s by default),
so a busy Prometheus does not turn into a query per scrape; a database error serves the last
figures rather than failing the whole /metrics page.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from evals.live_sampling.repository import agreement_by_feature
from gateway.stability import metric_queries as queries

log = logging.getLogger(__name__)
LIVE_WINDOW = timedelta(hours=24)
ACTIVE = ("firing", "acknowledged")


class StabilityCollector(Collector):
    """The stability families, rebuilt at most once per `ttl_s`."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        ttl_s: float,
        feature_label: Callable[[str], str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._ttl_s = ttl_s
        self._feature_label = feature_label
        self._clock = clock
        self._lock = threading.Lock()
        self._families: list[GaugeMetricFamily] = []
        self._read_at: float | None = None

    def describe(self) -> Iterable[GaugeMetricFamily]:
        """No families up front: registering must not query the database."""
        return []

    def collect(self) -> Iterable[GaugeMetricFamily]:
        """The cached families, refreshed when older than the TTL."""
        with self._lock:
            now = self._clock()
            if self._read_at is None or now - self._read_at >= self._ttl_s:
                try:
                    with self._sessions() as session:
                        self._families = self._read(session)
                except SQLAlchemyError as error:
                    log.warning("stability metrics: database unavailable (%s)", error)
                self._read_at = now
            return list(self._families)

    def _read(self, session: Session) -> list[GaugeMetricFamily]:
        suite_labels = ["suite", "team", "model"]
        point = GaugeMetricFamily(
            "plumbline_eval_agreement", "Agreement of the latest scored run", labels=suite_labels
        )
        lower = GaugeMetricFamily(
            "plumbline_eval_agreement_lower",
            "Lower 95% bound of that agreement",
            labels=suite_labels,
        )
        upper = GaugeMetricFamily(
            "plumbline_eval_agreement_upper",
            "Upper 95% bound of that agreement",
            labels=suite_labels,
        )
        threshold = GaugeMetricFamily(
            "plumbline_eval_threshold",
            "The suite's agreement threshold (alert rules compare against it)",
            labels=["suite", "team"],
        )
        last = GaugeMetricFamily(
            "plumbline_eval_last_run_timestamp_seconds",
            "When the latest scored run finished",
            labels=["suite", "team"],
        )
        runs = queries.latest_runs(session)
        for run in runs:
            labels = [run.suite, run.team, run.model]
            for family, key in (
                (point, "agreement"),
                (lower, "agreement_lower"),
                (upper, "agreement_upper"),
            ):
                value = run.summary.get(key)
                if isinstance(value, int | float):
                    family.add_metric(labels, float(value))
            if isinstance(run.summary.get("threshold"), int | float):
                threshold.add_metric([run.suite, run.team], float(run.summary["threshold"]))
            if run.finished_at is not None:
                last.add_metric([run.suite, run.team], run.finished_at.timestamp())
        questions = GaugeMetricFamily(
            "plumbline_eval_question_agreement",
            "Agreement of each critical question in the latest scored run",
            labels=["suite", "team", "question"],
        )
        by_id = {run.run_id: run for run in runs}
        for run_id, question, agreement in queries.critical_results(session, list(by_id)):
            questions.add_metric([by_id[run_id].suite, by_id[run_id].team, question], agreement)
        firing = GaugeMetricFamily(
            "plumbline_alerts_firing",
            "1 while an alert rule of the suite fires (acknowledged or not)",
            labels=["suite", "team", "rule"],
        )
        for suite, team, state in queries.alert_states(session):
            for rule, values in sorted((state.get("rules") or {}).items()):
                firing.add_metric(
                    [suite, team, rule], 1.0 if values.get("status") in ACTIVE else 0.0
                )
        live = GaugeMetricFamily(
            "plumbline_live_agreement",
            "Share of resampled answers agreeing with the original production answer (24 h)",
            labels=["feature"],
        )
        since = datetime.now(UTC) - LIVE_WINDOW
        folded: dict[str, list[tuple[int, float]]] = {}
        for feature, samples, agreement, _ in agreement_by_feature(session, since):
            folded.setdefault(self._feature_label(feature), []).append((samples, agreement))
        for label, parts in sorted(folded.items()):
            total = sum(n for n, _ in parts)
            live.add_metric([label], sum(n * a for n, a in parts) / total)
        return [point, lower, upper, threshold, last, questions, firing, live]
