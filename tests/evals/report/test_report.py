"""Report renderers: rich terminal view, HTML that parses and escapes, CSV/Parquet round trips."""

from __future__ import annotations

import io
import math
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from evals.divergence import SampleTrace, TokenStep, TopLogprob, first_divergence
from evals.report import export_run, read_table, render_html, render_terminal
from evals.scoring import RunInfo, RunScore, score_run
from tests.evals.synthetic_runs import sample_frame, uniform


@pytest.fixture
def score() -> RunScore:
    answers = {
        "cap": uniform({"12 month": 46, "24 month": 41, "6 month": 13}),
        "<script>alert(1)</script>": uniform({"a & b": 100}),
        "law": uniform({"england": 97, None: 3}),
        "[bold]markup[/bold]": uniform({"[red]x[/red]": 100}),
    }
    tops = tuple(
        TopLogprob(t, math.log(p)) for t, p in ((" 12", 0.46), (" 24", 0.41), (" 6", 0.13))
    )

    def trace(token: str, answer: str) -> SampleTrace:
        return SampleTrace(
            answer,
            (
                TokenStep("The cap is", -0.1),
                TokenStep(token, dict((t.token, t.logprob) for t in tops)[token], tops),
            ),
        )

    divergence = first_divergence([trace(" 12", "12 month")] * 3 + [trace(" 24", "24 month")] * 2)
    assert divergence is not None
    baseline = score_run(
        sample_frame({"cap": uniform({"12 month": 100}), "law": uniform({"england": 100})}),
        RunInfo("contracts", "r0"),
    )
    return score_run(
        sample_frame(answers, prompt_tokens={"cap": 32_000}, max_model_len={"cap": 32_768}),
        RunInfo("contracts", "r1", model="llama", threshold=0.9),
        expected_keys={"cap": "12 month"},
        critical={"cap"},
        divergences={"cap": divergence},
        baseline=baseline.questions,
        baseline_run_id="r0",
    )


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        assert not any(name in {"src", "href"} for name, _ in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_is_self_contained_parses_and_escapes(score: RunScore) -> None:
    html = render_html(score)
    parser = _Collector()
    parser.feed(html)
    parser.close()
    assert "script" not in parser.tags
    assert "<script>alert(1)</script>" in "".join(parser.text)
    assert parser.tags.count("svg") == 2
    assert (
        "first divergence after &quot;The cap is&quot;: "
        "&quot; 12&quot; p=0.46 vs &quot; 24&quot; p=0.41 (near tie)" in html
    )
    assert "a &amp; b" in html


def test_terminal_view_shows_table_bars_and_divergence(score: RunScore) -> None:
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(render_terminal(score))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "contracts / r1" in out
    assert f"agreement {score.agreement.point:.3f}" in out
    assert "12 month" in out
    assert "critical,context" in out
    assert "\u2588" in out
    assert 'first divergence after "The cap is"' in out
    assert "raw_logprobs" in out
    assert "change vs r0" in out
    assert "[bold]markup[/bold]" in out
    assert "[red]x[/red]" in out


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_exports_round_trip(score: RunScore, tmp_path: Path, fmt: str) -> None:
    written = export_run(score, tmp_path, formats=[fmt])  # type: ignore[list-item]
    assert sorted(p.name for p in written) == sorted(
        f"{t}.{fmt}" for t in ("questions", "paraphrases", "run")
    )
    pd.testing.assert_frame_equal(read_table(tmp_path / f"questions.{fmt}"), score.questions)
    pd.testing.assert_frame_equal(read_table(tmp_path / f"paraphrases.{fmt}"), score.paraphrases)
    run = read_table(tmp_path / f"run.{fmt}")
    assert run.loc[0, "agreement"] == pytest.approx(score.agreement.point)
    assert run.loc[0, "change_verdict"] == score.summary()["change_verdict"]
