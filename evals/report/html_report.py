"""A self-contained HTML report of a scored run: inline CSS and SVG, every text escaped."""

from __future__ import annotations

import math
from html import escape

from evals.report.svg import horizontal_bars
from evals.scoring import RunScore

_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:24px;color:#222}"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 6px}"
    "th{background:#f4f4f4}.bad{color:#c0392b;font-weight:600}.muted{color:#777}"
)


def render_html(score: RunScore, *, max_questions: int = 200) -> str:
    """The whole report as one HTML document."""
    info = score.info
    worst = score.worst_questions(max_questions)
    agreement = score.agreement
    below = agreement.upper < info.threshold
    headline = (
        f"agreement {agreement.point:.3f} [{agreement.lower:.3f}, {agreement.upper:.3f}] "
        f"({escape(agreement.method)}), threshold {info.threshold:.2f}"
    )
    sections = [
        f"<h1>{escape(info.suite)} \u2014 run {escape(info.run_id)}</h1>",
        f'<p class="{"bad" if below else ""}">{headline}</p>',
        f'<p class="muted">model {escape(info.model)}; {score.n_questions} questions, '
        f"{score.n_samples} samples; parse failures {score.parse_failure_rate:.1%}</p>",
        _comparison(score),
        "<h2>Agreement per question (lowest first)</h2>",
        horizontal_bars(
            [str(q) for q in worst["question_id"]],
            [float(a) for a in worst["agreement"]],
            marker=info.threshold,
            title="agreement per question",
        ),
        "<h2>Questions</h2>",
        _question_table(score, max_questions),
        _divergences(score),
    ]
    body = "\n".join(s for s in sections if s)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(info.suite)} {escape(info.run_id)}</title><style>{_STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


def _comparison(score: RunScore) -> str:
    c = score.comparison
    if c is None:
        return ""
    return (
        f"<p>change vs {escape(str(c.baseline_run_id))}: {c.delta:+.3f} "
        f"[{c.lower:+.3f}, {c.upper:+.3f}], p={c.p_value:.3g}, {escape(c.verdict.value)}; "
        f"modal answer changed on {c.modal_changed} questions</p>"
    )


def _question_table(score: RunScore, limit: int) -> str:
    names = ("question", "agreement", "95% interval", "modal answer", "parse failures", "flags")
    header = "<tr>" + "".join(f"<th>{n}</th>" for n in names) + "</tr>"
    rows = []
    for row in score.worst_questions(limit).to_dict("records"):
        below = row["agreement_upper"] < score.info.threshold
        rows.append(
            f"<tr><td>{escape(str(row['question_id']))}</td>"
            f'<td class="{"bad" if below else ""}">{row["agreement"]:.2f}</td>'
            f"<td>[{row['agreement_lower']:.2f}, {row['agreement_upper']:.2f}]</td>"
            f"<td>{escape(_text(row['modal_answer']))}</td><td>{row['parse_failures']}</td>"
            f"<td>{escape(_text(row['flags']))}</td></tr>"
        )
    return f"<table>{header}{''.join(rows)}</table>"


def _divergences(score: RunScore) -> str:
    if not score.divergences:
        return ""
    parts = [f"<h2>First divergent tokens ({escape(_modes(score))})</h2>"]
    for question_id, report in sorted(score.divergences.items()):
        branches = report.branches[:5]
        parts.append(f"<h3>{escape(question_id)}</h3><p>{escape(report.explanation())}</p>")
        parts.append(
            horizontal_bars(
                [repr(b.token) for b in branches],
                [b.probability or 0.0 for b in branches],
                title=f"distribution at the first divergent token of {question_id}",
            )
        )
    return "\n".join(parts)


def _modes(score: RunScore) -> str:
    return ", ".join(sorted({r.logprobs_mode for r in score.divergences.values()}))


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return "" if str(value) == "<NA>" else str(value)
