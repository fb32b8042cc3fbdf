"""A terminal view of a scored run with rich: questions table, agreement bars, divergent tokens."""

from __future__ import annotations

import math

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from evals.scoring import RunScore

_BAR_WIDTH = 30


def render_terminal(score: RunScore, *, max_questions: int = 30) -> Group:
    """Everything the terminal view shows, as one rich renderable."""
    info = score.info
    a = score.agreement
    style = "bold red" if a.upper < info.threshold else "bold green"
    header = Text.assemble(
        (f"{info.suite} / {info.run_id}  ", "bold"),
        (f"agreement {a.point:.3f} [{a.lower:.3f}, {a.upper:.3f}]", style),
        f"  threshold {info.threshold:.2f}  questions {score.n_questions}",
        f"  samples {score.n_samples}",
    )
    parts: list[RenderableType] = [header]
    if score.comparison is not None:
        c = score.comparison
        parts.append(
            Text(
                f"change vs {c.baseline_run_id}: {c.delta:+.3f} [{c.lower:+.3f}, {c.upper:+.3f}] "
                f"p={c.p_value:.3g} {c.verdict.value}"
            )
        )
    parts += [
        _questions_table(score, max_questions),
        _bars(score, max_questions),
        *_divergences(score),
    ]
    return Group(*parts)


def print_report(score: RunScore, console: Console | None = None) -> None:
    """Print the terminal view."""
    (console or Console()).print(render_terminal(score))


def _questions_table(score: RunScore, limit: int) -> Table:
    table = Table(title="Questions (lowest agreement first)")
    for column in ("question", "agreement", "95% interval", "modal answer", "parse fail", "flags"):
        table.add_column(column)
    for row in score.worst_questions(limit).to_dict("records"):
        below = row["agreement_upper"] < score.info.threshold
        # Text, not str: answers and ids are data and must never be read as rich markup.
        table.add_row(
            Text(str(row["question_id"])),
            Text(f"{row['agreement']:.2f}", style="red" if below else ""),
            Text(f"[{row['agreement_lower']:.2f}, {row['agreement_upper']:.2f}]"),
            Text(_text(row["modal_answer"])),
            Text(str(row["parse_failures"])),
            Text(_text(row["flags"])),
        )
    return table


def _bars(score: RunScore, limit: int) -> Table:
    table = Table(title="Agreement per question", show_header=False, box=None)
    for row in score.worst_questions(limit).to_dict("records"):
        filled = round(float(row["agreement"]) * _BAR_WIDTH)
        colour = "red" if row["agreement_upper"] < score.info.threshold else "green"
        bar = Text("\u2588" * filled, style=colour) + Text("\u2591" * (_BAR_WIDTH - filled))
        table.add_row(Text(str(row["question_id"])), bar, Text(f"{row['agreement']:.2f}"))
    return table


def _divergences(score: RunScore) -> list[RenderableType]:
    parts: list[RenderableType] = []
    for question_id, report in sorted(score.divergences.items()):
        parts.append(Text(f"{question_id}: {report.explanation()} [{report.logprobs_mode}]"))
        table = Table(show_header=False, box=None)
        for branch in report.branches[:5]:
            p = branch.probability or 0.0
            answers = ", ".join(
                f"{k if k is not None else 'parse failure'} x{n}" for k, n in branch.answers
            )
            table.add_row(
                Text(repr(branch.token)),
                Text("\u2588" * round(p * _BAR_WIDTH)),
                Text(f"{p:.2f}"),
                Text(answers),
            )
        parts.append(table)
    return parts


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return "" if str(value) == "<NA>" else str(value)
