"""Score a whole run: per-question table, question-clustered suite agreement, change vs baseline."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from evals.divergence import DivergenceReport
from evals.scoring.compare import RunComparison, compare_runs
from evals.scoring.questions import score_questions
from evals.scoring.repeatability import repeatability
from evals.scoring.samples import prepare_samples
from evals.scoring.schema import PARAPHRASE_DTYPES, QUESTION_DTYPES, conform
from evals.scoring.statistics import Estimate, cluster_bootstrap_estimate, cluster_wilson_estimate

IntervalMethod = Literal["cluster_wilson", "cluster_bootstrap"]


@dataclass(frozen=True, slots=True)
class RunInfo:
    """Which suite and run a score belongs to, and the settings that shape its reading."""

    suite: str
    run_id: str
    model: str = ""
    threshold: float = 0.90
    greedy: bool = False
    logprobs_mode: str | None = None
    created_at: str | None = None


@dataclass(frozen=True, slots=True)
class ScoringOptions:
    """Knobs of the statistics; the defaults are the documented behaviour."""

    confidence: float = 0.95
    interval_method: IntervalMethod = "cluster_wilson"
    bootstrap_samples: int = 4000
    seed: int = 0
    context_fraction: float = 0.95
    compare_alpha: float = 0.05
    min_effect: float = 0.02


@dataclass(frozen=True)
class RunScore:
    """Everything scored about one run."""

    info: RunInfo
    questions: pd.DataFrame
    paraphrases: pd.DataFrame
    agreement: Estimate
    pairwise_agreement: float
    all_agree_share: float
    accuracy: float | None
    parse_failure_rate: float
    n_samples: int
    comparison: RunComparison | None = None
    divergences: Mapping[str, DivergenceReport] = field(default_factory=dict)

    @property
    def n_questions(self) -> int:
        """How many questions were scored."""
        return len(self.questions)

    def worst_questions(self, n: int = 10) -> pd.DataFrame:
        """The n questions with the lowest agreement (ties: most parse failures first)."""
        ordered = self.questions.sort_values(
            ["agreement", "parse_failures", "question_id"], ascending=[True, False, True]
        )
        return ordered.head(n).reset_index(drop=True)

    @property
    def context_flagged(self) -> list[str]:
        """Questions whose prompt or answer hit a length limit."""
        return [str(q) for q in self.questions.loc[self.questions["context_flag"], "question_id"]]

    def summary(self) -> dict[str, Any]:
        """Run-level figures as one flat JSON-ready record."""
        comparison = self.comparison
        return {
            "suite": self.info.suite,
            "run_id": self.info.run_id,
            "model": self.info.model,
            "threshold": self.info.threshold,
            "n_questions": self.n_questions,
            "n_samples": self.n_samples,
            "agreement": self.agreement.point,
            "agreement_lower": self.agreement.lower,
            "agreement_upper": self.agreement.upper,
            "interval_method": self.agreement.method,
            "pairwise_agreement": self.pairwise_agreement,
            "all_agree_share": self.all_agree_share,
            "accuracy": self.accuracy,
            "parse_failure_rate": self.parse_failure_rate,
            "context_flagged": len(self.context_flagged),
            "baseline_run_id": comparison.baseline_run_id if comparison else None,
            "delta": comparison.delta if comparison else None,
            "delta_lower": comparison.lower if comparison else None,
            "delta_upper": comparison.upper if comparison else None,
            "delta_p_value": comparison.p_value if comparison else None,
            "change_verdict": comparison.verdict.value if comparison else None,
        }


def score_run(
    samples: pd.DataFrame,
    info: RunInfo,
    *,
    expected_keys: Mapping[str, str | None] | None = None,
    critical: Collection[str] = (),
    divergences: Mapping[str, DivergenceReport] | None = None,
    paraphrase_divergences: Mapping[tuple[str, int], DivergenceReport] | None = None,
    baseline: pd.DataFrame | None = None,
    baseline_run_id: str | None = None,
    options: ScoringOptions = ScoringOptions(),
) -> RunScore:
    """Score a run's sample frame (see `evals.scoring.samples` for its columns).

    `baseline` is a previous run's question table (`RunScore.questions`) for the paired change.
    `paraphrase_divergences` holds, for greedy runs, the first divergent token among the samples
    of each (question, paraphrase) whose samples disagree; without it the question's own
    divergence stands in for each such paraphrase.
    """
    frame = prepare_samples(samples)
    if frame.empty:
        raise ValueError("cannot score a run without samples")
    questions, paraphrases = score_questions(
        frame,
        expected_keys=expected_keys,
        critical=critical,
        confidence=options.confidence,
        context_fraction=options.context_fraction,
    )
    questions = conform(
        add_divergence_columns(
            questions,
            divergences or {},
            greedy=info.greedy,
            paraphrases=paraphrases,
            paraphrase_divergences=paraphrase_divergences,
        ),
        QUESTION_DTYPES,
    )
    paraphrases = conform(paraphrases, PARAPHRASE_DTYPES)
    if options.interval_method == "cluster_bootstrap":
        agreement = cluster_bootstrap_estimate(
            questions["agreement"].tolist(),
            options.confidence,
            options.bootstrap_samples,
            options.seed,
        )
    else:
        agreement = cluster_wilson_estimate(
            questions["modal_count"].tolist(), questions["n_samples"].tolist(), options.confidence
        )
    comparison = None
    if baseline is not None:
        comparison = compare_runs(
            baseline,
            questions,
            baseline_run_id=baseline_run_id,
            alpha=options.compare_alpha,
            min_effect=options.min_effect,
            confidence=options.confidence,
        )
    accuracy = questions["accuracy"].dropna()
    return RunScore(
        info=info,
        questions=questions,
        paraphrases=paraphrases,
        agreement=agreement,
        pairwise_agreement=float(questions["pairwise_agreement"].mean()),
        all_agree_share=float((questions["n_answers"] == 1).mean()),
        accuracy=float(accuracy.mean()) if len(accuracy) else None,
        parse_failure_rate=float(frame["answer_key"].isna().mean()),
        n_samples=len(frame),
        comparison=comparison,
        divergences=dict(divergences or {}),
    )


def add_divergence_columns(
    questions: pd.DataFrame,
    divergences: Mapping[str, DivergenceReport],
    *,
    greedy: bool,
    paraphrases: pd.DataFrame | None = None,
    paraphrase_divergences: Mapping[tuple[str, int], DivergenceReport] | None = None,
) -> pd.DataFrame:
    """Attach each question's first-divergence summary, repeatability label and flags."""
    unstable = _unstable_paraphrases(paraphrases) if greedy else {}
    rows = []
    for record in questions.to_dict("records"):
        question = str(record["question_id"])
        report = divergences.get(question)
        label = None
        if greedy:
            reports = [
                (paraphrase_divergences or {}).get((question, index))
                if paraphrase_divergences is not None
                else report
                for index in unstable.get(question, [])
            ]
            label = repeatability(reports).value
        rows.append(
            {
                "divergence_position": report.position if report else None,
                "divergence_margin": report.margin if report else None,
                "divergence_verdict": report.verdict.value if report else None,
                "divergence_explanation": report.explanation() if report else None,
                "repeatability": label,
                "flags": _flags(record, report),
            }
        )
    extra = pd.DataFrame(rows, index=questions.index)
    return pd.concat([questions, extra], axis=1)


def _unstable_paraphrases(paraphrases: pd.DataFrame | None) -> dict[str, list[int]]:
    """Per question, the paraphrases whose own samples gave more than one outcome."""
    found: dict[str, list[int]] = {}
    if paraphrases is None or paraphrases.empty:
        return found
    split = paraphrases[paraphrases["modal_share"] < 1.0]
    for question, index in zip(split["question_id"], split["paraphrase_index"], strict=True):
        found.setdefault(str(question), []).append(int(index))
    return found


def _flags(record: Mapping[Hashable, Any], report: DivergenceReport | None) -> str | None:
    flags = [
        name
        for name, on in (
            ("critical", record["critical"]),
            ("context", record["context_flag"]),
            ("parse_failures", record["parse_failures"] > 0),
            ("paraphrase_breaks", record["paraphrases_breaking"] > 0),
            ("modal_tie", record["modal_tie"]),
            ("near_tie", report is not None and report.near_tie),
        )
        if on
    ]
    return ",".join(flags) or None
