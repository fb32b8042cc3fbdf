"""Small inline SVG charts (no scripts, no external assets), all text escaped."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

_BAR_HEIGHT = 16
_GAP = 4
_LABEL_WIDTH = 180
_CHART_WIDTH = 360


def horizontal_bars(
    labels: Sequence[str], values: Sequence[float], *, marker: float | None = None, title: str = ""
) -> str:
    """One bar per label (values in [0, 1]) with an optional vertical marker, e.g. the threshold."""
    height = len(labels) * (_BAR_HEIGHT + _GAP) + 24
    width = _LABEL_WIDTH + _CHART_WIDTH + 60
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}">'
    ]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = 20 + i * (_BAR_HEIGHT + _GAP)
        bar = max(0.0, min(1.0, value)) * _CHART_WIDTH
        below = marker is not None and value < marker
        colour = "#c0392b" if below else "#2e86c1"
        parts.append(
            f'<text x="{_LABEL_WIDTH - 6}" y="{y + 12}" text-anchor="end" font-size="11">'
            f"{escape(label[:28])}</text>"
            f'<rect x="{_LABEL_WIDTH}" y="{y}" width="{bar:.1f}" height="{_BAR_HEIGHT}" '
            f'fill="{colour}"/>'
            f'<text x="{_LABEL_WIDTH + bar + 4:.1f}" y="{y + 12}" font-size="11">{value:.2f}</text>'
        )
    if marker is not None:
        x = _LABEL_WIDTH + marker * _CHART_WIDTH
        parts.append(
            f'<line x1="{x:.1f}" y1="14" x2="{x:.1f}" y2="{height}" stroke="#555" '
            f'stroke-dasharray="4 3"/>'
            f'<text x="{x:.1f}" y="11" font-size="10" text-anchor="middle">{marker:.2f}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
