"""Append a dated result section to docs/benchmarks.md under a per-benchmark marker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "benchmarks.md"


def record_section(title: str, slug: str, section: str, doc: Path = DOC) -> None:
    """Insert `section` newest-first below the `slug` marker, creating the heading if missing."""
    marker = f"<!-- {slug}-results: newest first, appended by bench/ -->"
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    if marker not in text:
        text = text.rstrip("\n") + f"\n\n## {title}\n\n{marker}\n"
    head, _, tail = text.partition(marker)
    older = tail.strip("\n")
    doc.write_text(f"{head}{marker}\n\n{section.rstrip()}\n" + (f"\n{older}\n" if older else ""))


def publish(title: str, slug: str, section: str, args: Any) -> str:
    """Print a scenario's section and record it in args.doc unless --no-record; returns it."""
    print(section)
    if not args.no_record:
        record_section(title, slug, section, doc=Path(args.doc))
    return section
