"""`plumbline eval`: import suites, review paraphrases, run suites, report runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from apps.cli.eval_context import database, fail, run_service
from apps.cli.eval_paraphrase_cmd import paraphrases_app
from apps.cli.eval_run_cmd import run_command

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

eval_app = typer.Typer(no_args_is_help=True, help="Answer-stability evals.")
eval_app.add_typer(paraphrases_app, name="paraphrases")
eval_app.command("run")(run_command)
ReportFormat = Literal["terminal", "html", "csv", "parquet"]


@eval_app.command("import")
def import_(
    file: Annotated[
        Path, typer.Argument(help="Suite YAML (or .json)", exists=True, dir_okay=False)
    ],
) -> None:
    """Create or update a suite from a file; question ids keep their stored rows."""
    from evals.suite import SuiteError
    from evals.suites.importer import import_suite, parse_suite

    text = file.read_text(encoding="utf-8")
    fmt: Literal["yaml", "json"] = "json" if file.suffix.lower() == ".json" else "yaml"
    try:
        suite = parse_suite(text, fmt)
    except SuiteError as error:
        fail(f"{file} is not a valid suite:\n" + "\n".join(f"  {p}" for p in error.problems), 2)
    with database() as (_, sessions):
        done = run_service(
            sessions, lambda s: import_suite(s, suite, source_yaml=text if fmt == "yaml" else None)
        )
    verb = "created" if done.created else f"updated to revision {done.revision}"
    typer.echo(f"suite {done.name} (team {done.team}, id {done.suite_id}) {verb}")
    for label, keys in (
        ("added", done.added),
        ("changed", done.changed),
        ("retired", done.retired),
    ):
        if keys:
            typer.echo(f"  {label}: {', '.join(keys)}")
    if done.stale_paraphrases:
        typer.echo(
            f"  {done.stale_paraphrases} generated paraphrases are stale (their question changed); "
            f"run `plumbline eval paraphrases generate {done.name}`"
        )


@eval_app.command("suites")
def suites() -> None:
    """List suites with their paraphrase review state."""
    from evals.suites.listing import suite_views

    with database() as (_, sessions):
        views = run_service(sessions, lambda s: suite_views(s, team_id=None))
    for view in views:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(view.paraphrases.items())) or "none"
        typer.echo(
            f"{view.id:>4}  {view.team}/{view.name}  model {view.model}  rev {view.revision}  "
            f"{len(view.questions)} questions  paraphrases: {counts}"
        )


@eval_app.command("runs")
def runs(
    suite: Annotated[str | None, typer.Argument(help="Suite name or id")] = None,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 20,
) -> None:
    """List runs, newest first."""
    from evals.runs.listing import run_views
    from evals.suites.lookup import find_suite

    def work(session: Session) -> list[str]:
        suite_id = find_suite(session, suite, team_id=None).id if suite else None
        lines = []
        for view in run_views(session, team_id=None, suite_id=suite_id, limit=limit):
            figure = view.summary.get("agreement") if view.summary else None
            shown = f"agreement {figure:.3f}" if isinstance(figure, float) else ""
            lines.append(f"{view.id:>6}  {view.suite:<24} {view.status:<10} {shown}")
        return lines

    with database() as (_, sessions):
        lines = run_service(sessions, work)
    for line in lines:
        typer.echo(line)
    if not lines:
        typer.echo("no runs", err=True)


@eval_app.command("report")
def report(
    run_id: Annotated[int, typer.Argument(help="Run id (see `plumbline eval runs`)")],
    format: Annotated[ReportFormat, typer.Option("--format", help="Output format")] = "terminal",
    out: Annotated[
        Path | None, typer.Option(help="File (html) or directory (csv, parquet)")
    ] = None,
) -> None:
    """Show a scored run in the terminal, or write it as HTML, CSV or Parquet."""
    from apps.cli.eval_run_cmd import print_run
    from evals.report import export_run, render_html
    from evals.runs.stored_score import load_run_score

    with database() as (_, sessions):
        score = run_service(sessions, lambda s: load_run_score(s, run_id, team_id=None))
    if format == "terminal":
        print_run(score)
        return
    if format == "html":
        path = out or Path(f"run-{run_id}.html")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_html(score), encoding="utf-8")
        typer.echo(f"wrote {path}")
        return
    written = export_run(score, out or Path(f"run-{run_id}"), [format])
    for path in written:
        typer.echo(f"wrote {path}")


def register(app: typer.Typer) -> None:
    """Add the eval command group to the CLI."""
    app.add_typer(eval_app, name="eval")
