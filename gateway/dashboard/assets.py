"""The page's static files, read once when the app is built, with content types and ETags."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

STATIC_DIR = Path(__file__).resolve().parent / "static"
CONTENT_TYPES = MappingProxyType(
    {
        ".js": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8",
        ".html": "text/html; charset=utf-8",
    }
)
BUILD_MARK = "{{build}}"


@dataclass(frozen=True, slots=True)
class Asset:
    """One file as served: bytes, content type and a strong ETag."""

    body: bytes
    content_type: str
    etag: str


@dataclass(frozen=True, slots=True)
class DashboardBundle:
    """index.html (with the build id in its asset URLs) and the files it loads, by name."""

    build: str
    index: Asset
    assets: Mapping[str, Asset]


def _asset(body: bytes, suffix: str) -> Asset:
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    return Asset(body, CONTENT_TYPES[suffix], etag)


def load_bundle(directory: Path = STATIC_DIR) -> DashboardBundle:
    """Read the static files; the build id is a hash of them all, so URLs change with content."""
    files = {
        path.name: path.read_bytes()
        for path in sorted(directory.iterdir())
        if path.is_file() and path.suffix in (".js", ".css")
    }
    digest = hashlib.sha256()
    for name, body in files.items():
        digest.update(name.encode() + b"\0" + body + b"\0")
    build = digest.hexdigest()[:16]
    template = (directory / "index.html").read_text(encoding="utf-8")
    index = _asset(template.replace(BUILD_MARK, build).encode(), ".html")
    assets = {name: _asset(body, Path(name).suffix) for name, body in files.items()}
    return DashboardBundle(build, index, MappingProxyType(assets))
