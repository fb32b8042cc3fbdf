"""Reports of a scored run: rich terminal view, self-contained HTML, CSV and Parquet."""

from evals.report.export import TABLES, ExportFormat, export_run, read_table, run_tables
from evals.report.html_report import render_html
from evals.report.svg import horizontal_bars
from evals.report.terminal import print_report, render_terminal

__all__ = [
    "TABLES",
    "ExportFormat",
    "export_run",
    "horizontal_bars",
    "print_report",
    "read_table",
    "render_html",
    "render_terminal",
    "run_tables",
]
