"""Append a dated result section to docs/benchmarks.md under a per-benchmark marker."""

from __future__ import annotations

from pathlib import Path

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
